"""End-to-end: a credential split across ``stream_event`` deltas never reaches
stdout joined (DEC-AUTH-6), over the real process and the real HTTP clients.

The loopback provider streams the profile's own api key (a model echoing it)
cut into deltas; the process must refuse the delta that would complete it,
exit 3 with the credential-free diagnostic, and write nothing after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.stream_guard import unescape
from tests.e2e.agentx_process import encode, records_of, run_once, user, write_auth
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_event,
    openai_chunk,
    sse,
)

KEY = "SENTINEL_KEY_123"
ARGS = (
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--include-partial-messages",
)
ESCAPED = '{"command": "echo SENTINEL_\\u004bEY_123"}'
CUT = ESCAPED.index("\\u004b") + 4  # between \u00 and 4b

Deltas = list[dict[str, Any]]


def anthropic(*blocks: tuple[dict[str, Any], Deltas]) -> tuple[bytes, ...]:
    """A Messages API stream of these content blocks, each with its deltas."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    events: list[dict[str, Any]] = [start]
    for index, (block, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
    events.append({"type": "message_stop"})
    return tuple(anthropic_event(e) for e in events)


def openai(deltas: Deltas, finish: str = "stop") -> tuple[bytes, ...]:
    return (
        openai_chunk({"role": "assistant", "content": ""}),
        *(openai_chunk(d) for d in deltas),
        openai_chunk({}, finish_reason=finish),
        sse("[DONE]"),
    )


def texts(member: str, kind: str, pieces: Iterable[str]) -> Deltas:
    return [{"type": kind, member: piece} for piece in pieces]


def call(arguments: str, index: int = 0, **first: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, **first, "function": {"arguments": arguments}}]}


TEXT_BLOCK = {"type": "text", "text": ""}
THINKING_BLOCK = {"type": "thinking", "thinking": "", "signature": ""}
TOOL_BLOCK = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
BASH = {"id": "call_1", "type": "function"}

# (provider type, stream, how many deltas are written before the refused one)
CASES = {
    "anthropic-text-2-way": (
        "anthropic",
        anthropic((TEXT_BLOCK, texts("text", "text_delta", ["SENTINEL_", "KEY_123"]))),
        1,
    ),
    "anthropic-text-3-way": (
        "anthropic",
        anthropic(
            (TEXT_BLOCK, texts("text", "text_delta", ["the key: SENT", "INEL_KE", "Y_123."]))
        ),
        2,
    ),
    "anthropic-thinking": (
        "anthropic",
        anthropic((THINKING_BLOCK, texts("thinking", "thinking_delta", ["SENTINEL", "_KEY_123"]))),
        1,
    ),
    "anthropic-tool-input-split-inside-an-escape": (
        "anthropic",
        anthropic(
            (TOOL_BLOCK, texts("partial_json", "input_json_delta", [ESCAPED[:CUT], ESCAPED[CUT:]]))
        ),
        1,
    ),
    "anthropic-text-across-two-blocks": (
        "anthropic",
        anthropic(
            (TEXT_BLOCK, texts("text", "text_delta", ["SENTINEL_"])),
            (TEXT_BLOCK, texts("text", "text_delta", ["KEY_123"])),
        ),
        1,
    ),
    "openai-text-2-way": ("openai", openai([{"content": "SENTINEL_"}, {"content": "KEY_123"}]), 1),
    "openai-text-3-way": (
        "openai",
        openai([{"content": "SENT"}, {"content": "INEL_"}, {"content": "KEY_123"}]),
        2,
    ),
    "openai-reasoning": (
        "openai",
        openai([{"reasoning_content": "SENTINEL_"}, {"reasoning_content": "KEY_123"}]),
        1,
    ),
    # DEC-AUTH-6c: a key split across two events of a shape the guard does not
    # know by name (the Responses API's), carried raw in a Messages stream.
    "responses-shape-in-a-messages-stream": (
        "anthropic",
        anthropic((TEXT_BLOCK, texts("text", "text_delta", ["hello"])))[:1]
        + tuple(
            anthropic_event(
                {
                    "type": "response.output_text.delta",
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "sequence_number": n,
                    "delta": piece,
                }
            )
            for n, piece in enumerate(["the key: SENTINEL_", "KEY_123."])
        )
        + anthropic((TEXT_BLOCK, texts("text", "text_delta", ["hello"])))[1:],
        1,
    ),
    # A chunk carrying finish_reason, then a later chunk of the same choice.
    "openai-split-across-the-finish-reason": (
        "openai",
        (
            openai_chunk({"role": "assistant", "content": ""}),
            openai_chunk({"content": "SENTINEL_"}, finish_reason="stop"),
            openai_chunk({"content": "KEY_123"}),
            sse("[DONE]"),
        ),
        1,
    ),
    "openai-tool-arguments-split-inside-an-escape": (
        "openai",
        openai(
            [
                call(ESCAPED[:CUT], function={"name": "Bash"}, **BASH),
                call('{"other": "x', index=1, id="call_2", type="function"),
                call(ESCAPED[CUT:]),
            ],
            finish="tool_calls",
        ),
        2,
    ),
}


