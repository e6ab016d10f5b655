"""AnthropicClient against a real loopback server speaking Messages API SSE (DEC-AUTH-2)."""

from __future__ import annotations

import base64
from typing import Any

import msgspec.structs
import pytest
from tenacity import wait_none

from agentx.messages.frozen import freeze
from agentx.providers.anthropic import AnthropicClient
from agentx.providers.base import (
    MediaBlock,
    Message,
    ModelRequest,
    ProviderError,
    RateLimit,
    RawEvent,
    Stop,
    StreamItem,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from agentx.providers.http import RetryPolicy
from tests.fakes.cancel import EventCancelToken
from tests.fakes.cancelling import drain_cancelled
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_event,
    anthropic_text_stream,
    json_reply,
)

KEY = "sk-ant-SENTINEL"
PNG = b"\x89PNG\r\n\x1a\nfake"
PDF = b"%PDF-1.7 fake"
HELLO = ModelRequest(
    model="claude-test",
    system="be brief",
    messages=(Message(role="user", content=(TextBlock(text="hello"),)),),
)


def client(server: ProviderServer) -> AnthropicClient:
    return AnthropicClient(
        server.url, KEY, {"X-Extra": "hdr"}, "claude-test", retry=RetryPolicy(wait=wait_none())
    )


def run(
    replies: list[Reply], request: ModelRequest = HELLO
) -> tuple[list[StreamItem], ProviderServer]:
    with ProviderServer(replies) as server:
        c = client(server)
        items = list(c.stream(request, EventCancelToken()))
        c.close()
    return items, server


def semantic(items: list[StreamItem]) -> list[StreamItem]:
    return [i for i in items if not isinstance(i, RawEvent)]


@pytest.mark.parametrize("stream_events", [True, False], ids=["stream-events", "no-stream-events"])
def test_text_stream_items_and_usage_merge(stream_events: bool) -> None:
    request = msgspec.structs.replace(HELLO, stream_events=stream_events)
    items, _ = run([Reply(chunks=anthropic_text_stream("Hel", "lo"))], request)
    assert semantic(items) == [
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        Usage(
            input_tokens=25,
            output_tokens=15,
            cache_creation_input_tokens=3,
            cache_read_input_tokens=5,
        ),
        Stop(stop_reason="end_turn"),
    ]
    raw = [i.event["type"] for i in items if isinstance(i, RawEvent)]
    assert raw == (
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        if stream_events
        else []
    )


def test_request_url_headers_and_body() -> None:
    tools = (ToolSpec(name="Read", description="read", input_schema=freeze({"type": "object"})),)
    request = ModelRequest(
        model="claude-test", system="sys", messages=HELLO.messages, tools=tools, max_tokens=100
    )
    _, server = run([Reply(chunks=anthropic_text_stream("x"))], request)
    (sent,) = server.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["x-extra"] == "hdr"
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "claude-test",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
        "stream": True,
        "system": "sys",
        "tools": [{"name": "Read", "description": "read", "input_schema": {"type": "object"}}],
    }


@pytest.mark.parametrize(
    ("effort", "sent"),
    [
        (None, None),
        ("minimal", "low"),
        ("low", "low"),
        ("medium", "medium"),
        ("high", "high"),
        ("xhigh", "xhigh"),
    ],
)
def test_effort_is_output_config_effort_without_thinking(
    effort: str | None, sent: str | None
) -> None:
    """DEC-CLI-5: Anthropic's ``output_config.effort``; extended thinking stays
    off (its signed blocks could not be sent back)."""
    request = ModelRequest(model="m", system="", messages=HELLO.messages, effort=effort)
    _, server = run([Reply(chunks=anthropic_text_stream("x"))], request)
    body = server.requests[0].body
    assert "thinking" not in body
    assert body.get("output_config") == (None if sent is None else {"effort": sent})


