"""OpenAIClient against a real loopback server speaking Chat Completions SSE (DEC-AUTH-2)."""

from __future__ import annotations

import base64

import pytest
from tenacity import wait_none

from agentx.messages.frozen import freeze
from agentx.providers.base import (
    Cancelled,
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
from agentx.providers.openai import AzureRoute, OpenAIClient, reset_seconds
from tests.fakes.cancel import EventCancelToken
from tests.fakes.cancelling import drain_cancelled
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    json_reply,
    openai_chunk,
    openai_text_stream,
    sse,
)

KEY = "sk-SENTINEL-openai-key"
HEADER_SECRET = "hdr-SENTINEL-value"
FAST = RetryPolicy(wait=wait_none())
PNG = b"\x89PNG\r\n\x1a\nfake-png-bytes"
PDF = b"%PDF-1.7 fake"


def request(**overrides: object) -> ModelRequest:
    fields: dict[str, object] = {
        "model": "gpt-test",
        "system": "be brief",
        "messages": (Message(role="user", content=(TextBlock(text="hello"),)),),
    }
    fields.update(overrides)
    return ModelRequest(**fields)  # type: ignore[arg-type]


def client(server: ProviderServer, azure: AzureRoute | None = None) -> OpenAIClient:
    base = server.url if azure else server.url + "/v1"
    return OpenAIClient(
        base,
        KEY,
        {"X-Extra": HEADER_SECRET},
        "gpt-test",
        azure=azure,
        retry=FAST,
        clock=lambda: 1000.0,
    )


def run(
    replies: list[Reply], req: ModelRequest | None = None
) -> tuple[list[StreamItem], ProviderServer]:
    with ProviderServer(replies) as server:
        c = client(server)
        try:
            items = list(c.stream(req or request(), EventCancelToken()))
        finally:
            c.close()
    return items, server


def semantic(items: list[StreamItem]) -> list[StreamItem]:
    return [i for i in items if not isinstance(i, RawEvent)]


@pytest.mark.parametrize("stream_events", [True, False], ids=["stream-events", "no-stream-events"])
def test_text_stream_yields_raw_events_deltas_usage_and_stop(stream_events: bool) -> None:
    items, _ = run(
        [Reply(chunks=openai_text_stream("Hel", "lo"))], request(stream_events=stream_events)
    )
    assert semantic(items) == [
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        Usage(input_tokens=11, output_tokens=7),
        Stop(stop_reason="end_turn"),
    ]
    raw = [i for i in items if isinstance(i, RawEvent)]
    assert len(raw) == (5 if stream_events else 0)  # every JSON chunk, not [DONE]
    if stream_events:
        assert raw[1].event["choices"][0]["delta"]["content"] == "Hel"
        assert items.index(raw[1]) + 1 == items.index(TextDelta(text="Hel"))  # raw first


def test_a_wrong_shaped_chunk_keeps_its_raw_event_but_none_of_its_meaning() -> None:
    bad = {"choices": [{"index": 0, "delta": {"content": "lost"}}, 5]}
    items, _ = run(
        [Reply(chunks=(openai_chunk({"content": "a"}), sse(bad)))], request(stream_events=True)
    )
    assert [type(i) for i in items] == [RawEvent, TextDelta, RawEvent, ProviderError]
    assert items[2] == RawEvent(event=freeze(bad))
    assert items[3] == ProviderError(
        category="unknown", message="provider sent a malformed stream event"
    )


def test_request_url_headers_and_body() -> None:
    tools = (
        ToolSpec(name="Read", description="read a file", input_schema=freeze({"type": "object"})),
    )
    _, server = run([Reply(chunks=openai_text_stream("x"))], request(tools=tools, effort="high"))
    (sent,) = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["x-extra"] == HEADER_SECRET
    assert "api-key" not in sent.headers
    assert sent.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hello"},
        ],
        "max_completion_tokens": 8192,
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "Read",
                    "description": "read a file",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "reasoning_effort": "high",
    }


def test_no_effort_no_tools_no_system_omits_those_members() -> None:
    _, server = run([Reply(chunks=openai_text_stream("x"))], request(system=""))
    body = server.requests[0].body
    assert "reasoning_effort" not in body
    assert "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "hello"}]


