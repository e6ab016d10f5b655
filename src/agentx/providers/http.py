"""Shared streaming HTTP for the provider clients (DEC-AUTH-2).

One :class:`EventStreamPoster` POSTs a JSON body and yields the response
headers followed by the server-sent events of the body. It owns four concerns
the OpenAI and Anthropic clients share:

* **Retries** (tenacity): a connect or transport failure before the first body
  byte, HTTP 429 (its ``retry-after`` / ``retry-after-ms`` honoured) and
  5xx/529 are retried, at most :attr:`RetryPolicy.attempts` attempts in all,
  with jittered exponential backoff. Nothing is retried once a body byte has
  arrived: the caller may already have yielded output. Each retry logs one
  credential-free WARN on stderr (the standalone profile writes no
  ``system/api_retry`` records, "System and lifecycle events") and tells the
  call's ``on_retry`` a :class:`~agentx.providers.base.RetryNotice` (the
  ``sdk`` and ``extended`` profiles write the record). The WARN names the
  provider type, the HTTP status or exception class, and the wait; never the
  key, a header, or the endpoint URL.
* **Cancellation** (WIRE-010): the token's callback shuts down every
  socket of the call, so a read blocked on headers or body returns at once,
  and it wakes an interruptible retry wait. Keep-alive is off, so each call
  owns its sockets from the TCP connect on (captured through httpx's ``trace``
  extension); the price is one handshake per model call.
* **Deadline** (DEC-AUTH-2 ``timeout_ms``, DECISIONS section 8): besides the
  idle read timeout, each call has one overall deadline from connect to last
  byte that covers the retries and their waits too. Every connection of the
  call works under it (:func:`~agentx.providers.net_deadline.call_deadline`):
  each connect, TLS handshake, write and read, the response headers
  included, gets at most what is left, so a provider trickling its headers
  or body cannot hold a call past it. It is also checked at every body
  arrival, and a retry wait never outlasts it. An expired call is a
  ``server_error`` whose message names only the limit.
* **Error mapping and redaction** (:mod:`agentx.providers.errors`): a failed
  response becomes one :class:`~agentx.providers.errors.ProviderHTTPError`
  with a bounded, credential-free message.

The body is decoded by :class:`~agentx.providers.sse.SSEDecoder`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

import httpx
import ujson
from msgspec import Struct, field
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt
from tenacity.wait import WaitBaseT, wait_random_exponential

from agentx import __version__
from agentx.diagnostics import logger
from agentx.messages.user_agent import user_agent
from agentx.providers.base import Cancelled, CancelToken, RetryNotice
from agentx.providers.errors import (
    MAX_ERROR_TEXT,
    ProviderHTTPError,
    Redactor,
    category_for_error_type,
    category_for_status,
)
from agentx.providers.net_deadline import call_deadline, install_call_deadlines
from agentx.providers.sse import EventTooLarge, ServerSentEvent, SSEDecoder

#: Statuses retried before the first body byte (529: Anthropic "overloaded").
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 529})
#: Error-body bytes read from a failed response.
MAX_ERROR_BODY = 65_536
#: The overall deadline of one call in seconds (DEC-AUTH-2 ``timeout_ms`` default).
DEFAULT_DEADLINE = 600.0


class RetryPolicy(Struct, frozen=True, kw_only=True):
    """Bounded retries before the first body byte (DEC-AUTH-2).

    ``wait`` is any tenacity wait strategy (tests inject a tiny one); a
    ``retry-after`` header overrides it. A ``retry-after`` longer than
    ``max_retry_after`` seconds is not waited for: the call fails at once.
    """

    attempts: int = 3
    wait: WaitBaseT = field(
        default_factory=lambda: wait_random_exponential(multiplier=0.5, max=8.0)
    )
    max_retry_after: float = 30.0


class _CallGuard:
    """Per-call cancellation and deadline: socket shutdown plus an interruptible wait."""

    def __init__(self, deadline: float, limit: float) -> None:
        #: The call's deadline, a ``time.monotonic`` value.
        self.deadline = deadline
        self._limit = limit
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []

    def cancel(self) -> None:
        self._event.set()
        with self._lock:
            sockets = tuple(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        """httpx ``trace`` hook: remember each socket this call opens."""
        if name not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        sock = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._sockets.append(sock)
        if self._event.is_set():
            _shutdown(sock)

    def sleep(self, seconds: float) -> None:
        """tenacity's sleep: a retry wait that a cancel or the deadline cuts short."""
        remaining = self.deadline - time.monotonic()
        if self._event.wait(max(0.0, min(seconds, remaining))):
            raise Cancelled
        self.check()

    def check(self) -> None:
        """Raise :class:`Cancelled` after a cancel, and the deadline error past it."""
        if self._event.is_set():
            raise Cancelled
        if time.monotonic() >= self.deadline:
            raise ProviderHTTPError(
                "server_error",
                f"provider request exceeded its overall deadline ({self._limit * 1000:.0f} ms)",
            )

    def release(self) -> None:
        with self._lock:
            self._sockets.clear()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the reading thread
        sock.shutdown(socket.SHUT_RDWR)


