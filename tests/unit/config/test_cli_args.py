"""The command line (DECISIONS section 9, DEC-CLI-1..5)."""

from __future__ import annotations

import re
from typing import Any

import msgspec.structs
import pytest

from agentx.config.cli_args import Options, UsageError, parse_args

DUPLEX = ["--input-format", "stream-json", "--output-format", "stream-json"]


def test_defaults() -> None:
    """DEC-CLI-2: text in, text out, nothing else set."""
    got = msgspec.structs.asdict(parse_args([]))
    got.pop("permission_mode")  # its default belongs to the settings merge (DEC-SET-1)
    assert got == {
        "input_format": "text",
        "output_format": "text",
        "prompt": None,
        "print_mode": False,
        "attach": (),
        "provider": None,
        "settings": None,
        "resume": None,
        "session_id": None,
        "continue_": False,
        "no_session_persistence": False,
        "session_store": None,
        "include_partial_messages": False,
        "include_hook_events": False,
        "replay_user_messages": False,
        "max_turns": None,
        "max_budget_usd": None,
        "verbose": False,
        "log_format": None,
        "log_file": None,
        "debug": False,
        "fork_session": False,
        "control_profile": None,
        "resume_session_at": None,
        "resume_drops_turn": None,
        "session_mirror": False,
        "await_initialize": False,
        "prompt_suggestions": False,
        "post_turn_summaries": False,
        "system_prompt": None,
        "system_prompt_file": None,
        "append_system_prompt": None,
        "exclude_dynamic_sections": False,
        "json_schema": None,
        "agents": None,
        "append_subagent_system_prompt": None,
        "model": None,
        "effort": None,
        "fallback_model": None,
        "thinking": None,
        "max_thinking_tokens": None,
        "thinking_display": None,
        "task_budget": None,
        "betas": (),
        "setting_sources": ("user", "project", "local"),
        "allowed_tools": (),
        "disallowed_tools": (),
        "tools": None,
        "add_dirs": (),
        "mcp_config": (),
        "strict_mcp_config": False,
        "permission_prompt_tool": None,
        "version": False,
        "help": False,
    }


