"""End-to-end: a model provider that trickles its response cannot hold a turn
past the call's one deadline from connect to last byte (DEC-AUTH-2
``timeout_ms``, DECISIONS section 8).

A loopback server sends the status line and headers, or an event-stream
body, a byte every 20 ms: each byte beats the 300 s idle read timeout, so
only the overall deadline ends the call, and the turn then ends
``error_during_execution`` naming the limit. A provider that is slow but
finishes within the deadline, headers and body trickled a few bytes at a
time, answers as usual. Both streaming clients: Messages API and Chat
Completions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import anthropic_text_stream, openai_text_stream
from tests.fakes.trickle_server import TrickleServer

KEY = "sk-trickle-sentinel-key"
KINDS = ["anthropic", "openai"]
DEADLINE_MS = 1500
#: Far longer than the deadline: a call the deadline does not end fails the run.
RUN_TIMEOUT_S = 60


def _write_auth(home: Path, kind: str, url: str, timeout_ms: int) -> None:
    entry: dict[str, Any] = {
        "id": "remote",
        "type": kind,
        "model": "model-x",
        "endpoint": url.rstrip("/") if kind == "anthropic" else url + "v1",
        "api_key": KEY,
        "timeout_ms": timeout_ms,
    }
    write_auth(home, [entry])


def _turn(home: Path) -> tuple[int, dict[str, Any], bytes, bytes]:
    proc = run_once(DUPLEX, encode(user("hello")), home=home, timeout=RUN_TIMEOUT_S)
    (result,) = [r for r in records_of(proc.stdout) if is_result(r)]
    return proc.returncode, result, proc.stdout, proc.stderr


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_provider_trickling_past_the_deadline_ends_the_turn(
    home: Path, kind: str, where: str
) -> None:
    with TrickleServer(where=where, event_stream=True) as server:  # type: ignore[arg-type]
        _write_auth(home, kind, server.url, DEADLINE_MS)
        code, result, stdout, stderr = _turn(home)
        assert server.connected.is_set()
    assert code == 1  # DEC-CLI-6: the last turn ended in error
    assert result["subtype"] == "error_during_execution"
    assert result["errors"] == [
        f"server_error: provider request exceeded its overall deadline ({DEADLINE_MS} ms)"
    ]
    assert KEY.encode() not in stdout and KEY.encode() not in stderr


def _whole_response(kind: str) -> bytes:
    stream = (
        anthropic_text_stream("slow but sure")
        if kind == "anthropic"
        else (openai_text_stream("slow but sure"))
    )
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    return head + b"".join(stream)


@pytest.mark.parametrize("kind", KINDS)
def test_a_provider_trickling_within_the_deadline_answers(home: Path, kind: str) -> None:
    """Headers and body a few bytes every 5 ms (about a second in all), well
    within a 60 s deadline: the turn succeeds with the whole text."""
    with TrickleServer(response=_whole_response(kind), every=0.005, step=8) as server:
        _write_auth(home, kind, server.url, 60_000)
        code, result, _, _ = _turn(home)
        assert server.connected.is_set()
    assert code == 0
    assert result["subtype"] == "success"
    assert result["result"] == "slow but sure"
