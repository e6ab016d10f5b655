"""Shared provider transport: retries, WARN hygiene, SSE, error mapping (DEC-AUTH-2)."""

from __future__ import annotations

import itertools
import socket
import threading
import time
import zlib
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from loguru import logger
from tenacity import wait_fixed, wait_none

from agentx.providers.base import (
    Cancelled,
    ModelRequest,
    ProviderError,
    RateLimit,
    Stop,
    StreamItem,
    TextDelta,
    Usage,
)
from agentx.providers.errors import Redactor, category_for_error_type, category_for_status
from agentx.providers.http import RetryPolicy
from agentx.providers.openai import OpenAIClient
from agentx.providers.sse import MAX_EVENT_CHARS, EventTooLarge, ServerSentEvent, SSEDecoder
from tests.fakes.cancel import EventCancelToken
from tests.fakes.cancelling import drain_cancelled
from tests.fakes.provider_server import ProviderServer, Reply, json_reply, openai_text_stream

KEY = "sk-SENTINEL-retry-key"
HEADER_SECRET = "hdr-SENTINEL-retry"
REQUEST = ModelRequest(model="m", system="", messages=())


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """Every WARN message the transport logs through loguru."""
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
    yield lines
    logger.remove(sink)


def client(url: str, policy: RetryPolicy | None = None, read_timeout: float = 30.0) -> OpenAIClient:
    return OpenAIClient(
        url + "/v1",
        KEY,
        {"X-Extra": HEADER_SECRET},
        "m",
        retry=policy or RetryPolicy(wait=wait_none()),
        read_timeout=read_timeout,
    )


def run(
    replies: list[Reply], policy: RetryPolicy | None = None, read_timeout: float = 30.0
) -> tuple[list[StreamItem], ProviderServer]:
    with ProviderServer(replies) as server:
        c = client(server.url, policy, read_timeout)
        items = list(c.stream(REQUEST, EventCancelToken()))
        c.close()
    return items, server


ERROR_500 = json_reply(500, {"error": {"type": "server_error", "message": "boom"}})
ERROR_503 = json_reply(503, {})
OK = Reply(chunks=openai_text_stream("ok"))


@pytest.mark.parametrize(
    ("replies", "requests", "last"),
    [
        ([ERROR_500, OK], 2, Stop(stop_reason="end_turn")),
        ([ERROR_500, ERROR_503, OK], 3, Stop(stop_reason="end_turn")),
        (
            [ERROR_500, ERROR_503, ERROR_500],
            3,
            ProviderError(category="server_error", message="provider returned HTTP 500: boom"),
        ),
        ([json_reply(429, {}, [("retry-after", "0")]), OK], 2, Stop(stop_reason="end_turn")),
        ([Reply(then="disconnect"), OK], 2, Stop(stop_reason="end_turn")),
    ],
    ids=[
        "500-then-ok",
        "ok-on-third-attempt-at-limit",
        "three-failures-one-past-limit",
        "429-retry-after-0",
        "disconnect-before-first-byte",
    ],
)
def test_retries_before_first_byte(
    replies: list[Reply], requests: int, last: StreamItem, warnings: list[str]
) -> None:
    items, server = run(replies)
    assert items[-1] == last
    assert len(server.requests) == requests
    assert len(warnings) == requests - 1
    assert [r.body for r in server.requests] == [server.requests[0].body] * requests


def test_exhausted_429_is_rate_limit_with_rejected_state(warnings: list[str]) -> None:
    rejected = json_reply(
        429,
        {"error": {"type": "rate_limit_exceeded", "message": "slow down"}},
        [
            ("retry-after", "0"),
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-remaining-requests", "0"),
        ],
    )
    items, server = run([rejected])
    assert items == [
        RateLimit(status="rejected", resets_at=None, utilization=1.0),
        ProviderError(category="rate_limit", message="provider returned HTTP 429: slow down"),
    ]
    assert len(server.requests) == 3
    assert warnings == [
        "openai provider request failed (provider returned HTTP 429); retry 1 of 2 in 0.00s",
        "openai provider request failed (provider returned HTTP 429); retry 2 of 2 in 0.00s",
    ]


