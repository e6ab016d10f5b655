"""Claude Code's command-line options, for the ones agentx does not take (DEC-CLI-4, DEC-CLI-5).

:data:`CLAUDE_CODE_FLAGS` names every option of Claude Code 2.1.332's CLI
reference and every option the pinned Agent SDKs pass (Python
``claude-agent-sdk`` 0.2.189, TypeScript ``@anthropic-ai/claude-agent-sdk``
0.3.334), each with what it does there. An option agentx does not accept
(:data:`agentx.config.cli_flags.FLAGS` decides) is refused with a sentence
that names it and says agentx does not support it, never a bare "unknown
option" (:func:`refusal`); an option agentx accepts is simply parsed.
"""

from __future__ import annotations

from typing import Final

#: Option -> what it does in Claude Code (the refusal sentence quotes it).
CLAUDE_CODE_FLAGS: Final[dict[str, str]] = {
    # Claude Code's CLI reference.
    "--add-dir": "more working directories",
    "--advisor": "a server-side advisor model",
    "--agent": "the agent for the session",
    "--agents": "subagents defined in JSON",
    "--allow-dangerously-skip-permissions": "bypassPermissions in the mode cycle",
    "--allowedTools": "tools allowed without asking",
    "--allowed-tools": "tools allowed without asking",
    "--append-system-prompt": "text appended to the system prompt",
    "--append-system-prompt-file": "a file appended to the system prompt",
    "--append-subagent-system-prompt": "text appended to every subagent's system prompt",
    "--bare": "a minimal session without hooks, skills, plugins or memory",
    "--betas": "beta headers for API requests",
    "--channels": "channel notifications",
    "--chrome": "the Chrome browser integration",
    "--no-chrome": "no Chrome browser integration",
    "--continue": "resume the newest session of this directory",
    "-c": "resume the newest session of this directory",
    "--dangerously-skip-permissions": "bypass every permission check",
    "--debug": "debug logging",
    "-d": "debug logging",
    "--debug-file": "debug logging to a file",
    "--debug-to-stderr": "debug logging to stderr",
    "--disable-slash-commands": "no slash commands",
    "--disallowedTools": "tools denied",
    "--disallowed-tools": "tools denied",
    "--effort": "the reasoning effort",
    "--exclude-dynamic-system-prompt-sections": "a system prompt without per-session sections",
    "--fallback-model": "a model to fall back to when the first is overloaded",
    "--file": "files downloaded at start",
    "--fork-session": "a new session id when resuming",
    "--from-pr": "a session linked to a pull request",
    "--ide": "connecting to an IDE",
    "--include-hook-events": "hook lifecycle events in the output",
    "--include-partial-messages": "partial message events",
    "--init": "the Setup hooks before the session",
    "--init-only": "the Setup hooks, then exit",
    "--input-format": "the input format",
    "--json-schema": "structured output validated against a JSON schema",
    "--maintenance": "the Setup hooks for maintenance",
    "--max-budget-usd": "a spending limit",
    "--max-thinking-tokens": "a thinking token budget",
    "--max-turns": "a limit on agentic turns",
    "--mcp-config": "MCP servers from JSON files or strings",
    "--mcp-debug": "MCP debug output",
    "--model": "the model",
    "--name": "a display name for the session",
    "-n": "a display name for the session",
    "--no-session-persistence": "no session saved to disk",
    "--output-format": "the output format",
    "--permission-mode": "the starting permission mode",
    "--permission-prompt-tool": "an MCP tool that answers permission prompts",
    "--plugin-dir": "plugins loaded from a directory",
    "--print": "print mode",
    "-p": "print mode",
    "--remote": "a web session on claude.ai",
    "--remote-control": "Remote Control",
    "--replay-user-messages": "user messages echoed on stdout",
    "--resume": "resume a session",
    "-r": "resume a session",
    "--session-id": "a session id",
    "--setting-sources": "which settings sources load",
    "--settings": "more settings",
    "--strict-mcp-config": "only the MCP servers of --mcp-config",
    "--system-prompt": "the system prompt",
    "--system-prompt-file": "the system prompt from a file",
    "--task-budget": "a token budget for the task",
    "--teleport": "a web session resumed in the terminal",
    "--thinking": "extended thinking on or off",
    "--thinking-display": "how thinking is shown",
    "--tmux": "a tmux session for the worktree",
    "--tools": "which built-in tools are offered",
    "--verbose": "full turn-by-turn output",
    "--version": "the version",
    "-v": "the version",
    "--worktree": "an isolated git worktree",
    "-w": "an isolated git worktree",
    # What the Agent SDKs pass besides the reference's options.
    "--await-initialize": "the session configured by the initialize request",
    "--hard-fail": "failing hard on internal errors",
    "--initialize-fields": "initialize fields given on the command line",
    "--managed-settings": "managed settings",
    "--managed-settings-in-initialize": "managed settings sent in initialize",
    "--no-optional-locks": "no optional git locks",
    "--permission-prompts": "permission prompts over the control channel",
    "--plugin-dir-no-mcp": "plugins without their MCP servers",
    "--porcelain": "stable machine-readable output",
    "--project-config-root": "another root for project configuration",
    "--resume-drops-turn": "a resumed session without its last turn",
    "--resume-session-at": "a session resumed at a given message",
    "--sdk-url": "a remote SDK endpoint",
    "--session-mirror": "transcript entries mirrored to the SDK's session store",
}


def refusal(name: str) -> str | None:
    """The usage line for Claude Code's option ``name`` that agentx does not
    accept, or None when ``name`` is not one of Claude Code's options."""
    what = CLAUDE_CODE_FLAGS.get(name)
    if what is None:
        return None
    return f"{name} ({what} in Claude Code) is not supported by agentx"
