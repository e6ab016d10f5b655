"""End-to-end: durable sessions, resume and the restart-bound binding (DEC-STORE-1,
WIRE-025, DEC-AUTH-5; scenario 28 second half)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import ProviderServer, Reply, openai_chunk, openai_text_stream, sse


def _openai(home: Path, url: str, **extra: Any) -> None:
    entry = {"id": "remote", "type": "openai", "model": "m", "endpoint": url + "/v1", **extra}
    write_auth(home, [entry])


def test_resume_replays_history_without_running_a_tool_again(home: Path, tmp_path: Path) -> None:
    session = str(uuid.uuid4())
    counter = tmp_path / "count.txt"
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "Bash",
            "arguments": json.dumps({"command": f"echo ran >> {counter}"}),
        },
    }
    tool_stream = (
        openai_chunk({"role": "assistant", "tool_calls": [call]}),
        openai_chunk({}, finish_reason="tool_calls"),
        sse("[DONE]"),
    )
    replies = [
        Reply(chunks=tool_stream),
        Reply(chunks=openai_text_stream("first done")),
        Reply(chunks=openai_text_stream("second done")),
    ]
    bypass = ("--permission-mode", "bypassPermissions")
    with ProviderServer(replies) as server:  # one endpoint: the route binding must match
        _openai(home, server.url)
        first = run_once(
            [*DUPLEX, "--session-id", session, *bypass],
            encode(user("run it")),
            home=home,
            cwd=tmp_path,
        )
        assert first.returncode == 0, first.stderr
        assert records_of(first.stdout)[0]["session_id"] == session
        assert counter.read_text() == "ran\n"
        second = run_once(
            [*DUPLEX, "--resume", session, *bypass],
            encode(user("and now?")),
            home=home,
            cwd=tmp_path,
        )
        requests = list(server.requests)[2:]
    assert second.returncode == 0, second.stderr
    records = records_of(second.stdout)
    assert records[0]["session_id"] == session
    assert [r["result"] for r in records if is_result(r)] == ["second done"]
    assert counter.read_text() == "ran\n"  # the historical Bash call did not run again
    messages = requests[0].body["messages"]
    roles = [m["role"] for m in messages]
    assert roles[-5:] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[-1]["content"] == "and now?"


@pytest.mark.parametrize("changed", ["id", "type", "model", "route"])
def test_scenario_28_resume_with_another_binding_fails_closed(home: Path, changed: str) -> None:
    session = str(uuid.uuid4())
    base = {"id": "p", "type": "openai", "model": "m", "endpoint": "http://127.0.0.1:9/v1"}
    write_auth(home, [base])
    with ProviderServer([Reply(chunks=openai_text_stream("x"))]) as server:
        write_auth(home, [{**base, "endpoint": server.url + "/v1"}])
        first = run_once([*DUPLEX, "--session-id", session], encode(user("hi")), home=home)
        assert first.returncode == 0, first.stderr
        original = {**base, "endpoint": server.url + "/v1"}
    variants = {
        "id": {**original, "id": "q"},
        # An anthropic endpoint is the base URL (DEC-AUTH-2): the same server.
        "type": {**original, "type": "anthropic", "endpoint": original["endpoint"][: -len("/v1")]},
        "model": {**original, "model": "other"},
        "route": {**original, "endpoint": "http://127.0.0.1:8/v1"},
    }
    write_auth(home, [variants[changed]])
    with ProviderServer([Reply(chunks=openai_text_stream("never"))]) as server:
        resumed = run_once([*DUPLEX, "--resume", session], encode(user("again")), home=home)
        assert server.requests == []  # no provider I/O
    assert resumed.returncode == 2
    assert resumed.stdout == b""
    assert "--resume" in resumed.stderr.decode()


def test_unknown_session_and_bad_ids_are_start_up_errors(home: Path) -> None:
    for args in (["--resume", str(uuid.uuid4())], ["--session-id", "../escape"]):
        proc = run_once([*DUPLEX, *args], b"", home=home)
        assert proc.returncode == 2 and proc.stdout == b""
    assert not (home.parent / "escape").exists()


def test_no_session_persistence_writes_nothing(home: Path) -> None:
    proc = run_once([*DUPLEX, "--no-session-persistence"], encode(user("x")), home=home)
    assert proc.returncode == 0
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


def test_kill_9_mid_turn_then_resume(home: Path, tmp_path: Path, processes: list[Any]) -> None:
    """A crash mid-turn leaves a readable transcript: the completed turn is there,
    the interrupted one is not half-recorded, and the session resumes."""
    from tests.e2e.agentx_process import AgentxProcess, is_state

    session = str(uuid.uuid4())
    replies = [
        Reply(chunks=openai_text_stream("kept answer")),
        Reply(chunks=openai_text_stream("partial")[:2], then="hang"),
        Reply(chunks=openai_text_stream("after resume")),
    ]
    with ProviderServer(replies) as server:
        _openai(home, server.url)
        proc = AgentxProcess([*DUPLEX, "--session-id", session], home=home, cwd=tmp_path)
        processes.append(proc)
        proc.send(user("first"))
        proc.until(is_result)
        proc.send(user("second"))
        proc.until(is_state("running"))
        assert server.hanging.wait(10)
        proc.kill()  # SIGKILL mid-turn
        resumed = run_once(
            [*DUPLEX, "--resume", session], encode(user("third")), home=home, cwd=tmp_path
        )
        last = server.requests[-1].body["messages"]
    assert resumed.returncode == 0, resumed.stderr
    assert [r["result"] for r in records_of(resumed.stdout) if is_result(r)] == ["after resume"]
    contents = [m["content"] for m in last]
    assert contents[-3:] == ["first", "kept answer", "third"]


def test_every_result_finds_its_turn_in_the_transcript_even_after_sigkill(home: Path) -> None:
    """DEC-STORE-1, group commit: a burst of queued prompts shares transcript
    syncs, yet no result leaves before its turn is in the transcript. Each
    result is checked against the file while agentx still runs; then the
    process is SIGKILLed and every answered prompt is still there."""
    session = str(uuid.uuid4())
    proc = AgentxProcess((*DUPLEX, "--session-id", session), home=home)
    transcript = home / "sessions" / session / "transcript.jsonl"
    prompts = [f"burst prompt {i}" for i in range(20)]
    try:
        proc.send(*(user(text) for text in prompts))
        for text in prompts:
            result = proc.until(is_result)[-1]
            assert result["result"] == text  # the echo provider
            assert ("assistant", text) in _said(transcript)
    finally:
        proc.kill()
    said = _said(transcript)
    assert said == [(role, text) for text in prompts for role in ("user", "assistant")]


def _said(transcript: Path) -> list[tuple[str, str]]:
    entries = [json.loads(line) for line in transcript.read_bytes().splitlines()]
    return [(e["role"], e["content"][0]["text"]) for e in entries if e["type"] == "message"]


def test_a_session_open_in_another_process_is_refused_until_it_ends(home: Path) -> None:
    """Two agentx processes appending to one transcript would interleave
    their lines: a second --resume fails closed (exit 2) while the first
    runs, and succeeds once it has ended."""
    session = str(uuid.uuid4())
    first = AgentxProcess((*DUPLEX, "--session-id", session), home=home)
    try:
        assert first.next()["session_id"] == session  # system/init: the session is open
        busy = run_once([*DUPLEX, "--resume", session], encode(user("me too")), home=home)
        assert busy.returncode == 2
        assert b"open in another agentx process" in busy.stderr
        assert busy.stdout == b""
        first.send(user("first"))
        first.until(is_result)
        first.close_stdin()
        assert first.wait() == 0
    finally:
        first.kill()
    later = run_once([*DUPLEX, "--resume", session], encode(user("now")), home=home)
    assert later.returncode == 0, later.stderr
    assert [r["result"] for r in records_of(later.stdout) if is_result(r)] == ["now"]
