"""End-to-end: compaction (WIRE-005, DEC-AUTH-2 ``context_window``) over the real process:
``/compact`` with a scripted summary, automatic compaction at the 80% line,
interrupt and failure leaving the history untouched, and a resume across the
boundary that gives the model exactly the summary and the preserved segment."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentx.sessions.compaction import SUMMARY_PREFIX
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    control,
    encode,
    is_control_response,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)
from tests.fakes.provider_server import ProviderServer, Reply, openai_text_stream

#: No tools, and a system prompt of exactly one token (4 characters) in place
#: of the built-in one, so the context arithmetic below is the test's own.
NO_TOOLS = ("--tools", "", "--system-prompt", "Test")


def _label(record: Record) -> str:
    if record["type"] == "system":
        if record["subtype"] == "status":
            return f"status:{record['status']}"
        if record["subtype"] == "session_state_changed":
            return f"state:{record['state']}"
        return f"system:{record['subtype']}"
    return str(record["type"])


def _turns(records: list[Record]) -> list[list[Record]]:
    """The records of each turn, each up to and including its result (queued
    turns run back to back: ``running`` once, ``idle`` after the last)."""
    turns: list[list[Record]] = [[]]
    for record in records[1:]:  # after system/init
        turns[-1].append(record)
        if is_result(record):
            turns.append([])
    return turns[:-1]


def _scripted(home: Path, tmp_path: Path, turns: list[Record], **extra: Any) -> None:
    script = write_script(tmp_path / "script.json", turns)
    write_auth(
        home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script), **extra}]
    )


def _transcript(home: Path, session_id: str) -> list[Record]:
    path = home / "sessions" / session_id / "transcript.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _text(step: str) -> Record:
    return {"steps": [{"text": step}]}


def test_manual_compact_records_in_order_and_durable_boundary(home: Path, tmp_path: Path) -> None:
    _scripted(home, tmp_path, [_text("first answer"), _text("second answer"), _text("THE SUMMARY")])
    session = str(uuid.uuid4())
    done = run_once(
        [*DUPLEX, "--session-id", session],
        encode(user("one")) + encode(user("two")) + encode(user("/compact keep the names")),
        home=home,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    compact_turn = _turns(records_of(done.stdout))[2]
    assert [_label(r) for r in compact_turn] == [
        "status:compacting",
        "system:compact_boundary",
        "status:None",
        "system:local_command_output",
        "result",
    ]
    boundary, output, result = compact_turn[1], compact_turn[3], compact_turn[4]
    metadata = boundary["compact_metadata"]
    assert metadata["trigger"] == "manual"
    assert metadata["pre_tokens"] > 0
    assert output["content"] == "Compacted 2 messages into a summary; kept the latest 2 verbatim."
    assert (result["subtype"], result["num_turns"], result["result"]) == (
        "success",
        0,
        output["content"],
    )
    every = _transcript(home, session)
    # Each of the two turns is its messages and its ledger entry (DEC-STORE-1).
    assert [e["type"] for e in every] == (["message"] * 2 + ["turn"]) * 2 + ["compact_boundary"]
    entries = [e for e in every if e["type"] != "turn"]
    stored = entries[-1]
    assert stored["uuid"] == boundary["uuid"]
    assert stored["compact_metadata"] == metadata
    assert stored["summary"]["content"] == [
        {"type": "text", "text": SUMMARY_PREFIX + "THE SUMMARY"}
    ]
    assert metadata["preserved_segment"] == {
        "head_uuid": entries[2]["uuid"],  # the prompt "two"
        "anchor_uuid": stored["summary"]["uuid"],
        "tail_uuid": entries[3]["uuid"],  # its answer
    }


def _openai(home: Path, url: str) -> None:
    write_auth(home, [{"id": "remote", "type": "openai", "model": "m", "endpoint": url + "/v1"}])


def _conversation(body: Record) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in body["messages"] if m["role"] != "system"]


def test_resume_splices_the_preserved_segment_after_the_summary(home: Path, tmp_path: Path) -> None:
    session = str(uuid.uuid4())
    replies = [
        Reply(chunks=openai_text_stream("first")),
        Reply(chunks=openai_text_stream("second")),
        Reply(chunks=openai_text_stream("SUMMARY TEXT")),
        Reply(chunks=openai_text_stream("third")),
    ]
    with ProviderServer(replies) as server:
        _openai(home, server.url)
        first = run_once(
            [*DUPLEX, "--session-id", session, *NO_TOOLS],
            encode(user("one")) + encode(user("two")) + encode(user("/compact")),
            home=home,
            cwd=tmp_path,
        )
        assert first.returncode == 0, first.stderr
        second = run_once(
            [*DUPLEX, "--resume", session, *NO_TOOLS],
            encode(user("three")),
            home=home,
            cwd=tmp_path,
        )
        assert second.returncode == 0, second.stderr
        summary_request, resumed_request = server.requests[2], server.requests[3]
    # The summary call saw the summarized part and the fixed instruction only.
    summarized = _conversation(summary_request.body)
    assert summarized[:2] == [("user", "one"), ("assistant", "first")]
    assert summarized[2][0] == "user" and "Summarize the conversation" in summarized[2][1]
    assert summary_request.body.get("tools") is None
    # WIRE-005: the resumed model sees the summary, then exactly the preserved
    # segment, then the new prompt; not the whole past, not the summary alone.
    assert _conversation(resumed_request.body) == [
        ("user", SUMMARY_PREFIX + "SUMMARY TEXT"),
        ("user", "two"),
        ("assistant", "second"),
        ("user", "three"),
    ]
    assert [r["result"] for r in records_of(second.stdout) if is_result(r)] == ["third"]


#: The system prompt's 1 token, and "hi" + "ok" + the second prompt:
#: 4 + 312 = 316 chars = 79 tokens: 80 in all, exactly 80% of a 100-token
#: window; one more char is 81 tokens.
@pytest.mark.parametrize(
    ("prompt_chars", "compacts"),
    [pytest.param(312, False, id="at-80-percent"), pytest.param(313, True, id="one-past")],
)
def test_automatic_compaction_at_the_threshold(
    home: Path, tmp_path: Path, prompt_chars: int, compacts: bool
) -> None:
    _scripted(home, tmp_path, [_text("ok"), _text("SUMMARY"), _text("after")], context_window=100)
    done = run_once(
        [*DUPLEX, *NO_TOOLS],
        encode(user("hi")) + encode(user("x" * prompt_chars)),
        home=home,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    second = _turns(records_of(done.stdout))[1]
    labels = [_label(r) for r in second]
    if not compacts:
        assert "status:compacting" not in labels
        assert second[-1]["result"] == "SUMMARY"  # the script's next turn answered the prompt
        return
    assert labels == [
        "status:compacting",
        "system:compact_boundary",
        "status:None",
        "assistant",
        "result",
    ]
    metadata = second[1]["compact_metadata"]
    assert (metadata["trigger"], metadata["pre_tokens"]) == ("auto", 81)
    assert set(metadata["preserved_segment"]) == {"head_uuid", "anchor_uuid", "tail_uuid"}
    result = second[-1]
    assert (result["subtype"], result["result"], result["num_turns"]) == ("success", "after", 1)


def _usage(proc: AgentxProcess, request_id: str) -> Record:
    proc.send(control(request_id, "get_context_usage"))
    response = proc.until(is_control_response(request_id))[-1]["response"]["response"]
    assert isinstance(response, dict)
    return response


@pytest.mark.parametrize(
    ("summary_turn", "error"),
    [
        pytest.param(
            {"steps": [{"error": "server_error"}]},
            "compaction failed: server_error: scripted server_error error",
            id="provider-error",
        ),
        pytest.param(
            _text("   "), "compaction failed: the provider returned an empty summary", id="empty"
        ),
    ],
)
def test_failed_summary_reports_and_keeps_history(
    home: Path, tmp_path: Path, processes: list[AgentxProcess], summary_turn: Record, error: str
) -> None:
    _scripted(home, tmp_path, [_text("answer"), summary_turn])
    proc = AgentxProcess(home=home, cwd=tmp_path)
    processes.append(proc)
    proc.send(user("question"))
    proc.until(is_result)
    before = _usage(proc, "u1")
    proc.send(user("/compact"))
    turn = proc.until(is_result)
    labels = [_label(r) for r in turn]
    assert "system:compact_boundary" not in labels
    assert labels[-4:] == [
        "status:compacting",
        "status:None",
        "system:local_command_output",
        "result",
    ]
    assert turn[-2]["content"] == f"Error: {error}"
    assert (turn[-1]["subtype"], turn[-1]["is_error"], turn[-1]["errors"]) == (
        "error_during_execution",
        True,
        [error],
    )
    assert _usage(proc, "u2")["categories"] == before["categories"]
    proc.close_stdin()
    assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error


def test_interrupt_cancels_compaction_and_keeps_history(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    _scripted(home, tmp_path, [_text("answer"), {"steps": [{"sleep_ms": 60_000}]}])
    proc = AgentxProcess(home=home, cwd=tmp_path)
    processes.append(proc)
    proc.send(user("question"))
    proc.until(is_result)
    before = _usage(proc, "u1")
    proc.send(user("/compact"))
    proc.until(lambda r: _label(r) == "status:compacting")
    proc.send(control("stop", "interrupt"))
    turn = proc.until(is_result)
    labels = [_label(r) for r in turn]
    assert "system:compact_boundary" not in labels
    assert "status:None" in labels
    assert (turn[-1]["subtype"], turn[-1]["stop_reason"]) == ("error_during_execution", "cancelled")
    assert _usage(proc, "u2")["categories"] == before["categories"]
    proc.close_stdin()
    assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error


def test_failed_automatic_compaction_lets_the_turn_proceed(home: Path, tmp_path: Path) -> None:
    """Decision: an automatic compaction whose summary fails leaves the history
    as it was, logs a WARN on stderr, and the model call goes ahead."""
    _scripted(
        home,
        tmp_path,
        [_text("ok"), {"steps": [{"error": "server_error"}]}, _text("answered anyway")],
        context_window=100,
    )
    done = run_once(
        [*DUPLEX, *NO_TOOLS],
        encode(user("hi")) + encode(user("x" * 317)),
        home=home,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    second = _turns(records_of(done.stdout))[1]
    assert [_label(r) for r in second] == [
        "status:compacting",
        "status:None",
        "assistant",
        "result",
    ]
    assert (second[-1]["subtype"], second[-1]["result"]) == ("success", "answered anyway")
    assert b"automatic compaction failed; continuing uncompacted: server_error" in done.stderr