def test_retry_after_overrides_the_backoff(warnings: list[str]) -> None:
    """The injected wait would take 25 s; retry-after-ms says 1 ms."""
    replies = [json_reply(503, {}, [("retry-after-ms", "1")]), OK]
    items, _ = run(replies, RetryPolicy(wait=wait_fixed(25)))
    assert items[-1] == Stop(stop_reason="end_turn")
    assert warnings[0].endswith("retry 1 of 2 in 0.00s")


def test_backoff_without_retry_after_uses_the_injected_wait(warnings: list[str]) -> None:
    run([ERROR_503, OK], RetryPolicy(wait=wait_fixed(0.01)))
    assert warnings == [
        "openai provider request failed (provider returned HTTP 503); retry 1 of 2 in 0.01s"
    ]


def test_retry_after_past_the_cap_fails_at_once(warnings: list[str]) -> None:
    items, server = run([json_reply(429, {}, [("retry-after", "31")]), OK])
    assert items[-1] == ProviderError(category="rate_limit", message="provider returned HTTP 429")
    assert len(server.requests) == 1
    assert warnings == []


@pytest.mark.parametrize("retry_after", ["30", "20"], ids=["at-cap", "below-cap"])
def test_cancel_interrupts_a_retry_wait_within_100ms(retry_after: str) -> None:
    warned = threading.Event()
    sink = logger.add(lambda _m: warned.set(), level="WARNING")
    try:
        with ProviderServer([json_reply(429, {}, [("retry-after", retry_after)]), OK]) as server:
            c = client(server.url)
            token = EventCancelToken()
            outcome = drain_cancelled(c.stream(REQUEST, token), token, warned)
            c.close()
    finally:
        logger.remove(sink)
    assert outcome.raised_cancelled
    assert outcome.latency < 0.1
    assert len(server.requests) == 1


