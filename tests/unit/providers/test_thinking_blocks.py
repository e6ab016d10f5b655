"""Thinking blocks in the provider-neutral conversation (DEC-CLI-5): folded
from the Messages API stream, projected back unchanged to Anthropic, never to
Chat Completions, and kept across a transcript round trip."""

from __future__ import annotations

import json

from agentx.messages.frozen import FrozenDict
from agentx.providers.anthropic import AnthropicClient, _MessageStream
from agentx.providers.base import (
    Message,
    ModelRequest,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ThinkingDone,
    ToolUseBlock,
)
from agentx.providers.errors import Redactor
from agentx.providers.openai_messages import chat_messages
from agentx.sessions.history import Recorded
from agentx.sessions.transcript import from_entries, to_entries

THOUGHT = ThinkingBlock(thinking="consider", signature="c2ln")
SEALED = RedactedThinkingBlock(data="ZW5j")
ASSISTANT = Message(
    role="assistant",
    content=(
        THOUGHT,
        SEALED,
        TextBlock(text="hi"),
        ToolUseBlock(id="t1", name="Read", input=FrozenDict(file_path="/x")),
    ),
)
REQUEST = ModelRequest(
    model="m", system="", messages=(Message(role="user", content=(TextBlock(text="q"),)), ASSISTANT)
)


def test_the_stream_folds_thinking_with_its_signature() -> None:
    state = _MessageStream(Redactor(()))
    events = [
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "con"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "sider"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "c2ln"},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "redacted_thinking", "data": "ZW5j"},
        },
        {"type": "content_block_stop", "index": 1},
    ]
    items = [item for event in events for item in state.on_event(json.dumps(event), raw=False)]
    assert items == [ThinkingDone(block=THOUGHT), ThinkingDone(block=SEALED)]


def test_anthropic_gets_them_back_unchanged_and_first() -> None:
    client = AnthropicClient("http://127.0.0.1:9", "", {}, "m")
    try:
        assistant = client.request_body(REQUEST)["messages"][1]["content"]
    finally:
        client.close()
    assert assistant[:2] == [
        {"type": "thinking", "thinking": "consider", "signature": "c2ln"},
        {"type": "redacted_thinking", "data": "ZW5j"},
    ]


def test_chat_completions_never_sees_them() -> None:
    assistant = chat_messages(REQUEST)[-1]
    assert assistant["content"] == "hi" and "c2ln" not in json.dumps(assistant)


def test_a_transcript_round_trip_keeps_them() -> None:
    entries = json.loads(json.dumps(to_entries([Recorded(uuid="u1", message=ASSISTANT)])))
    (restored,) = from_entries(entries, read_blob=lambda _: b"")
    assert restored.message == ASSISTANT