class _Retryable(Exception):
    def __init__(self, failure: ProviderHTTPError, retry_after: float | None = None) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.retry_after = retry_after


class _Opened(Struct, frozen=True, kw_only=True):
    response: httpx.Response
    chunks: Iterator[bytes]
    first: bytes


def unreachable(exc: BaseException) -> str | None:
    """``connection refused`` or ``name not resolved`` when that is what a
    transport failure was (found along its causes), else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, socket.gaierror):
            return "name not resolved"
        current = current.__cause__ or current.__context__
    return None


class EventStreamPoster:
    """POSTs JSON and streams server-sent events, with retries and cancel.

    ``label`` (the provider type, e.g. ``"openai"``) is the only route detail
    a retry WARN names.
    """

    def __init__(
        self,
        *,
        label: str,
        redact: Redactor,
        retry: RetryPolicy,
        provider_id: str = "",
        connect_timeout: float,
        read_timeout: float,
        deadline: float = DEFAULT_DEADLINE,
    ) -> None:
        self._label = label
        self._provider_id = provider_id
        self._redact = redact
        self._retry = retry
        self._deadline = deadline
        self._client = httpx.Client(
            timeout=httpx.Timeout(
                min(read_timeout, deadline), connect=min(connect_timeout, deadline)
            ),
            limits=httpx.Limits(max_keepalive_connections=0),
            # The SDK application's name reaches the User-Agent (client_app).
            headers={"user-agent": user_agent(__version__, os.environ)},
        )
        install_call_deadlines(self._client)

    @property
    def deadline(self) -> float:
        """The overall deadline of one call in seconds (DEC-AUTH-2 ``timeout_ms``)."""
        return self._deadline

    def close(self) -> None:
        self._client.close()

    def post(
        self,
        url: str,
        headers: Mapping[str, str],
        body: bytes,
        cancel: CancelToken,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> Generator[httpx.Headers | ServerSentEvent, None, None]:
        """Yield the 2xx response headers, then each event of the body.

        Raise :class:`ProviderHTTPError` for a terminal failure and
        :class:`~agentx.providers.base.Cancelled` once ``cancel`` fired.
        ``on_retry`` hears of each retry before its wait.
        """
        guard = _CallGuard(time.monotonic() + self._deadline, self._deadline)
        cancel.on_cancel(guard.cancel)
        request = self._client.build_request(
            "POST", url, headers=headers, content=body, extensions={"trace": guard.trace}
        )
        retrying = Retrying(
            stop=stop_after_attempt(self._retry.attempts),
            wait=self._wait,
            retry=retry_if_exception_type(_Retryable),
            sleep=guard.sleep,
            before_sleep=lambda state: self._warn(state, on_retry),
            reraise=True,
        )
        try:
            try:
                opened = retrying(self._attempt, guard, request)
            except _Retryable as exhausted:
                raise exhausted.failure from None
            try:
                yield opened.response.headers
                yield from self._events(guard, opened)
            finally:
                opened.response.close()
        finally:
            guard.release()

    def _attempt(self, guard: _CallGuard, request: httpx.Request) -> _Opened:
        guard.check()
        try:
            with call_deadline(guard.deadline):
                response = self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            guard.check()
            raise self._transport_failure(exc, "provider connection failed") from None
        if not response.is_success:
            raise self._status_failure(guard, response)
        # Without a content coding the raw body is the body: iter_raw skips the
        # identity decoder and re-chunker iter_bytes runs for every chunk.
        coded = response.headers.get("content-encoding", "identity").strip().lower()
        chunks = response.iter_bytes() if coded != "identity" else response.iter_raw()
        try:
            first = next(chunks, b"")
        except httpx.TransportError as exc:
            response.close()
            guard.check()
            raise self._transport_failure(exc, "provider connection failed") from None
        return _Opened(response=response, chunks=chunks, first=first)

    def _transport_failure(self, exc: httpx.TransportError, what: str) -> Exception:
        unreached = unreachable(exc)
        if unreached is not None:
            # The server never answered: not its error. Say what happened and
            # which provider, never the endpoint (routing data, DEC-AUTH-3a).
            named = f'provider "{self._provider_id}": ' if self._provider_id else ""
            return _Retryable(ProviderHTTPError("unknown", f"{named}{unreached}"))
        failure = ProviderHTTPError("server_error", f"{what} ({type(exc).__name__})")
        retryable = isinstance(
            exc, httpx.NetworkError | httpx.TimeoutException | httpx.RemoteProtocolError
        )
        return _Retryable(failure) if retryable else failure

    def _status_failure(self, guard: _CallGuard, response: httpx.Response) -> Exception:
        body = bytearray()
        try:
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) >= MAX_ERROR_BODY:
                    break
        except httpx.TransportError:
            guard.check()
        finally:
            response.close()
        guard.check()
        status = response.status_code
        kind, detail = _error_detail(bytes(body[:MAX_ERROR_BODY]))
        category = category_for_status(status)
        typed = category_for_error_type(kind)
        if typed == "billing_error" or category == "unknown":
            category = typed  # OpenAI sends an exhausted quota as 429 insufficient_quota
        text = f"provider returned HTTP {status}"
        if detail:
            text += ": " + self._redact(detail)[:MAX_ERROR_TEXT]
        failure = ProviderHTTPError(category, text, status=status, headers=response.headers)
        if status not in RETRYABLE_STATUS or category == "billing_error":
            return failure
        retry_after = _retry_after(response.headers)
        if retry_after is not None and retry_after > self._retry.max_retry_after:
            return failure
        return _Retryable(failure, retry_after)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, _Retryable) and error.retry_after is not None:
            return error.retry_after
        return float(self._retry.wait(state))

    def _warn(self, state: RetryCallState, on_retry: Callable[[RetryNotice], None] | None) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        reason = error.failure.message if isinstance(error, _Retryable) else "failure"
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        if on_retry is not None:
            failure = error.failure if isinstance(error, _Retryable) else None
            on_retry(
                RetryNotice(
                    attempt=state.attempt_number,
                    max_retries=self._retry.attempts - 1,
                    retry_delay_ms=round(wait * 1000),
                    error_status=failure.status if failure is not None else None,
                    error=failure.category if failure is not None else "unknown",
                )
            )
        logger.warning(
            "{} provider request failed ({}); retry {} of {} in {:.2f}s",
            self._label,
            reason.split(":", 1)[0],
            state.attempt_number,
            self._retry.attempts - 1,
            wait,
        )

    def _events(self, guard: _CallGuard, opened: _Opened) -> Iterator[ServerSentEvent]:
        decoder = SSEDecoder()
        chunk = opened.first
        while chunk:
            guard.check()
            try:
                events = decoder.feed(chunk)
            except UnicodeDecodeError:
                raise ProviderHTTPError("unknown", "provider stream is not UTF-8") from None
            except EventTooLarge as exc:
                raise ProviderHTTPError("unknown", str(exc)) from None
            yield from events
            try:
                chunk = next(opened.chunks, b"")
            except httpx.TransportError as exc:
                guard.check()
                raise ProviderHTTPError(
                    "server_error", f"provider stream interrupted ({type(exc).__name__})"
                ) from None
        guard.check()
        try:
            yield from decoder.end()
        except UnicodeDecodeError:
            raise ProviderHTTPError("unknown", "provider stream is not UTF-8") from None
        except EventTooLarge as exc:
            raise ProviderHTTPError("unknown", str(exc)) from None


def _error_detail(body: bytes) -> tuple[str | None, str]:
    """(error type, message) from an OpenAI/Anthropic-style error body."""
    try:
        parsed = ujson.loads(body)
    except ValueError:
        return None, ""
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return None, ""
    kind = error.get("type") or error.get("code")
    message = error.get("message")
    return (
        kind if isinstance(kind, str) else None,
        message if isinstance(message, str) else "",
    )


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from ``retry-after-ms`` (OpenAI) or ``retry-after`` (seconds form)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None


def json_body(payload: Mapping[str, Any]) -> bytes:
    """Encode a request body (base64 media stays inside it, WIRE-022)."""
    return ujson.dumps(payload, ensure_ascii=False, escape_forward_slashes=False).encode()