def test_conversation_projection_media_tool_use_and_results() -> None:
    image = MediaBlock(
        kind="image", mime_type="image/png", name="a.png", data=PNG, sha256="0", size_bytes=1
    )
    pdf = MediaBlock(
        kind="document",
        mime_type="application/pdf",
        name="r.pdf",
        data=PDF,
        sha256="0",
        size_bytes=1,
    )
    messages = (
        Message(role="user", content=(TextBlock(text="look"), image, pdf)),
        Message(
            role="assistant",
            content=(ToolUseBlock(id="toolu_1", name="Read", input=freeze({"p": ["/x"]})),),
        ),
        Message(
            role="user",
            content=(ToolResultBlock(tool_use_id="toolu_1", content="nope", is_error=True),),
        ),
    )
    request = ModelRequest(model="m", system="", messages=messages)
    _, server = run([Reply(chunks=anthropic_text_stream("x"))], request)
    assert server.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": base64.b64encode(PNG).decode(),
                    },
                },
                {
                    "type": "document",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": base64.b64encode(PDF).decode(),
                    },
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": ["/x"]}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "nope",
                    "is_error": True,
                }
            ],
        },
    ]


def tool_stream(fragments: tuple[str, ...], stop_reason: str = "tool_use") -> tuple[bytes, ...]:
    text = anthropic_text_stream("thinking aloud", stop_reason=stop_reason)
    block: list[dict[str, Any]] = [
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {}},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": f},
            }
            for f in fragments
        ),
        {"type": "content_block_stop", "index": 1},
    ]
    return (*text[:-3], *(anthropic_event(e) for e in block), *text[-2:])


@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        (('{"path": "/et', 'c/hosts"', "}"), freeze({"path": "/etc/hosts"})),
        (("",), freeze({})),
        ((), freeze({})),
    ],
    ids=["joined-fragments", "empty-fragment", "no-fragments"],
)
def test_tool_use_assembled_from_input_json_deltas(
    fragments: tuple[str, ...], expected: object
) -> None:
    items, _ = run([Reply(chunks=tool_stream(fragments))])
    assert semantic(items)[1:] == [
        ToolCall(id="toolu_9", name="Read", input=expected),  # type: ignore[arg-type]
        Usage(
            input_tokens=25,
            output_tokens=15,
            cache_creation_input_tokens=3,
            cache_read_input_tokens=5,
        ),
        Stop(stop_reason="tool_use"),
    ]


@pytest.mark.parametrize(
    ("stop_reason", "last"),
    [
        (
            "tool_use",
            ProviderError(
                category="unknown", message="provider sent an invalid tool call (index 1)"
            ),
        ),
        ("max_tokens", Stop(stop_reason="max_tokens")),
    ],
    ids=["invalid-json-is-an-error", "truncated-by-max-tokens-dropped"],
)
@pytest.mark.parametrize(
    "partial_json",
    ['{"pa', '{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e400}', '{"p": "\\ud800"}'],
    ids=["unparsable", "duplicate-member", "nan", "overflow", "lone-surrogate"],
)
def test_invalid_tool_input(partial_json: str, stop_reason: str, last: StreamItem) -> None:
    items = semantic(run([Reply(chunks=tool_stream((partial_json,), stop_reason))])[0])
    assert items[-1] == last
    assert not any(isinstance(i, ToolCall) for i in items)


