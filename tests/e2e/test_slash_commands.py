"""End-to-end: slash commands in user text (DEC-TURN-1): each answers with
``system/local_command_output`` and exactly one result, without a model call;
``/clear``'s new session id is on every following record; unknown names are
ordinary prompt text."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import pytest

from agentx.messages.slash_commands import COMMANDS
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
    write_script,
)

NAMES = ["compact", "context", "cost", "clear", "help"]


def _outputs(records: list[Record]) -> list[str]:
    return [r["content"] for r in records if r.get("subtype") == "local_command_output"]


def test_init_and_initialize_list_the_commands(home: Path) -> None:
    done = run_once(DUPLEX, encode(control("i", "initialize")), home=home)
    assert done.returncode == 0, done.stderr
    init, response = records_of(done.stdout)[:2]
    assert init["slash_commands"] == NAMES
    commands = response["response"]["response"]["commands"]
    assert [c["name"] for c in commands] == NAMES
    assert all(set(c) == {"name", "description", "argumentHint"} for c in commands)
    assert commands[0]["argumentHint"] and not commands[1]["argumentHint"]


def test_help_answers_locally_with_one_result(home: Path) -> None:
    done = run_once(DUPLEX, encode(user("/help")), home=home)
    assert done.returncode == 0, done.stderr
    records = records_of(done.stdout)
    assert [r["type"] for r in records if r["type"] in ("assistant", "result")] == ["result"]
    (output,) = _outputs(records)
    for spec in COMMANDS:
        assert f"/{spec.name}" in output and spec.description in output
    result = next(r for r in records if is_result(r))
    assert (result["subtype"], result["num_turns"], result["result"]) == ("success", 0, output)
    assert result["usage"]["input_tokens"] == 0


def test_context_renders_get_context_usage(home: Path, processes: list[AgentxProcess]) -> None:
    proc = AgentxProcess(home=home)
    processes.append(proc)
    proc.send(user("some words for the history"))
    proc.until(is_result)
    proc.send(control("c", "get_context_usage"))
    usage = proc.until(is_control_response("c"))[-1]["response"]["response"]
    proc.send(user("/context"))
    (output,) = _outputs(proc.until(is_result))
    assert output.splitlines()[0] == (
        f"Context usage for {usage['model']}: {usage['totalTokens']} of "
        f"{usage['maxTokens']} tokens ({usage['percentage']}%)"
    )
    for category in usage["categories"]:
        assert f"  {category['name']}: {category['tokens']} tokens" in output.splitlines()
    proc.close_stdin()
    assert proc.wait() == 0


@pytest.mark.parametrize(
    ("pricing", "cost_line"),
    [
        pytest.param(
            {"input_per_mtok": 2.0, "output_per_mtok": 10.0}, "Total cost: $0.0090", id="priced"
        ),
        pytest.param(None, "Total cost: unknown", id="unknown-cost"),
    ],
)
def test_cost_shows_session_totals(
    home: Path, tmp_path: Path, pricing: dict[str, float] | None, cost_line: str
) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 250}
    script = write_script(
        tmp_path / "s.json",
        [
            {"steps": [{"text": "a"}, {"usage": usage}]},
            {"steps": [{"text": "b"}, {"usage": usage}]},
        ],
    )
    entry: Record = {"id": "s", "type": "scripted", "model": "m", "script": str(script)}
    if pricing is not None:
        entry["pricing"] = pricing
    write_auth(home, [entry])
    done = run_once(
        DUPLEX, encode(user("one")) + encode(user("two")) + encode(user("/cost")), home=home
    )
    assert done.returncode == 0, done.stderr
    (output,) = _outputs(records_of(done.stdout))
    lines = output.splitlines()
    assert lines[0] == cost_line  # two calls: 2000 in at $2/M + 500 out at $10/M
    assert lines[2] == "Usage (m): 2000 input, 500 output, 0 cache read, 0 cache write tokens"


def test_clear_starts_a_new_session(home: Path, tmp_path: Path) -> None:
    old = str(uuid.uuid4())
    done = run_once(
        [*DUPLEX, "--session-id", old],
        encode(user("remember this")) + encode(user("/clear")) + encode(user("/context")),
        home=home,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    records = records_of(done.stdout)
    cleared_at = next(
        i for i, r in enumerate(records) if r.get("subtype") == "local_command_output"
    )
    cleared = records[cleared_at]["content"]
    new = cleared.rsplit(" ", 1)[-1]
    assert cleared == f"Cleared the conversation; new session {new}"
    assert new != old and str(uuid.UUID(new)) == new
    assert {r["session_id"] for r in records[:cleared_at]} == {old}
    # The /clear answer, its result and everything after carry the new id.
    assert {r["session_id"] for r in records[cleared_at:]} == {new}
    context = _outputs(records)[1]
    assert "  Messages: 0 tokens" in context.splitlines()
    sessions = home / "sessions"
    header = json.loads((sessions / new / "header.json").read_text())
    assert (header["session_id"], header["cwd"]) == (new, str(tmp_path))
    old_entries = (sessions / old / "transcript.jsonl").read_text().splitlines()
    assert [json.loads(line)["type"] for line in old_entries] == ["message", "message", "turn"]


def test_following_turn_after_clear_has_the_new_id(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = AgentxProcess(home=home)
    processes.append(proc)
    proc.send(user("/clear"))
    (cleared,) = _outputs(proc.until(is_state("idle")))
    new = cleared.rsplit(" ", 1)[-1]
    proc.send(user("hello again"))
    turn = proc.until(is_state("idle"))
    assert [r["type"] for r in turn if r["type"] in ("assistant", "result")] == [
        "assistant",
        "result",
    ]
    assert {r["session_id"] for r in turn} == {new}
    proc.close_stdin()
    assert proc.wait() == 0


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("/foo bar", id="unknown-name"),
        pytest.param("/help me with this", id="arguments-to-a-command-without-any"),
        pytest.param("/etc/hosts looks odd", id="a-path"),
    ],
)
def test_other_slash_text_is_an_ordinary_prompt(home: Path, text: str) -> None:
    done = run_once(DUPLEX, encode(user(text)), home=home)
    assert done.returncode == 0, done.stderr
    records = records_of(done.stdout)
    assert not _outputs(records)
    assert [r["result"] for r in records if is_result(r)] == [text]  # the echo model answered


def test_compact_with_nothing_to_compact_is_an_error_result(home: Path) -> None:
    done = run_once(DUPLEX, encode(user("/compact")), home=home)
    assert done.returncode == 1  # DEC-CLI-6: the last turn ended in error, done.stderr
    records = records_of(done.stdout)
    assert _outputs(records) == ["Error: compaction failed: nothing to compact"]
    result = next(r for r in records if is_result(r))
    assert (result["is_error"], result["errors"]) == (
        True,
        ["compaction failed: nothing to compact"],
    )
    assert not [r for r in records if r.get("subtype") == "status"]


def test_attachment_records_after_clear_carry_the_new_id(
    home: Path, processes: list[AgentxProcess]
) -> None:
    data = b"%PDF-1.4 not parsed before commit"
    proc = AgentxProcess(home=home)
    processes.append(proc)
    proc.send(user("/clear"))
    (cleared,) = _outputs(proc.until(is_state("idle")))
    new = cleared.rsplit(" ", 1)[-1]
    proc.send(
        {
            "type": "attachment_import",
            "version": 1,
            "upload_id": "upl_1",
            "operation": "begin",
            "prompt_uuid": str(uuid.uuid4()),
            "attachment_id": "att_1",
            "name": "a.pdf",
            "size_bytes": len(data),
            "mime_type": "application/pdf",
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    )
    (accepted,) = proc.until(lambda r: r.get("type", "").startswith("attachment_import"))
    assert (accepted["status"], accepted["session_id"]) == ("accepted", new)
    proc.close_stdin()
    # EOF ends the open upload; its terminal record carries the new id too.
    ended = [r for r in proc.rest() if r.get("type") == "attachment_import_result"]
    assert ended and {r["session_id"] for r in ended} == {new}
    assert proc.wait() == 0


def test_cost_after_resume_counts_the_stored_turns(home: Path, tmp_path: Path) -> None:
    """WIRE-012, DEC-STORE-1: the ledger entries of the turns before
    ``--resume`` count in ``/cost``; the transcript holds each turn's times."""
    usage = {"input_tokens": 1000, "output_tokens": 250}
    script = write_script(
        tmp_path / "s.json",
        [
            {"steps": [{"text": "a"}, {"usage": usage}]},
            {"steps": [{"text": "b"}, {"usage": usage}]},
        ],
    )
    pricing = {"input_per_mtok": 2.0, "output_per_mtok": 10.0}
    entry: Record = {
        "id": "s",
        "type": "scripted",
        "model": "m",
        "script": str(script),
        "pricing": pricing,
    }
    write_auth(home, [entry])
    session = str(uuid.uuid4())
    first = run_once([*DUPLEX, "--session-id", session], encode(user("one")), home=home)
    assert first.returncode == 0, first.stderr
    resumed = run_once(
        [*DUPLEX, "--resume", session], encode(user("two")) + encode(user("/cost")), home=home
    )
    assert resumed.returncode == 0, resumed.stderr
    (output,) = _outputs(records_of(resumed.stdout))
    lines = output.splitlines()
    assert lines[0] == "Total cost: $0.0090"  # both turns, one of them stored
    assert lines[2] == "Usage (m): 2000 input, 500 output, 0 cache read, 0 cache write tokens"
    path = home / "sessions" / session / "transcript.jsonl"
    turns = [e for e in map(json.loads, path.read_text().splitlines()) if e["type"] == "turn"]
    assert len(turns) == 2
    assert all(t["started_at"] <= t["ended_at"] and t["ended_at"].endswith("Z") for t in turns)
    assert [t["total_cost_usd"] for t in turns] == [0.0045, 0.0045]


def test_context_usage_after_resume_counts_the_stored_conversation(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """get_context_usage after ``--resume`` counts the resumed history."""
    session = str(uuid.uuid4())
    first = run_once(
        [*DUPLEX, "--session-id", session], encode(user("remember " + "w" * 4000)), home=home
    )
    assert first.returncode == 0, first.stderr
    fresh = AgentxProcess(home=home)
    resumed = AgentxProcess(home=home, args=[*DUPLEX, "--resume", session])
    processes += [fresh, resumed]
    tokens = []
    for proc in (fresh, resumed):
        proc.send(control("u", "get_context_usage"))
        usage = proc.until(is_control_response("u"))[-1]["response"]["response"]
        messages = next(c for c in usage["categories"] if c["name"] == "Messages")
        tokens.append(messages["tokens"])
        proc.close_stdin()
        assert proc.wait() == 0
    assert tokens[0] == 0 and tokens[1] >= 2000  # 8000+ characters stored
