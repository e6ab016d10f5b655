"""End-to-end: thinking blocks (DEC-CLI-5). The Messages API's thinking comes
back as ``thinking`` content blocks of the assistant records (and its deltas
as ``stream_event``s), and every block is sent back with its signature
unchanged on every later request: after a tool call, in the next turn and
after ``--resume``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.agentx_process import DUPLEX, encode, is_result, records_of, run_once, user
from tests.e2e.test_http_providers import _anthropic_tool_call
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_with_thinking,
)

KEY = "sk-ant-thinking-e2e-0d4c"
FIRST = {"type": "thinking", "thinking": "I should read it", "signature": "sig-one=="}
SECOND = {"type": "thinking", "thinking": "now answer", "signature": "sig-two=="}


def _assistant_contents(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in body["messages"] if m["role"] == "assistant"]


def test_thinking_is_streamed_recorded_and_sent_back_unchanged(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("parsnip\n")
    replies = [
        Reply(
            chunks=anthropic_with_thinking(
                ("I should ", "read it"), "sig-one==", _anthropic_tool_call(str(work / "notes.txt"))
            )
        ),
        Reply(
            chunks=anthropic_with_thinking(
                ("now ", "answer"), "sig-two==", anthropic_text_stream("parsnip")
            )
        ),
        Reply(chunks=anthropic_text_stream("again")),
        Reply(chunks=anthropic_text_stream("resumed")),
    ]
    with ProviderServer(replies) as server:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
        args = (*DUPLEX, "--include-partial-messages", "--max-thinking-tokens", "2048")
        stdin = encode(user("what is in notes?")) + encode(user("and again?"))
        proc = run_once(args, stdin, home=home, cwd=work, env=env)
        records = records_of(proc.stdout)
        session = records[0]["session_id"]
        resumed = run_once(
            (*DUPLEX, "--resume", session),
            encode(user("after resume")),
            home=home,
            cwd=work,
            env=env,
        )
        bodies = [r.body for r in server.requests]
    assert proc.returncode == 0, proc.stderr
    assert resumed.returncode == 0, resumed.stderr
    # The records: a thinking block leads each assistant message that thought.
    thinking = [
        block
        for r in records
        if r["type"] == "assistant"
        for block in r["message"]["content"]
        if block["type"] == "thinking"
    ]
    assert thinking == [FIRST, SECOND]
    deltas = [
        r["event"]["delta"]
        for r in records
        if r["type"] == "stream_event" and r["event"].get("type") == "content_block_delta"
    ]
    assert [d["thinking"] for d in deltas if d["type"] == "thinking_delta"] == [
        "I should ",
        "read it",
        "now ",
        "answer",
    ]
    assert [r["result"] for r in records if is_result(r)] == ["parsnip", "again"]
    # The requests: after the tool call, in the next turn, and after --resume.
    assert _assistant_contents(bodies[1])[0][0] == FIRST
    assert bodies[1]["messages"][-1]["content"][0]["type"] == "tool_result"
    for body in bodies[2:]:
        contents = _assistant_contents(body)
        assert contents[0][0] == FIRST and contents[0][1]["type"] == "tool_use"
        assert contents[1] == [SECOND, {"type": "text", "text": "parsnip"}]
    assert json.dumps(bodies[3]).count("sig-") == 2
    for out in (proc, resumed):
        assert KEY.encode() not in out.stdout and KEY.encode() not in out.stderr