#: (flag, value, Options field, parsed value, extra argv the flag needs)
VALUED: list[tuple[str, str, str, Any, list[str]]] = [
    ("--input-format", "stream-json", "input_format", "stream-json", []),
    ("--output-format", "json", "output_format", "json", []),
    ("--output-format", "stream-json", "output_format", "stream-json", []),
    ("--print", "hello", "prompt", "hello", []),
    ("--provider", "local-openai", "provider", "local-openai", []),
    ("--permission-mode", "acceptEdits", "permission_mode", "acceptEdits", []),
    ("--permission-mode", "bypassPermissions", "permission_mode", "bypassPermissions", []),
    ("--permission-mode", "plan", "permission_mode", "plan", []),
    ("--permission-mode", "default", "permission_mode", "default", []),
    ("--permission-mode", "dontAsk", "permission_mode", "dontAsk", []),
    ("--permission-mode", "auto", "permission_mode", "auto", []),
    ("--settings", '{"model":"m"}', "settings", '{"model":"m"}', []),
    ("--resume", "abc", "resume", "abc", []),
    ("--session-id", "1f0e", "session_id", "1f0e", []),
    ("--max-turns", "1", "max_turns", 1, []),
    ("--max-turns", "25", "max_turns", 25, []),
    ("--max-budget-usd", "0.01", "max_budget_usd", 0.01, []),
    ("--max-budget-usd", "2", "max_budget_usd", 2.0, []),
    ("--control-profile", "extended", "control_profile", "extended", []),
    ("--control-profile", "standalone", "control_profile", "standalone", []),
    ("--system-prompt", "be brief", "system_prompt", "be brief", []),
    ("--system-prompt", "", "system_prompt", "", []),
    ("--system-prompt-file", "p.txt", "system_prompt_file", "p.txt", []),
    ("--append-system-prompt", "more", "append_system_prompt", "more", []),
    ("--model", "gpt-x", "model", "gpt-x", []),
    ("--effort", "high", "effort", "high", []),
    ("--effort", "max", "effort", "max", []),
    ("--model", "sonnet", "model", "sonnet", []),
    ("--fallback-model", "haiku", "fallback_model", "haiku", []),
    ("--thinking", "adaptive", "thinking", "adaptive", []),
    ("--thinking", "enabled", "thinking", "enabled", []),
    ("--thinking", "disabled", "thinking", "disabled", []),
    ("--max-thinking-tokens", "0", "max_thinking_tokens", 0, []),
    ("--max-thinking-tokens", "16000", "max_thinking_tokens", 16000, []),
    ("--thinking-display", "summarized", "thinking_display", "summarized", []),
    ("--task-budget", "1", "task_budget", 1, []),
    ("--betas", "a-1,b-2", "betas", ("a-1", "b-2"), []),
    ("--setting-sources", "user,project", "setting_sources", ("user", "project"), []),
    ("--setting-sources", "local user", "setting_sources", ("local", "user"), []),
    ("--setting-sources", "", "setting_sources", (), []),
    ("--allowedTools", "Read,Bash(ls:*)", "allowed_tools", ("Read", "Bash(ls:*)"), []),
    ("--allowed-tools", "Read", "allowed_tools", ("Read",), []),
    ("--disallowedTools", "Write, Edit", "disallowed_tools", ("Write", "Edit"), []),
    ("--disallowed-tools", "Write", "disallowed_tools", ("Write",), []),
    # DEC-CLI-5: lists split only outside parentheses, as Claude Code reads them.
    (
        "--allowedTools",
        "Bash(git commit:*) Read",
        "allowed_tools",
        ("Bash(git commit:*)", "Read"),
        [],
    ),
    (
        "--allowedTools",
        "Bash(git log *),Bash(git diff *)  Edit",
        "allowed_tools",
        ("Bash(git log *)", "Bash(git diff *)", "Edit"),
        [],
    ),
    ("--disallowedTools", "Bash(rm -rf:*)", "disallowed_tools", ("Bash(rm -rf:*)",), []),
    # An unclosed parenthesis keeps the rest in one item (the rule check refuses it).
    ("--allowedTools", "Bash(git commit, Read", "allowed_tools", ("Bash(git commit, Read",), []),
    ("--tools", "default", "tools", ("default",), []),
    ("-r", "abc", "resume", "abc", []),
    ("--tools", "Read,Glob", "tools", ("Read", "Glob"), []),
    ("--tools", "", "tools", (), []),
    ("--attach", "a.png", "attach", ("a.png",), ["-p", "look"]),
    ("--add-dir", "/tmp/x", "add_dirs", ("/tmp/x",), []),
]


def _valued_params() -> list[Any]:
    params = []
    for flag, value, name, parsed, extra in VALUED:
        for form in ("separate", "equals"):
            argv = [flag, value] if form == "separate" else [f"{flag}={value}"]
            params.append(
                pytest.param(argv + extra, name, parsed, id=f"{flag}={value or 'EMPTY'}-{form}")
            )
    return params