@pytest.mark.parametrize(
    ("chunks", "then", "last"),
    [
        (
            anthropic_text_stream("a")[:4],
            "end",
            ProviderError(
                category="server_error", message="provider stream ended before message_stop"
            ),
        ),
        (
            anthropic_text_stream("a")[:4],
            "disconnect",
            ProviderError(
                category="server_error", message="provider stream interrupted (RemoteProtocolError)"
            ),
        ),
        (
            (*anthropic_text_stream("a")[:4], b"event: x\ndata: {oops\n\n"),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
        (
            (*anthropic_text_stream("a")[:4], b'data: {"type": "ping", "type": "ping"}\n\n'),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
        (
            (
                *anthropic_text_stream("a")[:4],
                b'data: {"type": "content_block_delta", "index": 0,'
                b' "delta": {"type": "text_delta", "text": "\\udc00"}}\n\n',
            ),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
        (
            (
                *anthropic_text_stream("a")[:4],
                anthropic_event(
                    {
                        "type": "error",
                        "error": {"type": "overloaded_error", "message": f"busy {KEY}"},
                    }
                ),
            ),
            "end",
            ProviderError(
                category="server_error",
                message="provider stream error: busy [redacted]",
                overloaded=True,  # an overloaded_error event: what --fallback-model answers
            ),
        ),
        (
            (
                *anthropic_text_stream("a")[:4],
                anthropic_event({"type": "content_block_delta", "index": "zz", "delta": {}}),
            ),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
    ],
    ids=[
        "eof-before-message-stop",
        "disconnect",
        "malformed",
        "duplicate-member",
        "lone-surrogate",
        "error-event",
        "wrong-shape",
    ],
)
def test_failures_after_output_began(
    chunks: tuple[bytes, ...], then: str, last: StreamItem
) -> None:
    items, server = run([Reply(chunks=chunks, then=then)])  # type: ignore[arg-type]
    assert semantic(items) == [TextDelta(text="a"), last]
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("status", "kind", "category", "requests"),
    [
        (401, "authentication_error", "authentication_failed", 1),
        (403, "permission_error", "authentication_failed", 1),
        (400, "invalid_request_error", "invalid_request", 1),
        (413, "request_too_large", "invalid_request", 1),
        (529, "overloaded_error", "server_error", 3),
    ],
)
def test_http_errors(status: int, kind: str, category: str, requests: int) -> None:
    reply = json_reply(status, {"type": "error", "error": {"type": kind, "message": "m"}})
    items, server = run([reply])
    assert items == [
        ProviderError(
            category=category,  # type: ignore[arg-type]
            message=f"provider returned HTTP {status}: m",
            overloaded=status == 529,  # what --fallback-model answers
        )
    ]
    assert len(server.requests) == requests


RESET = "2030-01-01T00:00:00Z"
RESET_EPOCH = 1893456000


@pytest.mark.parametrize(
    ("status", "remaining", "expected"),
    [
        (200, "100", RateLimit(status="allowed", resets_at=RESET_EPOCH, utilization=0.5)),
        (200, "20", RateLimit(status="warning", resets_at=RESET_EPOCH, utilization=0.9)),
        (429, "0", RateLimit(status="rejected", resets_at=RESET_EPOCH, utilization=1.0)),
    ],
    ids=["allowed", "warning-at-10pct", "rejected"],
)
def test_rate_limit_headers(status: int, remaining: str, expected: RateLimit) -> None:
    headers = (
        ("anthropic-ratelimit-requests-limit", "200"),
        ("anthropic-ratelimit-requests-remaining", remaining),
        ("anthropic-ratelimit-requests-reset", RESET),
        ("anthropic-ratelimit-tokens-limit", "1000"),
        ("anthropic-ratelimit-tokens-remaining", "600"),
        ("anthropic-ratelimit-tokens-reset", "not a time"),
        ("retry-after", "31"),
    )
    reply = (
        Reply(
            headers=(("content-type", "text/event-stream"), *headers),
            chunks=anthropic_text_stream("x"),
        )
        if status == 200
        else json_reply(status, {"type": "error", "error": {"type": "rate_limit_error"}}, headers)
    )
    items, _ = run([reply])
    assert items[0] == expected
    if status == 429:
        assert items[1] == ProviderError(
            category="rate_limit", message="provider returned HTTP 429"
        )


def test_cancel_mid_stream_within_100ms() -> None:
    reply = Reply(chunks=anthropic_text_stream("partial")[:4], then="hang")
    with ProviderServer([reply]) as server:
        c = client(server)
        token = EventCancelToken()
        outcome = drain_cancelled(
            c.stream(HELLO, token),
            token,
            server.hanging,
            after=lambda item: isinstance(item, TextDelta),
        )
        c.close()
    assert outcome.raised_cancelled
    assert outcome.latency < 0.1
    assert semantic(list(outcome.items)) == [TextDelta(text="partial")]
