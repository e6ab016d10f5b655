"""End-to-end: a Grep pattern can never freeze the host (WIRE-010, DECISIONS section 8).

``(a|aa)+$`` on a long line of ``a`` ending in ``!`` backtracks for hours in
Python's ``re``; agentx's Grep answers it at once. A search that is slow
even for ripgrep (a pattern whose automaton does not fit its cache, on a
16 MiB line) leaves the host answering: an interrupt is acknowledged and
the turn ends, SIGTERM ends the session with 143, and in both cases the rg
child is gone.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.e2e.agentx_process import (
    AgentxProcess,
    control,
    is_control_response,
    is_result,
    scripted_session,
    user,
)

SLOW_PATTERN = "[ab]*a[ab]{25}x"
BYPASS = ("--permission-mode", "bypassPermissions")
#: What the host must answer within while rg is busy (a search alone takes far longer).
PROMPT_S = 10.0


def _grep(pattern: str, **extra: object) -> dict[str, object]:
    return {"tool_use": {"name": "Grep", "input": {"pattern": pattern, **extra}}}


def _ab_file(path: Path) -> None:
    table = bytes(ord("a") + (i & 1) for i in range(256))
    path.write_bytes(os.urandom(16 * 1024 * 1024 - 1).translate(table))


def _rg_running(pattern: str) -> list[int]:
    """Pids of live rg processes searching ``pattern``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().split(") ")[-1][:1]
        except OSError:
            continue
        if pattern.encode() in argv and argv[0].endswith(b"rg") and state != "Z":
            found.append(int(entry))
    return found


def _slow_session(home: Path, processes: list[AgentxProcess]) -> AgentxProcess:
    proc = scripted_session(
        home, [{"steps": [_grep(SLOW_PATTERN)]}, {"steps": [{"text": "after"}]}], processes, *BYPASS
    )
    _ab_file(home.parent / "work" / "ab.txt")
    proc.send(user("search"))
    # The search has run for a second (DEC-TURN-3 progress), and rg with it.
    proc.until(lambda r: r["type"] == "tool_progress")
    assert _rg_running(SLOW_PATTERN)
    return proc


def test_a_catastrophic_backtracking_pattern_is_answered(
    home: Path, processes: list[AgentxProcess]
) -> None:
    turns = [
        {"steps": [_grep("(a|aa)+$", output_mode="content")]},
        {"steps": [{"text": "done"}]},
    ]
    proc = scripted_session(home, turns, processes, *BYPASS)
    work = home.parent / "work"
    (work / "long.txt").write_text("a" * 1_000_000 + "!\n")
    (work / "hit.txt").write_text("aaaa\n")
    proc.send(user("search"))
    records = proc.until(is_result)
    results = [b for r in records if r["type"] == "user" for b in r["message"]["content"]]
    assert len(results) == 1 and not results[0].get("is_error")
    assert results[0]["content"] == f"{work}/hit.txt:1:aaaa"
    assert records[-1]["subtype"] == "success"
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_an_interrupt_during_a_slow_search_is_answered_and_ends_it(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = _slow_session(home, processes)
    proc.send(control("int-1", "interrupt"))
    records = proc.until(is_result, timeout=PROMPT_S)
    assert any(is_control_response("int-1")(r) for r in records)
    assert records[-1]["subtype"] == "error_during_execution"
    assert _rg_running(SLOW_PATTERN) == []
    proc.send(control("ctx-1", "get_context_usage"))  # control still answered
    proc.until(is_control_response("ctx-1"), timeout=PROMPT_S)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error (interrupted)


def test_sigterm_during_a_slow_search_ends_the_session(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = _slow_session(home, processes)
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=PROMPT_S) == 143
    assert _rg_running(SLOW_PATTERN) == []
