"""End-to-end: permission asks with no host to answer (DEC-EOF-2).

With text input (``-p``) there is no control channel, and after input EOF
the host can no longer answer: the PermissionRequest hooks alone decide, a
pass-through or no hook denies saying no permission channel is open, and
every hook event is written before the final ``idle`` (WIRE-004).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    Record,
    encode,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)

ALLOW = """echo '{"decision":"allow"}'"""
NO_CHANNEL = "no permission channel is open"
HOOK_EVENTS = ("hook_started", "hook_progress", "hook_response")


def _setup(home: Path, tmp_path: Path, name: str) -> Path:
    """A scripted profile whose first turn writes ``name``; returns the cwd."""
    turns = [
        {"steps": [{"tool_use": {"name": "Write", "input": {"file_path": name, "content": "x"}}}]},
        {"steps": [{"text": "done"}]},
    ]
    script = write_script(home / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def _hook_settings(command: str) -> str:
    hook = {"type": "command", "command": command}
    return json.dumps({"hooks": {"PermissionRequest": [{"matcher": "Write", "hooks": [hook]}]}})


def _hook_events_precede_idle(records: list[Record]) -> None:
    kinds = [r.get("subtype") for r in records]
    last_idle = max(i for i, r in enumerate(records) if r.get("state") == "idle")
    assert last_idle == len(records) - 1, "idle is the last record (WIRE-004)"
    assert "hook_response" in kinds
    assert all(i < last_idle for i, k in enumerate(kinds) if k in HOOK_EVENTS)


def test_print_mode_with_an_allowing_hook_runs_the_tool(home: Path, tmp_path: Path) -> None:
    work = _setup(home, tmp_path, "p.txt")
    proc = run_once(
        ["-p", "write it", "--settings", _hook_settings(ALLOW)], b"", home=home, cwd=work
    )
    assert proc.returncode == 0, proc.stderr
    assert (work / "p.txt").read_text() == "x"
    assert proc.stdout.decode().strip() == "done"


@pytest.mark.parametrize(
    ("hook", "reason"),
    [
        ("true", NO_CHANNEL),
        ("exit 1", f"permission hook failed; {NO_CHANNEL}"),
        ("echo 'not today' >&2; exit 2", "not today"),
        (None, NO_CHANNEL),
    ],
    ids=["pass-through", "hook-error", "hook-deny", "no-hook"],
)
def test_print_mode_without_a_decisive_allow_denies_and_sends_no_request(
    home: Path, tmp_path: Path, hook: str | None, reason: str
) -> None:
    work = _setup(home, tmp_path, "n.txt")
    settings = ["--settings", _hook_settings(hook)] if hook is not None else []
    proc = run_once(
        ["-p", "write it", "--output-format", "stream-json", *settings],
        b"",
        home=home,
        cwd=work,
    )
    records = records_of(proc.stdout)
    assert not (work / "n.txt").exists()
    assert not [r for r in records if r["type"] == "control_request"]
    (tool_result,) = [
        block
        for r in records
        if r["type"] == "user"
        for block in r["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert tool_result["is_error"] is True and reason in tool_result["content"]
    (result,) = [r for r in records if r["type"] == "result"]
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Write"]
    if hook is not None:
        _hook_events_precede_idle(records)


def test_duplex_input_closed_after_the_prompt_hook_decides_before_idle(
    home: Path, tmp_path: Path
) -> None:
    """Input ends right after the prompt, so the ask always meets a closed
    host leg: the hook allows, its events come before the final idle, and
    no traceback reaches stderr, run after run (the race this guards against
    lost 3 runs of 5)."""
    work = _setup(home, tmp_path, "d.txt")
    args = [*DUPLEX, "--settings", _hook_settings(ALLOW)]
    for run in range(10):
        target = work / "d.txt"
        target.unlink(missing_ok=True)
        proc = run_once(args, encode(user("write it")), home=home, cwd=work)
        stderr = proc.stderr.decode()
        assert proc.returncode == 0, f"run {run}: {stderr}"
        assert "Traceback" not in stderr and "ActorDeadError" not in stderr, f"run {run}"
        records = records_of(proc.stdout)
        _hook_events_precede_idle(records)
        (result,) = [r for r in records if r["type"] == "result"]
        assert result["subtype"] == "success" and result["permission_denials"] == []
        assert target.read_text() == "x", f"run {run}"
