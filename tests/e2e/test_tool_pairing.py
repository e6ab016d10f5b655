"""End-to-end: every tool use gets exactly one tool result (spec "Ordering").

A NUL character in a tool's input (Bash's command, WebFetch's URL) is an
error result and the session goes on; the next request the loopback
provider receives pairs every ``tool_use`` with its ``tool_result``. A stored
history with an unanswered tool use (what an older agentx left after such a
failure) is repaired by ``--resume``: the resumed request is well-formed,
and the repair is stored, so a second resume finds nothing to repair.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.e2e.agentx_process import (
    DUPLEX,
    Record,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_event,
    anthropic_text_stream,
)

BYPASS = ("--permission-mode", "bypassPermissions")
NOT_RUN = "Tool not run: the turn that asked for it ended before its result"


def tool_stream(*uses: tuple[str, str, dict[str, Any]]) -> tuple[bytes, ...]:
    """A Messages API stream whose message asks for ``uses`` (id, name, input)."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_t",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    events = [anthropic_event(start)]
    for index, (use_id, name, tool_input) in enumerate(uses):
        block = {"type": "tool_use", "id": use_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
        events += [
            anthropic_event(
                {"type": "content_block_start", "index": index, "content_block": block}
            ),
            anthropic_event({"type": "content_block_delta", "index": index, "delta": delta}),
            anthropic_event({"type": "content_block_stop", "index": index}),
        ]
    events += [
        anthropic_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9},
            }
        ),
        anthropic_event({"type": "message_stop"}),
    ]
    return tuple(events)


def assert_well_formed(body: dict[str, Any]) -> None:
    """What the Messages API demands: each assistant message's tool uses are
    answered, once each and first, by the user message right after it."""
    messages = body["messages"]
    for index, message in enumerate(messages):
        content = message["content"]
        if message["role"] != "assistant" or isinstance(content, str):
            continue
        ids = [b["id"] for b in content if b["type"] == "tool_use"]
        if not ids:
            continue
        assert index + 1 < len(messages), "a tool use is the last message"
        reply = messages[index + 1]
        assert reply["role"] == "user"
        head = reply["content"][: len(ids)]
        assert [b.get("type") for b in head] == ["tool_result"] * len(ids)
        assert [b["tool_use_id"] for b in head] == ids
        rest = reply["content"][len(ids) :]
        assert not any(b.get("type") == "tool_result" for b in rest)


def _auth(home: Path, url: str) -> None:
    write_auth(
        home,
        [{"id": "a", "type": "anthropic", "model": "m", "endpoint": url, "api_key": "sk-x"}],
    )


def _results(records: list[Record]) -> list[dict[str, Any]]:
    return [
        b
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def test_a_nul_in_a_tool_input_is_an_error_result_and_the_session_goes_on(
    home: Path, tmp_path: Path
) -> None:
    replies = [
        Reply(
            chunks=tool_stream(
                ("toolu_bash", "Bash", {"command": "echo a\u0000b"}),
                ("toolu_fetch", "WebFetch", {"url": "http://127.0.0.1:9/\u0000x"}),
                ("toolu_read", "Read", {"file_path": "a\u0000b"}),
            )
        ),
        Reply(chunks=anthropic_text_stream("after the tools")),
        Reply(chunks=anthropic_text_stream("second turn")),
    ]
    with ProviderServer(replies) as server:
        _auth(home, server.url)
        done = run_once(
            [*DUPLEX, *BYPASS],
            encode(user("go")) + encode(user("again")),
            home=home,
            cwd=tmp_path,
        )
        requests = [r.body for r in server.requests]
    assert done.returncode == 0, done.stderr
    records = records_of(done.stdout)
    results = _results(records)
    assert [r["tool_use_id"] for r in results] == ["toolu_bash", "toolu_fetch", "toolu_read"]
    assert all(r["is_error"] for r in results)
    assert "NUL" in results[0]["content"] and "control characters" in results[1]["content"]
    assert [r["subtype"] for r in records if is_result(r)] == ["success", "success"]
    assert [r["result"] for r in records if is_result(r)] == ["after the tools", "second turn"]
    assert "internal error" not in json.dumps(records)
    assert len(requests) == 3
    for body in requests:
        assert_well_formed(body)


def _transcript(home: Path, session: str) -> Path:
    (path,) = home.glob(f"**/{session}/transcript.jsonl")
    return path


def test_resume_repairs_an_unanswered_tool_use_in_the_stored_history(
    home: Path, tmp_path: Path
) -> None:
    session = str(uuid.uuid4())
    replies = [
        Reply(chunks=tool_stream(("toolu_1", "Bash", {"command": "echo ran"}))),
        Reply(chunks=anthropic_text_stream("first done")),
        Reply(chunks=anthropic_text_stream("resumed")),
        Reply(chunks=anthropic_text_stream("resumed again")),
    ]
    with ProviderServer(replies) as server:
        _auth(home, server.url)
        first = run_once(
            [*DUPLEX, *BYPASS, "--session-id", session], encode(user("go")), home=home, cwd=tmp_path
        )
        assert first.returncode == 0, first.stderr
        # What a turn that failed after the model's tool use left on disk:
        # the tool use, and neither its result nor the answer after it.
        transcript = _transcript(home, session)
        lines = transcript.read_bytes().splitlines(keepends=True)
        messages = [i for i, line in enumerate(lines) if json.loads(line).get("role")]
        kinds = [json.loads(lines[i])["role"] for i in messages]
        assert kinds[-3:] == ["assistant", "user", "assistant"]
        dropped = set(messages[-2:])
        transcript.write_bytes(b"".join(x for i, x in enumerate(lines) if i not in dropped))

        second = run_once(
            [*DUPLEX, *BYPASS, "--resume", session], encode(user("next")), home=home, cwd=tmp_path
        )
        third = run_once(
            [*DUPLEX, *BYPASS, "--resume", session], encode(user("more")), home=home, cwd=tmp_path
        )
        requests = [r.body for r in server.requests]
    assert second.returncode == 0, second.stderr
    assert "1 unanswered tool use" in second.stderr.decode()
    assert [r["result"] for r in records_of(second.stdout) if is_result(r)] == ["resumed"]
    resumed = requests[2]
    assert_well_formed(resumed)
    answer, prompt = resumed["messages"][-2:]
    assert answer["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": NOT_RUN, "is_error": True}
    ]
    assert prompt == {"role": "user", "content": [{"type": "text", "text": "next"}]}
    # The repair was stored with the resumed turn: the next resume has nothing to repair.
    assert third.returncode == 0, third.stderr
    assert "unanswered tool use" not in third.stderr.decode()
    assert_well_formed(requests[3])