@pytest.mark.parametrize(("argv", "name", "parsed"), _valued_params())
def test_valued_flag(argv: list[str], name: str, parsed: Any) -> None:
    """DEC-CLI-4: ``--flag=value`` and ``--flag value`` are the same."""
    assert getattr(parse_args(argv), name) == parsed


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        pytest.param(["--continue"], "continue_", id="continue"),
        pytest.param(
            ["--include-partial-messages", "--output-format", "stream-json"],
            "include_partial_messages",
            id="include-partial-messages",
        ),
        pytest.param(["--include-hook-events"], "include_hook_events", id="include-hook-events"),
        pytest.param(
            ["--replay-user-messages", "--input-format", "stream-json"],
            "replay_user_messages",
            id="replay-user-messages",
        ),
        pytest.param(["--verbose"], "verbose", id="verbose"),
        pytest.param(
            ["--exclude-dynamic-system-prompt-sections"],
            "exclude_dynamic_sections",
            id="exclude-dynamic-sections",
        ),
        pytest.param(["--debug"], "debug", id="debug"),
        pytest.param(["-d"], "debug", id="debug-short"),
        pytest.param(["-c"], "continue_", id="continue-short"),
        pytest.param(["--prompt-suggestions"], "prompt_suggestions", id="prompt-suggestions"),
        pytest.param(["--post-turn-summaries"], "post_turn_summaries", id="post-turn-summaries"),
        pytest.param(["--version"], "version", id="version"),
        pytest.param(["-v"], "version", id="v"),
        pytest.param(["--help"], "help", id="help"),
        pytest.param(["-h"], "help", id="h"),
        pytest.param(["-p", "x"], "print_mode", id="print-mode"),
    ],
)
def test_switch(argv: list[str], name: str) -> None:
    assert getattr(parse_args(argv), name) is True


def test_repeatable_flags_keep_order() -> None:
    opts = parse_args(
        ["--attach", "a.png", "-p", "hi", "--attach=b.pdf", "--add-dir", "x", "--add-dir=y"]
    )
    assert (opts.attach, opts.add_dirs, opts.prompt) == (("a.png", "b.pdf"), ("x", "y"), "hi")


SINGLE_USE = [
    ["--input-format", "text"],
    ["--output-format", "text"],
    ["--print", "x"],
    ["--provider", "p"],
    ["--permission-mode", "plan"],
    ["--settings", "{}"],
    ["--resume", "r"],
    ["--session-id", "s"],
    ["--continue"],
    ["--include-partial-messages"],
    ["--replay-user-messages"],
    ["--max-turns", "2"],
    ["--max-budget-usd", "1"],
    ["--verbose"],
    ["--control-profile", "extended"],
    ["--prompt-suggestions"],
    ["--post-turn-summaries"],
    ["--system-prompt", "s"],
    ["--system-prompt-file", "f"],
    ["--append-system-prompt", "a"],
    ["--permission-prompt-tool", "stdio"],
    ["--model", "m"],
    ["--effort", "low"],
    ["--setting-sources", "user"],
    ["--allowedTools", "Read"],
    ["--disallowedTools", "Read"],
    ["--tools", "Read"],
    ["--version"],
    ["--help"],
]


