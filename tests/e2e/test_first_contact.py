"""A new user's first minutes with the real ``agentx`` (DECISIONS sections 8
and 9, DEC-CLI-4, DEC-CLI-6): ``--help`` names every flag and command, every
error before the protocol is one sentence and exit 2, ``-p`` with no prompt is
a usage error, and a one-shot run whose result is an error exits 1."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agentx.config.cli_args import build_parser
from agentx.config.cli_flags import COMMANDS
from agentx.config.discovery import USAGE as DISCOVERY_USAGE
from agentx.tools.registry import BUILTIN_NAMES
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    agentx_command,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)

SESSION = "6f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
USAGE_LINE = "usage: agentx [options] [command] [prompt]; agentx --help lists the options"
MISSING_PROMPT = "agentx: a prompt is missing: give it after -p, or on stdin"


def _accepted_flags() -> set[str]:
    """Every option string the parser itself accepts (so the help cannot drift)."""
    parser = build_parser()
    return {name for action in parser._actions for name in action.option_strings}


def test_help_lists_every_accepted_flag_and_command(home: Path) -> None:
    proc = run_once(["--help"], b"", home=home)
    assert proc.returncode == 0 and proc.stderr == b""
    text = proc.stdout.decode()
    assert run_once(["-h"], b"", home=home).stdout == proc.stdout
    # Grouped as ``claude --help`` groups its own.
    headings = [line for line in text.splitlines() if line and not line.startswith(" ")]
    assert headings[0] == "Usage: agentx [options] [command] [prompt]"
    assert [h for h in headings if h.endswith(":")] == ["Arguments:", "Options:", "Commands:"]
    entries = [line.strip() for line in text.splitlines() if line.startswith("  ")]
    flags = _accepted_flags()
    assert len(flags) >= 37
    for flag in sorted(flags):
        rows = [e for e in entries if re.match(rf"(\S+, )*{re.escape(flag)}(,| |$)", e)]
        assert len(rows) == 1, f"{flag} is not listed once in --help"
        _, _, description = rows[0].partition("  ")
        assert description.strip(), f"{flag} has no description"
    for command, _ in COMMANDS:
        (row,) = [e for e in entries if e.startswith(command)]
        assert row[len(command) :].strip()


#: A runnable form of every command ``--help`` lists.
RUNNABLE = {
    "schema": ["schema"],
    "--list-providers": ["--list-providers"],
    "sessions": ["sessions", "list"],
}


def test_help_commands_are_the_runnable_ones() -> None:
    assert {command.split()[0] for command, _ in COMMANDS} == set(RUNNABLE)


@pytest.mark.parametrize("command", sorted(RUNNABLE))
def test_every_command_in_help_runs(home: Path, command: str) -> None:
    proc = run_once(RUNNABLE[command], b"", home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout or command == "sessions"  # an empty store lists nothing


def _resume_corrupt(home: Path, cwd: Path) -> list[str]:
    done = run_once([*DUPLEX, "--session-id", SESSION], encode(user("hi")), home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    (home / "sessions" / SESSION / "header.json").write_text('{"version": 1}')
    return ["-p", "x", "--resume", SESSION]


def _unterminated_auth(home: Path, cwd: Path) -> list[str]:
    (home / "auth.json").write_text('{"version": 2, "providers": [{"id": "a')
    return ["-p", "x"]


def _other_provider(home: Path, cwd: Path) -> list[str]:
    run_once([*DUPLEX, "--session-id", SESSION], encode(user("hi")), home=home, cwd=cwd)
    write_auth(home, [{"id": "other", "type": "scripted", "model": "m"}])
    return ["-p", "x", "--resume", SESSION]


def _argv(*argv: str) -> Callable[[Path, Path], list[str]]:
    return lambda home, cwd: list(argv)


#: (how to set up and the argv, stdin, the one stderr sentence)
ERRORS = [
    pytest.param(
        _argv("--max-turns", "0"),
        b"",
        "agentx: --max-turns must be a whole number of at least 1, not '0'",
        id="max-turns-at-zero",
    ),
    pytest.param(
        _argv("--max-budget-usd=-1"),
        b"",
        "agentx: --max-budget-usd must be a positive number of US dollars, not '-1'",
        id="budget-negative",
    ),
    pytest.param(
        _argv("--output-format", "xml"),
        b"",
        "agentx: --output-format must be one of text, json, stream-json, not 'xml'",
        id="bad-choice",
    ),
    pytest.param(_argv("--bogus"), b"", "agentx: unknown option --bogus", id="unknown"),
    pytest.param(_argv("--provider"), b"", "agentx: --provider needs a value", id="no-value"),
    pytest.param(_argv("--verbose=1"), b"", "agentx: --verbose takes no value", id="switch-value"),
    pytest.param(
        _argv("-p", "x", "--resume", "abc"),
        b"",
        "agentx: --resume: a session id is a UUID in lower case with hyphens, "
        "like 123e4567-e89b-12d3-a456-426614174000",
        id="resume-not-a-uuid",
    ),
    pytest.param(
        _argv("-p", "x", "--session-id", SESSION.upper()),
        b"",
        "agentx: --session-id: a session id is a UUID in lower case with hyphens, "
        "like 123e4567-e89b-12d3-a456-426614174000",
        id="session-id-upper-case",
    ),
    pytest.param(
        _argv("-p", "x", "--resume", SESSION),
        b"",
        "agentx: --resume: no stored session has this id in {home}/sessions",
        id="resume-unknown",
    ),
    pytest.param(
        _resume_corrupt,
        b"",
        f"agentx: --resume: the stored session cannot be read ({{home}}/sessions/{SESSION}/"
        "header.json: session header: wrong members)",
        id="resume-corrupt",
    ),
    pytest.param(
        _other_provider,
        b"",
        "agentx: --resume: the session is bound to another provider (its provider id "
        "differs); resume it with the --provider it was started with",
        id="resume-other-provider",
    ),
    pytest.param(
        _unterminated_auth,
        b"",
        "agentx: auth.json: not valid JSON (Unterminated string starting at line 1 column 37)",
        id="auth-json-unterminated",
    ),
    pytest.param(
        _argv("-p", "x", "--settings", '{"permissions": {"allow": [1]}}'),
        b"",
        "agentx: --settings: permissions.allow must be an array of strings",
        id="settings-value",
    ),
    pytest.param(
        _argv("-p", "x", "--provider", "nope"),
        b"",
        "agentx: --provider: no provider with that id (agentx --list-providers shows them)",
        id="provider-unknown",
    ),
    pytest.param(
        _argv("-p", "x", "--effort", "high"),
        b"",
        "agentx: --effort: the selected provider declares no reasoning efforts",
        id="effort-undeclared",
    ),
    pytest.param(
        _argv("-p", "x", "--system-prompt-file", "/nonexistent/prompt.txt"),
        b"",
        "agentx: --system-prompt-file cannot be read",
        id="system-prompt-file",
    ),
    pytest.param(_argv("-p"), b"", MISSING_PROMPT, id="p-empty-stdin"),
    pytest.param(_argv("--print"), b"", MISSING_PROMPT, id="print-empty-stdin"),
    pytest.param(_argv(), b"", MISSING_PROMPT, id="text-input-empty-stdin"),
    # Whitespace only asks nothing: it is a missing prompt too.
    pytest.param(_argv("-p"), b" \n\t\n", MISSING_PROMPT, id="p-whitespace-stdin"),
    pytest.param(_argv("-p", " \n "), b"", MISSING_PROMPT, id="p-whitespace-prompt"),
    pytest.param(
        _argv("--list-providers", "--bogus"),
        b"",
        "agentx: --bogus is not accepted with --list-providers",
        id="list-providers-grammar",
    ),
]


#: A Python class name (``SessionNotFound``), a private name (``_positive_int``),
#: an exception (``KeyError``) or a traceback: internal names a user never needs.
INTERNAL = re.compile(
    r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b|(?<![\w-])_[a-z]\w*|Error\b|Traceback"
)


@pytest.mark.parametrize(("setup", "stdin", "sentence"), ERRORS)
def test_errors_are_one_sentence_and_exit_2(
    home: Path,
    tmp_path: Path,
    setup: Callable[[Path, Path], list[str]],
    stdin: bytes,
    sentence: str,
) -> None:
    """DECISIONS section 8: exit 2, nothing on stdout, the sentence (and for a
    command-line error the usage line) on stderr, nothing else; no stderr line
    names an internal."""
    argv = setup(home, tmp_path)
    proc = run_once(argv, stdin, home=home, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, b""), proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert lines[0] == sentence.replace("{home}", str(home))
    assert lines[1:] in ([], [USAGE_LINE], [DISCOVERY_USAGE])
    for line in lines:
        # The built-in tools' names are public (WebFetch); nothing else may match.
        public = re.sub("|".join(BUILTIN_NAMES), "", line)
        assert INTERNAL.search(public) is None, line


def test_the_internal_name_pattern_can_fail() -> None:
    for leak in (
        "agentx: --resume: SessionNotFound",
        "agentx: argument --max-turns: invalid _positive_int value: '0'",
        "agentx: KeyError: 'x'",
        "Traceback (most recent call last):",
    ):
        assert INTERNAL.search(leak), leak


def _script(home: Path, turns: list[dict[str, object]]) -> None:
    (home / "s.json").write_text(json.dumps({"version": 1, "turns": turns}))
    write_auth(
        home, [{"id": "s", "type": "scripted", "model": "m", "script": str(home / "s.json")}]
    )


@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_one_shot_error_result_exits_1(home: Path, output: str) -> None:
    """DEC-CLI-6: a one-shot ``-p`` run whose result is an error exits 1."""
    _script(home, [{"steps": [{"error": "server_error"}]}])
    proc = run_once(["-p", "fail", "--output-format", output], b"", home=home)
    assert proc.returncode == 1, proc.stderr
    if output != "text":
        (result,) = [r for r in records_of(proc.stdout) if r["type"] == "result"]
        assert result["is_error"] is True


def test_one_shot_limit_error_exits_1_and_success_exits_0(home: Path) -> None:
    """At the limit (one model request allowed, one made) the result is a
    success, exit 0; one past it is error_max_turns, exit 1."""
    tool = {"tool_use": {"name": "Read", "input": {"file_path": str(home / "s.json")}}}
    _script(home, [{"steps": [{"text": "one"}]}])
    at = run_once(["-p", "x", "--max-turns", "1"], b"", home=home)
    assert (at.returncode, at.stdout) == (0, b"one\n"), at.stderr
    _script(home, [{"steps": [tool]}, {"steps": [{"text": "two"}]}])
    past = run_once(
        ["-p", "x", "--max-turns", "1", "--output-format", "json"],
        b"",
        home=home,
    )
    assert past.returncode == 1, past.stderr
    assert records_of(past.stdout)[-1]["subtype"] == "error_max_turns"


def test_stdin_prompt_that_errors_exits_1(home: Path) -> None:
    _script(home, [{"steps": [{"error": "server_error"}]}])
    proc = run_once(["-p"], b"from stdin", home=home)
    assert proc.returncode == 1 and proc.stdout.startswith(b"Error: ")


def test_duplex_error_result_exits_1_at_the_end_of_input(home: Path) -> None:
    """DEC-CLI-6: in the duplex protocol too, as Claude Code does (the SDKs
    then raise their result error)."""
    _script(home, [{"steps": [{"error": "server_error"}]}])
    proc = run_once(["-p", *DUPLEX], encode(user("fail")), home=home)
    assert proc.returncode == 1, proc.stderr
    (result,) = [r for r in records_of(proc.stdout) if r["type"] == "result"]
    assert result["is_error"] is True


def test_duplex_status_follows_the_last_turn(home: Path) -> None:
    """DEC-CLI-6: a success after an error ends 0; an input-error result,
    which belongs to no model turn, changes nothing."""
    _script(home, [{"steps": [{"error": "server_error"}]}, {"steps": [{"text": "ok"}]}])
    proc = AgentxProcess(DUPLEX, home=home)
    try:
        proc.send(user("fail"), user("fine"))
        proc.until(is_result)
        proc.until(is_result)
        proc.send({"type": "user", "message": {"role": "user", "content": 7}})
        last = proc.until(is_result)[-1]
        assert last["errors"][0].startswith("input_error:")
        proc.close_stdin()
        proc.rest()
        assert proc.wait() == 0, proc.stderr
        assert [r["is_error"] for r in proc.seen if is_result(r)] == [True, False, True]
    finally:
        proc.kill()


TEXT_ANSWERS = [["--version"], ["--version", "--verbose"], ["--help"], ["schema"]]


@pytest.mark.parametrize("args", TEXT_ANSWERS)
def test_a_broken_stdout_is_one_line_and_status_3(home: Path, args: list[str]) -> None:
    """The text answers (``--version``, ``--help``, ``schema``) into a pipe
    whose reader has gone, as ``agentx --version | head -c0`` does: one line
    and status 3, never a BrokenPipeError traceback (DECISIONS section 8)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*agentx_command(), *args],
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            env={**os.environ, "AGENTX_HOME": str(home)},
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 3
    [line] = proc.stderr.decode().splitlines()
    assert re.fullmatch(r"agentx: writing the (version|help|schema) to stdout failed", line)
