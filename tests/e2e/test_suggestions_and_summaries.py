"""End-to-end: prompt suggestions and post-turn summaries over the real
process (DEC-TURN-5, WIRE-004; spec hard-interrupt order, WIRE-010)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx.sessions.event_log import EVENTS_FILE_NAME, read_events
from agentx.turns.suggestions import INSTRUCTION
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    control,
    encode,
    is_control_response,
    is_result,
    is_state,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import ProviderServer, Reply, openai_text_stream


def _kinds(records: list[Record]) -> list[str]:
    out = []
    for record in records:
        if record["type"] == "system":
            if record["subtype"] == "session_state_changed":
                out.append(record["state"])
            elif record["subtype"] != "init":
                out.append(record["subtype"])
        else:
            out.append(record["type"])
    return out


def _scripted(home: Path, turns: list[Record], suggestions: list[str] | None = None) -> None:
    doc: dict[str, Any] = {"version": 1, "turns": turns}
    if suggestions is not None:
        doc["suggestions"] = suggestions
    script = home / "script.json"
    script.write_text(json.dumps(doc))
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])


def test_echo_provider_suggests_the_prompt_again_between_result_and_idle(home: Path) -> None:
    """Without a scripted suggestion the echo rule answers the latest prompt."""
    proc = run_once((*DUPLEX, "--prompt-suggestions"), encode(user("what next?")), home=home)
    assert proc.returncode == 0
    records = records_of(proc.stdout)
    kinds = _kinds(records)
    assert kinds[kinds.index("result") :] == ["result", "prompt_suggestion", "idle"]
    (suggestion,) = [r for r in records if r["type"] == "prompt_suggestion"]
    assert suggestion["suggestion"] == "what next?"
    assert suggestion["session_id"] == records[0]["session_id"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param((), [], id="flag-off"),
        pytest.param(("--prompt-suggestions",), ["first"], id="only-when-no-prompt-waits"),
    ],
)
def test_scripted_suggestion_only_when_no_new_prompt_is_waiting(
    home: Path, args: tuple[str, ...], expected: list[str]
) -> None:
    """Both prompts arrive at once: the first result has a prompt waiting
    behind it, so no suggestion work starts; the last result gets the first
    scripted suggestion, right after it."""
    _scripted(home, [{"steps": [{"text": "a"}]}, {"steps": [{"text": "b"}]}], ["first", "second"])
    proc = run_once((*DUPLEX, *args), encode(user("one")) + encode(user("two")), home=home)
    assert proc.returncode == 0
    records = records_of(proc.stdout)
    assert [r["suggestion"] for r in records if r["type"] == "prompt_suggestion"] == expected
    # The suggestion calls never shift the script's turns.
    assert [r["result"] for r in records if is_result(r)] == ["a", "b"]
    kinds = _kinds(records)
    assert kinds[-2 - len(expected) :] == [
        "result",
        *(["prompt_suggestion"] * len(expected)),
        "idle",
    ]


def test_no_suggestion_after_an_error_result(home: Path) -> None:
    _scripted(home, [{"steps": [{"error": "server_error"}]}], ["unused"])
    proc = run_once((*DUPLEX, "--prompt-suggestions"), encode(user("fail")), home=home)
    records = records_of(proc.stdout)
    assert next(r for r in records if is_result(r))["is_error"] is True
    assert not [r for r in records if r["type"] == "prompt_suggestion"]


def _openai(home: Path, url: str) -> None:
    write_auth(
        home, [{"id": "remote", "type": "openai", "model": "model-x", "endpoint": url + "/v1"}]
    )


@pytest.mark.parametrize("abort", ["interrupt", "new-prompt"])
def test_suggestion_work_is_aborted_by_an_interrupt_or_a_new_prompt(
    home: Path, processes: list[AgentxProcess], abort: str
) -> None:
    """WIRE-010: an interrupt aborts the prompt-suggestion scope; a new prompt
    does too. The suggestion call is in flight (the server hangs) when the
    abort arrives, and that suggestion is never written."""
    replies = [
        Reply(chunks=openai_text_stream("first answer")),
        Reply(hang_before_headers=True),
        Reply(chunks=openai_text_stream("second answer")),
    ]
    with ProviderServer(replies) as server:
        _openai(home, server.url)
        proc = AgentxProcess((*DUPLEX, "--prompt-suggestions"), home=home)
        processes.append(proc)
        proc.send(user("hello"))
        proc.until(is_result)
        assert server.hanging.wait(10)
        if abort == "interrupt":
            proc.send(control("int-1", "interrupt"))
            tail = proc.until(is_state("idle"))
            assert _kinds(tail) == ["control_response", "idle"]
        else:
            proc.send(user("again"))
            tail = proc.until(is_result)
            assert tail[-1]["result"] == "second answer"
            tail += proc.until(is_state("idle"))
        proc.close_stdin()
        tail += proc.rest()
        assert proc.wait() == 0
        suggestion_call = server.requests[1].body["messages"][-1]
    assert suggestion_call["role"] == "user" and INSTRUCTION in json.dumps(suggestion_call)
    # Only the second turn's own suggestion call (the server repeats its last reply) remains.
    expected = [] if abort == "interrupt" else ["second answer"]
    assert [r["suggestion"] for r in proc.seen if r["type"] == "prompt_suggestion"] == expected


def test_post_turn_summaries_follow_each_turn(home: Path) -> None:
    """WIRE-004: one summary per turn, before idle, built from the turn (no
    model call): status from the result, title from the prompt, recent action
    from the last tool summary, noteworthy on error; it summarizes the last
    assistant record."""
    notes = home / "notes.txt"  # inside the cwd: Read needs no permission
    notes.write_text("x\n")
    read = {"tool_use": {"name": "Read", "input": {"file_path": str(notes)}}}
    turns = [{"steps": [read]}, {"steps": [{"text": "read it"}]}, {"steps": [{"error": "unknown"}]}]
    _scripted(home, turns)
    stdin = encode(user("Read the notes\nplease")) + encode(user("break"))
    proc = run_once((*DUPLEX, "--post-turn-summaries"), stdin, home=home)
    assert proc.returncode == 1  # DEC-CLI-6: the last turn ended in error
    records = records_of(proc.stdout)
    summaries = [r for r in records if r.get("subtype") == "post_turn_summary"]
    assistants = [r["uuid"] for r in records if r["type"] == "assistant"]
    assert [s["summarizes_uuid"] for s in summaries] == [assistants[1], assistants[2]]
    first, second = summaries
    assert (first["status_category"], first["is_noteworthy"]) == ("completed", False)
    assert (first["title"], first["status_detail"]) == ("Read the notes", "read it")
    assert first["recent_action"] == "Ran 1 tool use: Read ok"
    assert (second["status_category"], second["is_noteworthy"]) == ("failed", True)
    assert second["recent_action"] == ""
    kinds = _kinds(records)
    assert kinds.count("post_turn_summary") == 2
    for at in (i for i, kind in enumerate(kinds) if kind == "result"):
        assert kinds[at + 1] == "post_turn_summary"


def test_scenario_15_internal_flush_before_idle_claims_no_delivery(home: Path) -> None:
    """Scenario 15: result then idle, input closed at once. The internal-event
    flush (the session's events file) holds each turn's end in order, written
    after the result and any suggestion; neither the file nor stderr claims a
    visible record was delivered or acknowledged."""
    stdin = encode(user("one")) + encode(user("two"))
    proc = run_once((*DUPLEX, "--prompt-suggestions"), stdin, home=home)
    assert proc.returncode == 0
    records = records_of(proc.stdout)
    results = [r for r in records if is_result(r)]
    suggestions = [r for r in records if r["type"] == "prompt_suggestion"]
    (session_dir,) = (home / "sessions").iterdir()
    events = read_events(session_dir / EVENTS_FILE_NAME)
    # The first result had a prompt waiting behind it: no suggestion work.
    assert [(e["type"], e["result_uuid"], e["prompt_suggestion_uuid"]) for e in events] == [
        ("turn_end", results[0]["uuid"], None),
        ("turn_end", results[1]["uuid"], suggestions[0]["uuid"]),
    ]
    text = (session_dir / EVENTS_FILE_NAME).read_text() + proc.stderr.decode()
    for claim in ("deliver", "acknowledg", "acked"):
        assert claim not in text.lower()
    assert is_state("idle")(records[-1])


def test_no_session_persistence_keeps_no_event_log(home: Path) -> None:
    proc = run_once((*DUPLEX, "--no-session-persistence"), encode(user("hi")), home=home)
    assert proc.returncode == 0
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


def test_interrupt_ack_precedes_everything_after_it(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """The interrupt during a suggestion-free idle session is only an acknowledgement."""
    proc = AgentxProcess((*DUPLEX, "--prompt-suggestions"), home=home)
    processes.append(proc)
    proc.send(control("int-0", "interrupt"))
    assert proc.until(is_control_response("int-0"))[-1]["response"]["subtype"] == "success"
    proc.close_stdin()
    assert not [r for r in proc.rest() if r["type"] == "prompt_suggestion"]
    assert proc.wait() == 0


def test_blocked_summary_names_the_pending_permission_prompt(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """The summary's needed action: a permission prompt opening mid-turn gives a
    ``blocked`` summary whose needs_action names the prompt; after the host's
    answer the turn's own summary says ``completed``."""
    write = {"tool_use": {"name": "Write", "input": {"file_path": "out.txt", "content": "x"}}}
    _scripted(home, [{"steps": [write]}, {"steps": [{"text": "written"}]}])
    proc = AgentxProcess((*DUPLEX, "--post-turn-summaries"), home=home, cwd=home)
    processes.append(proc)
    proc.send(user("Write the file"))
    before = proc.until(
        lambda r: r.get("type") == "control_request" and r["request"]["subtype"] == "can_use_tool"
    )
    request = before[-1]
    assert _kinds(before)[-3:] == ["requires_action", "post_turn_summary", "control_request"]
    blocked = before[-2]
    assert blocked["status_category"] == "blocked"
    assert blocked["needs_action"] == (
        f"Answer the permission prompt: {request['request']['description']}"
    )
    assert blocked["summarizes_uuid"] == next(r for r in before if r["type"] == "assistant")["uuid"]
    assert blocked["title"] == "Write the file"
    proc.send(
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request["request_id"],
                "response": {"behavior": "allow"},
            },
        }
    )
    after = proc.until(is_state("idle"))
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    (done,) = [r for r in after if r.get("subtype") == "post_turn_summary"]
    assert (done["status_category"], done["needs_action"]) == ("completed", "")
    assert done["recent_action"] == "Ran 1 tool use: Write ok"