def test_connect_refused_is_retried_then_says_so(warnings: list[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    c = client(f"http://127.0.0.1:{port}")
    items = list(c.stream(REQUEST, EventCancelToken()))
    c.close()
    # Not the server's error: the server never answered (no provider id given here).
    assert items == [ProviderError(category="unknown", message="connection refused")]
    assert len(warnings) == 2


def test_read_timeout_before_headers_is_retried(warnings: list[str]) -> None:
    items, server = run([Reply(hang_before_headers=True)], read_timeout=0.05)
    assert items == [
        ProviderError(category="server_error", message="provider connection failed (ReadTimeout)")
    ]
    assert len(server.requests) == 3


def test_stall_after_output_began_is_not_retried(warnings: list[str]) -> None:
    items, server = run([Reply(chunks=openai_text_stream("a")[:2], then="hang")], read_timeout=0.05)
    assert items[-1] == ProviderError(
        category="server_error", message="provider stream interrupted (ReadTimeout)"
    )
    assert len(server.requests) == 1
    assert warnings == []


def test_retry_warnings_are_credential_free(
    warnings: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    """Regression guard: a WARN must never carry the key, a header, or the endpoint."""
    body = {"error": {"message": f"key {KEY} hdr {HEADER_SECRET}"}}
    with ProviderServer([]) as server:
        server.script(json_reply(500, body), json_reply(502, body), OK)
        c = client(server.url)
        items = list(c.stream(REQUEST, EventCancelToken()))
        c.close()
    assert items[-1] == Stop(stop_reason="end_turn")
    captured = capfd.readouterr()
    assert len(warnings) == 2
    for text in (*warnings, captured.err, captured.out):
        for secret in (KEY, HEADER_SECRET, server.url, "127.0.0.1", "/v1"):
            assert secret not in text


@pytest.mark.parametrize(
    ("status", "category"),
    [
        (400, "invalid_request"),
        (401, "authentication_failed"),
        (402, "billing_error"),
        (403, "authentication_failed"),
        (404, "invalid_request"),
        (413, "invalid_request"),
        (429, "rate_limit"),
        (500, "server_error"),
        (529, "server_error"),
        (499, "unknown"),
    ],
)
def test_category_for_status(status: int, category: str) -> None:
    assert category_for_status(status) == category


@pytest.mark.parametrize(
    ("kind", "category"),
    [
        ("overloaded_error", "server_error"),
        ("insufficient_quota", "billing_error"),
        ("authentication_error", "authentication_failed"),
        ("rate_limit_error", "rate_limit"),
        ("something_new", "unknown"),
        (None, "unknown"),
    ],
)
def test_category_for_error_type(kind: str | None, category: str) -> None:
    assert category_for_error_type(kind) == category


def test_redactor_replaces_raw_and_json_escaped_spellings_longest_first() -> None:
    redact = Redactor(("https://host/v1", "https://host", "", 'q"t'))
    assert redact('at https://host/v1, https:\\/\\/host, https://hostname, q\\"t') == (
        "at [redacted], [redacted], [redacted]name, [redacted]"
    )
    assert redact("no secrets") == "no secrets"


# --- SSE decoding ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "events"),
    [
        (b"data: a\n\n", [ServerSentEvent(event="message", data="a")]),
        (b"event: x\ndata: a\ndata: b\n\n", [ServerSentEvent(event="x", data="a\nb")]),
        (
            b"data:a\r\n\r\ndata: b\r\rdata: c\n\n",
            [
                ServerSentEvent(event="message", data="a"),
                ServerSentEvent(event="message", data="b"),
                ServerSentEvent(event="message", data="c"),
            ],
        ),
        (b": comment\nid: 1\nretry: 5\ndata: a\n\n", [ServerSentEvent(event="message", data="a")]),
        (b"event: lone\n\ndata: a\n\n", [ServerSentEvent(event="message", data="a")]),
        (b"data: partial", []),
        (b"data:  two spaces\n\n", [ServerSentEvent(event="message", data=" two spaces")]),
    ],
    ids=[
        "lf",
        "multi-data",
        "crlf-and-cr",
        "fields-ignored",
        "no-data-no-event",
        "partial-dropped",
        "one-space-stripped",
    ],
)
def test_sse_decoder(raw: bytes, events: list[ServerSentEvent]) -> None:
    assert SSEDecoder().feed(raw) == events


@pytest.mark.parametrize(
    ("raw", "events"),
    [
        (b"data: a\r\r", [ServerSentEvent(event="message", data="a")]),
        (b"data: a\n", []),
        (b"data: a", []),
    ],
    ids=["cr-terminated-last-event", "unterminated-event-dropped", "partial-line-dropped"],
)
def test_sse_decoder_end(raw: bytes, events: list[ServerSentEvent]) -> None:
    decoder = SSEDecoder()
    assert decoder.feed(raw) == []
    assert decoder.end() == events


def _coded(coding: str, chunks: tuple[bytes, ...]) -> tuple[bytes, ...]:
    """``chunks`` under a content coding, one flushed piece per chunk."""
    if coding in ("", "identity"):
        return chunks
    coder = zlib.compressobj(wbits={"gzip": 31, "deflate": 15}[coding])
    pieces = [coder.compress(chunk) + coder.flush(zlib.Z_SYNC_FLUSH) for chunk in chunks]
    return (*pieces, coder.flush())


@pytest.mark.parametrize(
    "coding", ["", "identity", "gzip", "deflate"], ids=["none", "identity", "gzip", "deflate"]
)
def test_content_coded_streams_decode_alike(coding: str) -> None:
    headers = (("content-type", "text/event-stream"),)
    if coding:
        headers += (("content-encoding", coding),)
    chunks = _coded(coding, openai_text_stream("Hel", "lo"))
    items, _ = run([Reply(headers=headers, chunks=chunks)])
    assert [i for i in items if not isinstance(i, RateLimit)] == [
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        Usage(input_tokens=11, output_tokens=7),
        Stop(stop_reason="end_turn"),
    ]


def _fed(decoder: SSEDecoder, raw: bytes, step: int) -> list[ServerSentEvent]:
    return [e for i in range(0, len(raw), step) for e in decoder.feed(raw[i : i + step])]


@pytest.mark.parametrize("lines", [1, 2], ids=["one-line", "two-lines"])
@pytest.mark.parametrize("step", [None, 64 * 1024], ids=["whole", "64KiB-chunks"])
@pytest.mark.parametrize("extra", [0, 1], ids=["at-the-limit", "one-past"])
def test_sse_event_data_is_bounded_at_the_limit_and_one_past(
    lines: int, step: int | None, extra: int
) -> None:
    """DECISIONS section 8: an event's data of MAX_EVENT_CHARS (its lines
    joined with LF) is decoded, one character more is a bounded error: a
    provider cannot grow agentx's memory with one endless event."""
    size = MAX_EVENT_CHARS + extra - (lines - 1)
    half = size // lines
    values = ["a" * half, "a" * (size - half)] if lines == 2 else ["a" * size]
    raw = "".join(f"data: {v}\n" for v in values).encode() + b"\n"
    decoder = SSEDecoder()
    if extra:
        with pytest.raises(EventTooLarge):
            _fed(decoder, raw, step or len(raw))
    else:
        events = _fed(decoder, raw, step or len(raw))
        assert [len(e.data) for e in events] == [MAX_EVENT_CHARS]


def test_an_endless_line_is_refused_once_past_the_bound() -> None:
    """A line that never ends is held as its pieces (no copy per chunk) and
    refused once past the bound, before the stream ends."""
    decoder = SSEDecoder()
    chunk = b"a" * (1024 * 1024)
    with pytest.raises(EventTooLarge):
        for _ in range(64):
            decoder.feed(chunk)


def test_sse_decoder_rejects_invalid_utf8() -> None:
    with pytest.raises(UnicodeDecodeError):
        SSEDecoder().feed(b"data: \xff\n\n")


@given(
    data=st.lists(
        st.text(
            alphabet=st.characters(exclude_characters="\r\n", exclude_categories=("Cs",)),
            max_size=20,
        ),
        max_size=6,
    ),
    ending=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=10),
)
def test_sse_decoder_is_independent_of_chunk_boundaries(
    data: list[str], ending: str, cuts: list[int]
) -> None:
    raw = "".join(f"data: {d}{ending}{ending}" for d in data).encode()
    closer = SSEDecoder()
    whole = closer.feed(raw)
    decoder = SSEDecoder()
    pieces: list[ServerSentEvent] = []
    edges = [0, *sorted(c for c in cuts if c < len(raw)), len(raw)]
    for start, end in itertools.pairwise(edges):
        pieces.extend(decoder.feed(raw[start:end]))
    pieces.extend(decoder.end())
    assert pieces == [*whole, *closer.end()]
    assert [e.data for e in pieces] == data


def test_cancelled_is_raised_not_yielded() -> None:
    token = EventCancelToken()
    token.cancel()
    with ProviderServer([OK]) as server:
        c = client(server.url)
        with pytest.raises(Cancelled):
            next(iter(c.stream(REQUEST, token)))
        c.close()


DEADLINE_ERROR = ProviderError(
    category="server_error",
    message="provider request exceeded its overall deadline (500 ms)",
)


@pytest.mark.parametrize(
    ("replies", "requests"),
    [
        pytest.param([json_reply(429, {}, [("retry-after", "20")]), OK], 1, id="retry-wait"),
        pytest.param(
            [Reply(chunks=openai_text_stream("x")[:2], then="keepalive")], 1, id="keepalive"
        ),
        pytest.param([Reply(hang_before_headers=True)], 1, id="silent-before-headers"),
    ],
)
def test_the_overall_deadline_bounds_waits_retries_and_keepalives(
    replies: list[Reply], requests: int
) -> None:
    """DEC-AUTH-2 ``timeout_ms``: a 20 s retry-after, keep-alive comments that
    reset the idle read timeout, a server that never answers: each call ends
    with the deadline error (at most one deadline late, never one read timeout)."""
    with ProviderServer(replies) as server:
        c = OpenAIClient(
            server.url + "/v1",
            KEY,
            {},
            "m",
            retry=RetryPolicy(wait=wait_none()),
            read_timeout=30.0,
            deadline=0.5,
        )
        began = time.monotonic()
        items = list(c.stream(REQUEST, EventCancelToken()))
        took = time.monotonic() - began
        c.close()
    assert items[-1] == DEADLINE_ERROR
    assert 0.5 <= took < 1.5
    assert len(server.requests) == requests