@pytest.mark.parametrize("once", SINGLE_USE, ids=[a[0] for a in SINGLE_USE])
def test_repeated_single_use_flag(once: list[str]) -> None:
    """DEC-CLI-4: a second occurrence is a usage error naming the flag."""
    with pytest.raises(UsageError, match=f"^{re.escape(once[0])} may be given only once$"):
        parse_args(once + once)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["-p", "x", "--print=y"], "--print may be given only once", id="p-and-print"),
        pytest.param(
            ["--allowedTools", "a", "--allowed-tools", "b"],
            "--allowed-tools may be given only once",
            id="allowed-tools-aliases",
        ),
        pytest.param(["--version", "-v"], "-v may be given only once", id="version-aliases"),
    ],
)
def test_aliases_share_one_use(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
        parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--frobnicate", "x"],
            "unknown option --frobnicate",
            id="unknown",
        ),
        pytest.param(["--verb"], "unknown option --verb", id="no-abbrev"),
        pytest.param(["--bogus=3"], "unknown option --bogus", id="eq"),
        pytest.param(
            ["--input-format", "xml"],
            "--input-format must be one of text, stream-json, not 'xml'",
            id="bad-input-format",
        ),
        pytest.param(
            ["--output-format=yaml"],
            "--output-format must be one of text, json, stream-json, not 'yaml'",
            id="bad-output",
        ),
        pytest.param(
            ["--permission-mode", "yolo"],
            "--permission-mode must be one of default, acceptEdits, plan, bypassPermissions, "
            "dontAsk, auto, not 'yolo'",
            id="bad-mode",
        ),
        pytest.param(
            ["--permission-prompt-tool", "mcp__x"],
            "--permission-prompt-tool must be \"stdio\" or mcp__<server>__<tool>, not 'mcp__x'",
            id="prompt-tool-not-a-tool",
        ),
        pytest.param(
            ["--permission-prompt-tool", "mcp__srv__"],
            "--permission-prompt-tool must be \"stdio\" or mcp__<server>__<tool>, not 'mcp__srv__'",
            id="prompt-tool-without-tool",
        ),
        pytest.param(
            ["--permission-prompt-tool", "Bash"],
            "--permission-prompt-tool must be \"stdio\" or mcp__<server>__<tool>, not 'Bash'",
            id="prompt-tool-not-mcp",
        ),
        pytest.param(
            ["--control-profile", "full"],
            "--control-profile must be one of standalone, extended, sdk, not 'full'",
            id="bad-prof",
        ),
        pytest.param(
            ["--max-turns", "0"],
            "--max-turns must be a whole number of at least 1, not '0'",
            id="max-turns-0",
        ),
        pytest.param(
            ["--max-turns", "-1"],
            "--max-turns must be a whole number of at least 1, not '-1'",
            id="max-turns-negative",
        ),
        pytest.param(
            ["--max-turns", "1.5"],
            "--max-turns must be a whole number of at least 1, not '1.5'",
            id="max-turns-float",
        ),
        pytest.param(
            ["--max-thinking-tokens", "-1"],
            "--max-thinking-tokens must be a whole number of at least 0, not '-1'",
            id="thinking-tokens-negative",
        ),
        pytest.param(
            ["--task-budget", "0"],
            "--task-budget must be a whole number of at least 1, not '0'",
            id="task-budget-0",
        ),
        pytest.param(
            ["--thinking", "on"],
            "--thinking must be one of adaptive, enabled, disabled, not 'on'",
            id="thinking-mode",
        ),
        pytest.param(
            ["--max-budget-usd", "0"],
            "--max-budget-usd must be a positive number of US dollars, not '0'",
            id="budget-0",
        ),
        pytest.param(
            ["--max-budget-usd=-1"],
            "--max-budget-usd must be a positive number of US dollars, not '-1'",
            id="budget-negative",
        ),
        pytest.param(
            ["--max-budget-usd", "inf"],
            "--max-budget-usd must be a positive number of US dollars, not 'inf'",
            id="budget-inf",
        ),
        pytest.param(
            ["--max-budget-usd", "nan"],
            "--max-budget-usd must be a positive number of US dollars, not 'nan'",
            id="budget-nan",
        ),
        pytest.param(
            ["--max-budget-usd", "x"],
            "--max-budget-usd must be a positive number of US dollars, not 'x'",
            id="budget-word",
        ),
        pytest.param(["--verbose=1"], "--verbose takes no value", id="switch-with-value"),
        pytest.param(["-v=1"], "--version takes no value", id="short-switch-with-value"),
        pytest.param(["--provider"], "--provider needs a value", id="missing-value"),
        pytest.param(["--attach"], "--attach needs a value", id="missing-repeatable-value"),
        pytest.param(
            ["--verbose", "hello", "--verbose"],
            "--verbose may be given only once",
            id="repeat-after-positional",
        ),
        pytest.param(
            ["-p", "hi", "--verbose", "world"],
            "unexpected argument; a prompt goes after -p",
            id="positional-after-flag",
        ),
        pytest.param(
            ["--setting-sources", "user,policy"],
            "--setting-sources takes a list of user, project, local",
            id="bad-setting-source",
        ),
        pytest.param(
            ["--attach", "a.png"], "--attach is only valid with -p PROMPT", id="attach-without-p"
        ),
        pytest.param(
            ["-p", "--attach", "a.png", *DUPLEX],
            "--attach is only valid with -p PROMPT",
            id="attach-with-promptless-print",
        ),
        pytest.param(
            ["-p", "hi", "--input-format", "stream-json"],
            "a -p PROMPT cannot be combined with --input-format stream-json",
            id="prompt-with-stream-json-input",
        ),
        pytest.param(
            ["--include-partial-messages"],
            "--include-partial-messages requires --output-format stream-json",
            id="partial-without-stream-output",
        ),
        pytest.param(
            ["--replay-user-messages", "--output-format", "stream-json"],
            "--replay-user-messages requires --input-format stream-json",
            id="replay-without-stream-input",
        ),
        pytest.param(
            ["--resume", "r", "--continue"],
            "--resume and --continue are exclusive",
            id="resume-and-continue",
        ),
        pytest.param(
            ["--session-id", "0b7c3e52-6f0a-4d0e-9a51-3c2f8e1d4a77", "--continue"],
            "--session-id and --continue are exclusive",
            id="session-id-and-continue",
        ),
        pytest.param(["hello"], "unexpected argument; a prompt goes after -p", id="bare-prompt"),
        pytest.param(
            ["-p", "hi", "extra"], "unexpected argument; a prompt goes after -p", id="two-prompts"
        ),
        pytest.param(
            ["--print", "--", "a", "b"],
            "unexpected argument; a prompt goes after -p",
            id="two-after-terminator",
        ),
    ],
)
def test_usage_errors(argv: list[str], message: str) -> None:
    """DEC-CLI-4: unknown flags, bad values and bad combinations are usage errors
    (exit 2), each one sentence naming the flag as the user spells it."""
    with pytest.raises(UsageError) as info:
        parse_args(argv)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("argv", "prompt", "print_mode", "input_format"),
    [
        pytest.param(["-p", "hi"], "hi", True, "text", id="p-prompt"),
        pytest.param(["--print", "hi"], "hi", True, "text", id="print-prompt"),
        pytest.param(["--print", "--", "-hi"], "-hi", True, "text", id="print-terminator"),
        pytest.param(["-p", "--", "--help"], "--help", True, "text", id="terminator-flag-text"),
        pytest.param(["-p", *DUPLEX], None, True, "stream-json", id="promptless-print-duplex"),
        pytest.param([*DUPLEX, "--print"], None, True, "stream-json", id="print-last"),
        pytest.param(DUPLEX, None, False, "stream-json", id="duplex"),
        pytest.param(["--print"], None, True, "text", id="promptless-print-text"),
    ],
)
def test_print_forms(
    argv: list[str], prompt: str | None, print_mode: bool, input_format: str
) -> None:
    """DEC-CLI-1: ``-p PROMPT`` is one-shot; ``--print`` alone with stream-json is the duplex."""
    opts = parse_args(argv)
    assert (opts.prompt, opts.print_mode, opts.input_format) == (prompt, print_mode, input_format)


def test_claude_code_sdk_command_line() -> None:
    """DEC-CLI-5 / section 12: the argv the Python claude-agent-sdk sends parses as is."""
    opts = parse_args(
        [
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            "",
            "--permission-prompt-tool",
            "stdio",
            "--setting-sources",
            "",
            "--input-format",
            "stream-json",
            "--print",
            "--",
        ]
    )
    assert isinstance(opts, Options)
    assert (opts.input_format, opts.output_format, opts.print_mode, opts.prompt) == (
        "stream-json",
        "stream-json",
        True,
        None,
    )
    assert (opts.system_prompt, opts.setting_sources, opts.verbose) == ("", (), True)


@pytest.mark.parametrize(
    "argv",
    [
        ["--no-session-persistence", "--resume", "6f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"],
        ["--no-session-persistence", "--continue"],
    ],
    ids=["with-resume", "with-continue"],
)
def test_no_session_persistence_cannot_resume(argv: list[str]) -> None:
    with pytest.raises(UsageError):
        parse_args(argv)


def test_no_session_persistence_flag() -> None:
    assert parse_args(["--no-session-persistence"]).no_session_persistence is True