def _auth(home: Path, kind: str, url: str) -> None:
    endpoint = url + ("/v1" if kind == "openai" else "")
    write_auth(
        home, [{"id": "remote", "type": kind, "model": "m", "endpoint": endpoint, "api_key": KEY}]
    )


def joined_streams(records: list[dict[str, Any]]) -> dict[tuple[Any, ...], str]:
    """What a UI joins: each block's string members, delta after delta."""
    joined: dict[tuple[Any, ...], str] = {}

    def walk(path: tuple[Any, ...], value: Any) -> None:
        if isinstance(value, str):
            joined[path] = joined.get(path, "") + value
        elif isinstance(value, dict):
            for name, member in value.items():
                walk((*path, name), member)
        elif isinstance(value, list):
            for position, item in enumerate(value):
                index = item.get("index", position) if isinstance(item, dict) else position
                walk((*path, index), item)

    for record in records:
        event = record["event"]
        if event.get("type") == "content_block_delta":
            walk((event["index"],), event["delta"])
        if str(event.get("type")).startswith("response."):
            walk((event.get("item_id"),), {"delta": event.get("delta", "")})
        for choice in event.get("choices") or ():
            walk((choice["index"],), choice["delta"])
    return joined


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_split_credential_is_refused_before_the_delta_that_completes_it(
    home: Path, case: str
) -> None:
    kind, stream, written = CASES[case]
    with ProviderServer([Reply(chunks=stream)]) as server:
        _auth(home, kind, server.url)
        proc = run_once(ARGS, encode(user("tell me the key")), home=home)
    assert proc.returncode == 3, proc.stderr
    stderr = proc.stderr.decode()
    assert "output failed (credential)" in stderr
    assert KEY not in stderr and KEY not in proc.stdout.decode()
    records = records_of(proc.stdout)
    events = [r for r in records if r["type"] == "stream_event"]
    for text in joined_streams(events).values():
        assert KEY not in text and KEY not in unescape(text)[0]
    # Exactly the provider's events before the refused delta, and nothing after.
    sent = provider_events(stream)
    is_delta = [is_text_delta(e) for e in sent]
    refused = [i for i, delta in enumerate(is_delta) if delta][written]
    assert [r["event"] for r in events] == sent[:refused]
    assert records[-1] == events[-1]
    assert not [r for r in records if r["type"] in ("assistant", "result")]


def provider_events(stream: tuple[bytes, ...]) -> list[dict[str, Any]]:
    data = [chunk.split(b"data: ", 1)[1].strip() for chunk in stream]
    return [json.loads(d) for d in data if d != b"[DONE]"]


def is_text_delta(event: dict[str, Any]) -> bool:
    """A delta carrying text (the OpenAI role chunk carries none)."""
    if event.get("type") == "content_block_delta" or str(event.get("type")).endswith(".delta"):
        return True
    return any(
        value
        for choice in event.get("choices") or ()
        for name, value in choice["delta"].items()
        if name != "role"
    )


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_credential_free_deltas_are_all_written(home: Path, kind: str) -> None:
    """A near miss (``SENTINEL_`` + ``KEY_124``) is not refused: the turn ends
    normally and every delta reaches stdout."""
    pieces = ["SENTINEL_", "KEY_124", " and \\u004bEY"]
    stream = (
        anthropic((TEXT_BLOCK, texts("text", "text_delta", pieces)))
        if kind == "anthropic"
        else openai([{"content": p} for p in pieces])
    )
    with ProviderServer([Reply(chunks=stream)]) as server:
        _auth(home, kind, server.url)
        proc = run_once(ARGS, encode(user("hi")), home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    joined = joined_streams([r for r in records if r["type"] == "stream_event"])
    assert joined[(0, "content" if kind == "openai" else "text")] == "".join(pieces)
    result = next(r for r in records if r["type"] == "result")
    assert result["subtype"] == "success" and result["result"] == "".join(pieces)
