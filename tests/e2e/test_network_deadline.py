"""End-to-end: a server that trickles its headers cannot hold a turn or EOF
past one deadline (DECISIONS section 8, DEC-EOF-1).

WebFetch against a loopback server that sends its status line and headers a
byte every 20 ms (each byte well within the 10 s read timeout, so the old
body-only deadline never ended it): the tool result says it timed out after
the 30 s overall deadline, the turn ends with its result, and a session
whose stdin closed right after the prompt exits.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.agentx_process import (
    AgentxProcess,
    allow,
    control,
    is_can_use_tool,
    is_control_response,
    is_result,
    scripted_session,
    user,
)
from tests.fakes.trickle_server import TrickleServer

BYPASS = ("--permission-mode", "bypassPermissions")
TOTAL_TIMEOUT_S = 30.0


def _fetch(url: str) -> dict[str, object]:
    return {"tool_use": {"name": "WebFetch", "input": {"url": url}}}


def _results(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return [
        b
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]  # type: ignore[index]
    ]


def test_a_trickling_server_ends_at_the_deadline_and_eof_does_not_wait_past_it(
    home: Path, processes: list[AgentxProcess]
) -> None:
    with TrickleServer(where="headers") as server:
        proc = scripted_session(
            home,
            [{"steps": [_fetch(server.url)]}, {"steps": [{"text": "after"}]}],
            processes,
            *BYPASS,
        )
        start = time.monotonic()
        proc.send(user("fetch"))
        proc.send(allow(proc.until(is_can_use_tool)[-1]))  # the network ask (WIRE-PERM-004)
        proc.close_stdin()  # DEC-EOF-1: the active turn finishes, then the session ends
        records = proc.rest(timeout=TOTAL_TIMEOUT_S + 15)
        assert proc.wait(timeout=15) == 0
        took = time.monotonic() - start
    assert server.connected.is_set()
    (result,) = _results(records)
    assert result["is_error"] is True
    assert result["content"] == "WebFetch: timed out after 30 s"
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]
    assert took < TOTAL_TIMEOUT_S + 15


def test_an_interrupt_while_headers_trickle_ends_the_turn(
    home: Path, processes: list[AgentxProcess]
) -> None:
    with TrickleServer(where="headers") as server:
        proc = scripted_session(
            home,
            [{"steps": [_fetch(server.url)]}, {"steps": [{"text": "after"}]}],
            processes,
            *BYPASS,
        )
        proc.send(user("fetch"))
        proc.send(allow(proc.until(is_can_use_tool)[-1]))
        assert server.connected.wait(20)
        proc.send(control("int-1", "interrupt"))
        records = proc.until(is_result, timeout=10)
        assert any(is_control_response("int-1")(r) for r in records)
        assert records[-1]["subtype"] == "error_during_execution"
        proc.close_stdin()
        proc.rest()
        assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error
