"""Every option and command agentx accepts (DECISIONS section 9).

:mod:`agentx.config.cli_args` builds both the parser and ``--help`` from
:data:`FLAGS` and :data:`COMMANDS`, so the help cannot leave a flag out.
"""

from __future__ import annotations

from msgspec import Struct


class Flag(Struct, frozen=True):
    """One accepted option: the parser and ``--help`` are both built from
    :data:`FLAGS`, so the help cannot leave a flag out."""

    names: tuple[str, ...]
    help: str
    #: ``None``: a switch; else the value's name in ``--help``.
    value: str | None = None
    choices: tuple[str, ...] = ()
    dest: str | None = None
    repeatable: bool = False


#: Every option, in the order ``claude --help`` lists its counterparts.
FLAGS: tuple[Flag, ...] = (
    # DEC-CLI-5: what Claude Code means by --verbose (full turn-by-turn
    # records), which stream-json output always is; debug lines are --debug's.
    Flag(("--verbose",), "Full turn-by-turn records (what stream-json output always carries)"),
    Flag(("-d", "--debug"), "Log debug lines on stderr, and a traceback on an internal failure"),
    # DECISIONS section 8: where diagnostics go and in which form.
    Flag(
        ("--log-format",),
        'Diagnostic lines: "text" (default) or "json" (one object a line; '
        "default: AGENTX_LOG_FORMAT)",
        value="<format>",
        choices=("text", "json"),
    ),
    Flag(("--log-file",), "Write diagnostic lines to this file instead of stderr", value="<path>"),
    Flag(
        ("-p", "--print"),
        "Run one prompt (else stdin to its end) and exit; with --input-format "
        "stream-json, the duplex protocol",
        value="[prompt]",
    ),
    Flag(
        ("--output-format",),
        'Output format: "text" (default; the answer), "json" (the result) or '
        '"stream-json" (every record)',
        value="<format>",
        choices=("text", "json", "stream-json"),
    ),
    Flag(
        ("--include-partial-messages",),
        "Write stream_event records as the answer arrives (needs --output-format stream-json)",
    ),
    Flag(
        ("--include-hook-events",),
        "Write the hook_started, hook_progress and hook_response records of every hook event",
    ),
    Flag(
        ("--input-format",),
        'Input format: "text" (default; one prompt) or "stream-json" (NDJSON records)',
        value="<format>",
        choices=("text", "stream-json"),
    ),
    Flag(
        ("--replay-user-messages",),
        "Echo each admitted user record on stdout (needs --input-format stream-json)",
    ),
    Flag(
        ("--attach",),
        "Attach a file (image or PDF) to the -p prompt; repeatable",
        value="<path>",
        repeatable=True,
    ),
    Flag(
        ("--allowedTools", "--allowed-tools"),
        'Tool rules allowed without asking, comma- or space-separated: "Read Bash(git:*)"',
        value="<tools...>",
        dest="allowed_tools",
    ),
    Flag(
        ("--tools",),
        'The built-in tools offered, comma- or space-separated ("" offers none)',
        value="<tools...>",
    ),
    Flag(
        ("--disallowedTools", "--disallowed-tools"),
        "Tool rules denied without asking, comma- or space-separated",
        value="<tools...>",
        dest="disallowed_tools",
    ),
    Flag(
        ("--system-prompt",),
        "System prompt for the session (empty: the built-in one)",
        value="<prompt>",
    ),
    Flag(
        ("--system-prompt-file",),
        "Read the system prompt from a file",
        value="<file>",
    ),
    Flag(
        ("--append-system-prompt",),
        "Append text to the system prompt",
        value="<prompt>",
    ),
    Flag(
        ("--exclude-dynamic-system-prompt-sections",),
        "With the built-in system prompt: send its environment block in the first "
        "prompt instead (a system prompt the same for every session)",
    ),
    Flag(
        ("--agents",),
        "Subagent definitions as JSON: an object of name -> "
        "{description, prompt, tools, disallowedTools, model, maxTurns, background}",
        value="<json>",
    ),
    Flag(
        ("--append-subagent-system-prompt",),
        "Append text to every subagent's system prompt",
        value="<prompt>",
    ),
    Flag(
        ("--json-schema",),
        "Structured output: every turn ends with a StructuredOutput call this JSON Schema accepts",
        value="<schema>",
    ),
    Flag(
        ("--permission-mode",),
        'Permission mode: "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk" '
        '(deny instead of asking) or "auto" (acceptEdits, without a classifier)',
        value="<mode>",
        choices=("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"),
    ),
    Flag(
        ("--permission-prompt-tool",),
        'Where permission prompts go: "stdio" (can_use_tool control requests, the '
        "default) or an MCP tool mcp__<server>__<tool>",
        value="<tool>",
    ),
    Flag(
        ("-c", "--continue"),
        "Resume the newest session started in this directory (else start a new one)",
        dest="continue_",
    ),
    Flag(("-r", "--resume"), "Resume a stored session by its id", value="<session-id>"),
    Flag(
        ("--fork-session",),
        "With --resume or --continue: continue a copy under a new id (--session-id names it)",
    ),
    Flag(
        ("--resume-session-at",),
        "With --resume or --continue: load the conversation only up to and including "
        "this message (its uuid)",
        value="<message-uuid>",
    ),
    Flag(
        ("--resume-drops-turn",),
        "With --resume-session-at: the prompt (uuid) whose turn the cut discards; the "
        "resume is refused if the cut would discard anything else",
        value="<prompt-uuid>",
    ),
    Flag(
        ("--session-mirror",),
        "Mirror every transcript entry to the client as transcript_mirror frames "
        "(the Agent SDKs' session_store); needs --output-format stream-json",
    ),
    Flag(
        ("--no-session-persistence",),
        "Keep nothing on disk: no transcript, no resume",
    ),
    Flag(
        ("--session-store",),
        "Where sessions live: a PostgreSQL URL (default: AGENTX_SESSION_STORE, else the files)",
        value="<url>",
    ),
    Flag(
        ("--provider",),
        "The provider profile to use (agentx --list-providers shows them)",
        value="<id>",
    ),
    # -- the model and how it is asked (DEC-CLI-5): one block --------
    Flag(
        ("--model",),
        "The model: an id or alias (sonnet, opus, haiku, default); selects the "
        "provider that serves it",
        value="<model>",
    ),
    Flag(
        ("--fallback-model",),
        "A second model of the same provider, used after repeated overload errors",
        value="<model>",
    ),
    Flag(
        ("--effort",),
        "Reasoning effort: one of the provider's declared efforts (low, medium, high, xhigh, max)",
        value="<level>",
    ),
    Flag(
        ("--thinking",),
        'Extended thinking: "adaptive", "enabled" or "disabled"',
        value="<mode>",
        choices=("adaptive", "enabled", "disabled"),
    ),
    Flag(
        ("--max-thinking-tokens",),
        "Thinking budget in tokens (enables thinking with this budget)",
        value="<tokens>",
    ),
    Flag(
        ("--thinking-display",),
        'How thinking is returned: "summarized" or "omitted"',
        value="<display>",
        choices=("summarized", "omitted"),
    ),
    Flag(
        ("--task-budget",),
        "Token budget the model is told it has for the whole task",
        value="<tokens>",
    ),
    Flag(
        ("--betas",),
        "Beta headers for Anthropic requests, comma- or space-separated",
        value="<betas...>",
    ),
    Flag(("--max-turns",), "Stop a turn after this many model requests", value="<n>"),
    Flag(
        ("--max-budget-usd",),
        "Stop once the known cost passes this many US dollars",
        value="<amount>",
    ),
    Flag(
        ("--settings",),
        "A settings file, or a JSON settings string",
        value="<file-or-json>",
    ),
    Flag(
        ("--mcp-config",),
        'MCP servers: a JSON file or string {"mcpServers": {...}}; repeatable',
        value="<config>",
        repeatable=True,
    ),
    Flag(
        ("--strict-mcp-config",),
        "Only the MCP servers of --mcp-config (none from settings or .mcp.json)",
    ),
    Flag(
        ("--add-dir",),
        "Another directory inside the permission boundary; repeatable",
        value="<directory>",
        repeatable=True,
    ),
    Flag(("--session-id",), "Use this UUID as the new session's id", value="<uuid>"),
    Flag(
        ("--setting-sources",),
        "Which settings files load: a list of user, project, local",
        value="<sources>",
    ),
    Flag(
        ("--control-profile",),
        'Control operations: "standalone" (the default), "extended" (get_settings, stop_task, '
        'MCP) or "sdk" (Claude Agent SDK compatibility; the default under the SDKs)',
        value="<profile>",
        choices=("standalone", "extended", "sdk"),
    ),
    Flag(
        ("--await-initialize",),
        "Hold every prompt until the initialize request (at most 60 s; else exit 2)",
    ),
    Flag(
        ("--prompt-suggestions",),
        "Suggest the likely next prompt after each successful result",
    ),
    Flag(
        ("--post-turn-summaries",),
        "Write a system/post_turn_summary record after each turn",
    ),
    Flag(("-v", "--version"), "Print the version and exit"),
    Flag(("-h", "--help"), "Print this help and exit"),
)

#: Commands: a whole command line of their own, answered before any flag
#: above is parsed (``agentx.cli``).
COMMANDS: tuple[tuple[str, str], ...] = (
    ("schema", "Print the JSON Schema of every stdin and stdout record"),
    (
        "--list-providers [--output-format text|json]",
        "List the configured providers and exit",
    ),
    ("sessions list [--store <url>]", "List the stored sessions"),
    ("sessions copy --from <url> --to <url> [ids...]", "Copy sessions from one store to another"),
)