def test_azure_route_url_and_api_key_header() -> None:
    with ProviderServer([Reply(chunks=openai_text_stream("x"))]) as server:
        c = client(server, AzureRoute(deployment="gpt56-sol", api_version="2025-04-01-preview"))
        items = list(c.stream(request(), EventCancelToken()))
        c.close()
    assert semantic(items)[-1] == Stop(stop_reason="end_turn")
    (sent,) = server.requests
    assert (
        sent.path == "/openai/deployments/gpt56-sol/chat/completions?api-version=2025-04-01-preview"
    )
    assert sent.headers["api-key"] == KEY
    assert "authorization" not in sent.headers


def test_conversation_projection_media_tools_and_results() -> None:
    image = MediaBlock(
        kind="image", mime_type="image/png", name="a.png", data=PNG, sha256="0", size_bytes=len(PNG)
    )
    pdf = MediaBlock(
        kind="document",
        mime_type="application/pdf",
        name="r.pdf",
        data=PDF,
        sha256="0",
        size_bytes=3,
    )
    messages = (
        Message(role="user", content=(TextBlock(text="look"), image, pdf)),
        Message(
            role="assistant",
            content=(
                TextBlock(text="reading"),
                ToolUseBlock(id="call_1", name="Read", input=freeze({"p": "/x"})),
            ),
        ),
        Message(
            role="user",
            content=(
                ToolResultBlock(tool_use_id="call_1", content="data"),
                ToolResultBlock(tool_use_id="call_2", content="boom", is_error=True),
                TextBlock(text="and?"),
            ),
        ),
    )
    _, server = run([Reply(chunks=openai_text_stream("x"))], request(system="", messages=messages))
    assert server.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
                },
                {
                    "type": "file",
                    "file": {
                        "filename": "r.pdf",
                        "file_data": "data:application/pdf;base64,"
                        + base64.b64encode(PDF).decode(),
                    },
                },
            ],
        },
        {
            "role": "assistant",
            "content": "reading",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "Read", "arguments": '{"p":"/x"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "data"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: boom"},
        {"role": "user", "content": "and?"},
    ]


def tool_call_stream(
    *parts: tuple[int, dict[str, object]], finish: str = "tool_calls"
) -> tuple[bytes, ...]:
    return (
        openai_chunk({"role": "assistant", "content": None}),
        *(openai_chunk({"tool_calls": [{"index": index, **part}]}) for index, part in parts),
        openai_chunk({}, finish_reason=finish),
        openai_chunk(
            usage={
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "prompt_tokens_details": {"cached_tokens": 60},
            }
        ),
        sse("[DONE]"),
    )


def test_parallel_tool_calls_are_assembled_from_index_keyed_deltas() -> None:
    chunks = tool_call_stream(
        (1, {"id": "call_b", "type": "function", "function": {"name": "Glob", "arguments": ""}}),
        (
            0,
            {"id": "call_a", "type": "function", "function": {"name": "Read", "arguments": '{"pa'}},
        ),
        (1, {"function": {"arguments": '{"pattern": "*.py"}'}}),
        (0, {"function": {"arguments": 'th": "/etc/hosts"}'}}),
    )
    items, _ = run([Reply(chunks=chunks)])
    assert semantic(items) == [
        ToolCall(id="call_a", name="Read", input=freeze({"path": "/etc/hosts"})),
        ToolCall(id="call_b", name="Glob", input=freeze({"pattern": "*.py"})),
        Usage(input_tokens=40, output_tokens=20, cache_read_input_tokens=60),
        Stop(stop_reason="tool_use"),
    ]


def test_empty_arguments_mean_an_empty_input() -> None:
    chunks = tool_call_stream((0, {"id": "c", "function": {"name": "Now", "arguments": ""}}))
    items, _ = run([Reply(chunks=chunks)])
    assert ToolCall(id="c", name="Now", input=freeze({})) in items


@pytest.mark.parametrize(
    ("arguments", "finish", "expected"),
    [
        (
            '{"a": ',
            "tool_calls",
            ProviderError(
                category="unknown", message="provider sent an invalid tool call (index 0)"
            ),
        ),
        (
            "[1, 2]",
            "tool_calls",
            ProviderError(
                category="unknown", message="provider sent an invalid tool call (index 0)"
            ),
        ),
        *(
            (
                arguments,
                "tool_calls",
                ProviderError(
                    category="unknown", message="provider sent an invalid tool call (index 0)"
                ),
            )
            # WIRE-014, and what no stdout record can carry (the assistant
            # record holding the call would be dropped).
            for arguments in ('{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e400}', '{"p": "\\ud800"}')
        ),
        ('{"a": ', "length", Stop(stop_reason="max_tokens")),
    ],
    ids=[
        "unparsable",
        "not-an-object",
        "duplicate-member",
        "nan",
        "overflow",
        "lone-surrogate",
        "truncated-by-length-dropped",
    ],
)
def test_invalid_tool_arguments(arguments: str, finish: str, expected: StreamItem) -> None:
    chunks = tool_call_stream(
        (0, {"id": "c", "function": {"name": "T", "arguments": arguments}}), finish=finish
    )
    items = semantic(run([Reply(chunks=chunks)])[0])
    assert items[-1] == expected
    assert not any(isinstance(i, ToolCall) for i in items)


@pytest.mark.parametrize(
    ("finish", "stop_reason"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("tool_calls", "tool_use"),
        ("content_filter", "refusal"),
        ("eos", "eos"),
    ],
    ids=["stop", "length", "tool_calls", "content_filter", "unknown-passes-through"],
)
def test_finish_reason_maps_to_stop_reason(finish: str, stop_reason: str) -> None:
    items, _ = run([Reply(chunks=openai_text_stream("x", finish_reason=finish))])
    assert items[-1] == Stop(stop_reason=stop_reason)


def test_missing_done_after_finish_still_completes() -> None:
    items, _ = run([Reply(chunks=openai_text_stream("x")[:-1])])
    assert items[-1] == Stop(stop_reason="end_turn")


@pytest.mark.parametrize(
    ("chunks", "then", "expected"),
    [
        (
            (openai_chunk({"content": "a"}), b"data: {not json\n\n"),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
        (
            # WIRE-014 reaches raw outbound projections: a stream_event would
            # otherwise carry an ambiguous object.
            (openai_chunk({"content": "a"}), b'data: {"choices": [], "choices": []}\n\n'),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
        (
            (openai_chunk({"content": "a"}),),
            "end",
            ProviderError(
                category="server_error", message="provider stream ended before a finish reason"
            ),
        ),
        (
            (openai_chunk({"content": "a"}),),
            "disconnect",
            ProviderError(
                category="server_error", message="provider stream interrupted (RemoteProtocolError)"
            ),
        ),
        (
            (
                openai_chunk({"content": "a"}),
                sse({"error": {"type": "server_error", "message": f"bad {KEY}"}}),
            ),
            "end",
            ProviderError(category="server_error", message="provider stream error: bad [redacted]"),
        ),
        (
            # Strict JSON accepts it, but no stdout record can carry it: the
            # assistant and result records would be dropped (WIRE-013).
            (openai_chunk({"content": "a"}), openai_chunk({"content": "\ud800"})),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
        (
            (
                openai_chunk({"content": "a"}),
                openai_chunk({"tool_calls": [{"index": "first", "id": "c"}]}),
            ),
            "end",
            ProviderError(category="unknown", message="provider sent a malformed stream event"),
        ),
    ],
    ids=[
        "malformed-event",
        "duplicate-member",
        "eof-before-finish",
        "mid-stream-disconnect",
        "error-event-redacted",
        "lone-surrogate",
        "wrong-shape",
    ],
)
def test_stream_failures_after_output_began(
    chunks: tuple[bytes, ...], then: str, expected: ProviderError
) -> None:
    items, server = run([Reply(chunks=chunks, then=then)])  # type: ignore[arg-type]
    assert semantic(items) == [TextDelta(text="a"), expected]
    assert len(server.requests) == 1  # never retried once output began


@pytest.mark.parametrize(
    ("status", "error", "category"),
    [
        (400, {"type": "invalid_request_error", "message": "bad"}, "invalid_request"),
        (
            401,
            {"type": "invalid_request_error", "code": "invalid_api_key", "message": "no"},
            "authentication_failed",
        ),
        (403, {"type": "permission_error", "message": "no"}, "authentication_failed"),
        (402, {"message": "pay"}, "billing_error"),
        (429, {"type": "insufficient_quota", "message": "quota"}, "billing_error"),
        (418, {"message": "teapot"}, "unknown"),
    ],
    ids=["400", "401", "403", "402", "429-insufficient-quota", "418"],
)
def test_http_status_maps_to_category_without_retry(
    status: int, error: dict[str, str], category: str
) -> None:
    items, server = run([json_reply(status, {"error": error})])
    assert items[-1] == ProviderError(
        category=category, message=f"provider returned HTTP {status}: {error['message']}"
    )  # type: ignore[arg-type]
    assert len(server.requests) == 1


def test_error_body_is_scrubbed_of_credentials() -> None:
    with ProviderServer([]) as server:
        endpoint = server.url + "/v1"
        message = f"Incorrect API key {KEY} for {endpoint} with {HEADER_SECRET}"
        server.script(json_reply(401, {"error": {"message": message}}))
        c = client(server)
        (error,) = c.stream(request(), EventCancelToken())
        c.close()
    assert error == ProviderError(
        category="authentication_failed",
        message="provider returned HTTP 401: "
        "Incorrect API key [redacted] for [redacted] with [redacted]",
    )


@pytest.mark.parametrize(
    ("remaining", "status"),
    [("11", "allowed"), ("10", "warning"), ("0", "warning")],
    ids=["11pct-left-allowed", "10pct-left-warning", "exhausted-warning"],
)
def test_rate_limit_headers(remaining: str, status: str) -> None:
    headers = (
        ("content-type", "text/event-stream"),
        ("x-ratelimit-limit-requests", "100"),
        ("x-ratelimit-remaining-requests", remaining),
        ("x-ratelimit-reset-requests", "1m30s"),
        ("x-ratelimit-limit-tokens", "1000"),
        ("x-ratelimit-remaining-tokens", "900"),
        ("x-ratelimit-reset-tokens", "20ms"),
    )
    items, _ = run([Reply(headers=headers, chunks=openai_text_stream("x"))])
    assert items[0] == RateLimit(
        status=status, resets_at=1090, utilization=1 - int(remaining) / 100
    )  # type: ignore[arg-type]


def test_no_rate_limit_headers_no_rate_limit_item() -> None:
    items, _ = run([Reply(chunks=openai_text_stream("x"))])
    assert not any(isinstance(i, RateLimit) for i in items)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1s", 1.0),
        ("6m0s", 360.0),
        ("20ms", 0.02),
        ("1h2m3.5s", 3723.5),
        ("soon", None),
        ("", None),
    ],
)
def test_reset_seconds(text: str, seconds: float | None) -> None:
    assert reset_seconds(text) == seconds


@pytest.mark.parametrize("phase", ["before-headers", "mid-stream"])
def test_cancel_reaches_a_blocked_read_within_100ms(phase: str) -> None:
    reply = (
        Reply(hang_before_headers=True)
        if phase == "before-headers"
        else Reply(chunks=(openai_chunk({"content": "partial"}),), then="hang")
    )
    with ProviderServer([reply]) as server:
        c = client(server)
        token = EventCancelToken()
        outcome = drain_cancelled(
            c.stream(request(), token),
            token,
            server.hanging,
            after=None if phase == "before-headers" else lambda item: isinstance(item, TextDelta),
        )
        c.close()
    assert outcome.raised_cancelled
    assert outcome.latency < 0.1
    if phase == "mid-stream":
        assert TextDelta(text="partial") in outcome.items


def test_cancel_before_start_raises_without_a_request() -> None:
    token = EventCancelToken()
    token.cancel()
    with ProviderServer([Reply(chunks=openai_text_stream("x"))]) as server:
        c = client(server)
        with pytest.raises(Cancelled):
            list(c.stream(request(), token))
        c.close()
    assert server.requests == []
