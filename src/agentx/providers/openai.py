"""Chat Completions client: OpenAI-compatible servers and Azure OpenAI (DEC-AUTH-2).

Routes (DEC-AUTH-2):

* ``openai``: ``endpoint`` is the API base *including* its version path, as in
  the OpenAI SDKs' ``base_url`` (``https://api.openai.com/v1``,
  ``http://localhost:11434/v1`` for Ollama); we POST
  ``{endpoint}/chat/completions`` with ``Authorization: Bearer <key>``.
* ``azure_openai`` (:class:`AzureRoute`): ``endpoint`` is the resource root;
  we POST ``{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``
  with an ``api-key`` header.

The body asks for ``stream: true`` and ``stream_options.include_usage``, caps
output with ``max_completion_tokens`` (the name reasoning models require), and
carries ``reasoning_effort`` when the request has an effort. Images travel as
``image_url`` data-URL parts and PDFs as ``file`` parts, inside the request body
only (DECISIONS 7 projection, WIRE-022;
:mod:`agentx.providers.openai_messages`).

Stream items: a :class:`RawEvent` for every JSON chunk when the request asks
for stream events (``--include-partial-messages``), then what it means.
Tool calls are assembled from index-keyed deltas (arguments concatenated) and
parsed when the choice finishes; arguments that are not a JSON object are a
``ProviderError`` ``unknown`` unless the output was cut by the token limit, in
which case the truncated call is dropped and the stop reason says why.
Finish reasons map to the Anthropic-shaped stop reasons of DECISIONS 11:
``stop`` -> ``end_turn``, ``length`` -> ``max_tokens`` (the turn runner marks
that assistant message ``max_output_tokens``), ``tool_calls`` -> ``tool_use``,
``content_filter`` -> ``refusal``. Usage maps ``prompt_tokens`` minus cached
tokens to ``input_tokens`` and cached tokens to ``cache_read_input_tokens``.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
from msgspec import Struct, field

from agentx.messages.frozen import thaw
from agentx.providers.base import (
    CancelToken,
    ErrorCategory,
    ModelRequest,
    ProviderError,
    RateLimit,
    RawEvent,
    Stop,
    StreamItem,
    TextDelta,
    ToolCall,
    Usage,
)
from agentx.providers.errors import (
    MALFORMED_EVENT,
    MAX_ERROR_TEXT,
    ProviderHTTPError,
    Redactor,
    category_for_error_type,
)
from agentx.providers.event_json import json_object
from agentx.providers.http import DEFAULT_DEADLINE, EventStreamPoster, RetryPolicy, json_body
from agentx.providers.openai_messages import chat_messages
from agentx.providers.rate_limits import LimitWindow, header_number, rate_limit_state
from agentx.providers.sse import ServerSentEvent

_STOP_REASONS: Mapping[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


class AzureRoute(Struct, frozen=True, kw_only=True):
    """The Azure OpenAI deployment route (DEC-AUTH-2 ``azure_openai``)."""

    deployment: str
    api_version: str


class OpenAIClient:
    """A :class:`~agentx.providers.base.ProviderClient` for Chat Completions.

    ``model`` is the profile's model, sent in every body (the provider is
    process-fixed, DEC-SET-2); Azure routes by deployment and ignores it.
    ``clock`` (epoch seconds) turns ``x-ratelimit-reset-*`` durations into
    ``resets_at``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        headers: Mapping[str, str],
        model: str,
        *,
        azure: AzureRoute | None = None,
        retry: RetryPolicy | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        deadline: float = DEFAULT_DEADLINE,
        clock: Callable[[], float] = time.time,
        provider_id: str = "",
    ) -> None:
        endpoint = base_url.rstrip("/")
        self._model = model
        self._clock = clock
        self._headers = httpx.Headers(dict(headers))
        self._headers["accept"] = "text/event-stream"
        self._headers["content-type"] = "application/json"
        secrets = (api_key, base_url, *headers.values())
        if azure is None:
            self._url = httpx.URL(f"{endpoint}/chat/completions")
            if api_key:  # a keyless local server (vLLM, llama.cpp) gets no header
                self._headers["authorization"] = f"Bearer {api_key}"
        else:
            self._url = httpx.URL(
                f"{endpoint}/openai/deployments/{azure.deployment}/chat/completions",
                params={"api-version": azure.api_version},
            )
            if api_key:
                self._headers["api-key"] = api_key
            secrets += (azure.deployment, azure.api_version)
        self._redact = Redactor(secrets)
        self._poster = EventStreamPoster(
            label="azure_openai" if azure else "openai",
            provider_id=provider_id,
            redact=self._redact,
            retry=retry or RetryPolicy(),
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            deadline=deadline,
        )

    @property
    def deadline(self) -> float:
        """The overall deadline of one request in seconds (DEC-AUTH-2 ``timeout_ms``)."""
        return self._poster.deadline

    def close(self) -> None:
        self._poster.close()

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The Chat Completions body for ``request`` (DECISIONS 7 projection)."""
        body: dict[str, Any] = {
            "model": request.model or self._model,
            "messages": chat_messages(request),
            "max_completion_tokens": request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": thaw(tool.input_schema),
                    },
                }
                for tool in request.tools
            ]
        if request.effort is not None:
            body["reasoning_effort"] = request.effort
        return body

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        """Yield one call's items; it ends with ``Stop`` or ``ProviderError``."""
        body = json_body(self.request_body(request))
        events = self._poster.post(str(self._url), self._headers, body, cancel, request.on_retry)
        state = _ChatStream(self._redact)
        with contextlib.closing(events):
            try:
                for item in events:
                    # Events first: httpx.Headers is an ABC, its isinstance slow.
                    if not isinstance(item, ServerSentEvent):
                        limit = openai_rate_limit(item, now=self._clock(), rejected=False)
                        if limit is not None:
                            yield limit
                    elif item.data == "[DONE]":
                        break
                    else:
                        yield from state.on_event(item.data, raw=request.stream_events)
                        if state.failed:
                            return
            except ProviderHTTPError as exc:
                if exc.status == 429 and exc.headers is not None:
                    limit = openai_rate_limit(exc.headers, now=self._clock(), rejected=True)
                    if limit is not None:
                        yield limit
                yield ProviderError(
                    category=exc.category, message=exc.message, overloaded=exc.overloaded
                )
                return
        yield from state.finish()


class _PendingCall(Struct, kw_only=True):
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ChatStream:
    """Folds ``chat.completion.chunk`` events into stream items."""

    def __init__(self, redact: Redactor) -> None:
        self._redact = redact
        self._calls: dict[int, _PendingCall] = {}
        self._finish: str | None = None
        self.failed = False

    def on_event(self, data: str, *, raw: bool) -> list[StreamItem]:
        """The items one chunk means, a :class:`RawEvent` first when ``raw``.

        A list, not a generator: this runs once per streamed delta.
        """
        chunk = json_object(data)
        if chunk is None:
            return [self._fail("unknown", MALFORMED_EVENT)]
        items: list[StreamItem] = [RawEvent(event=chunk)] if raw else []
        error = chunk.get("error")
        if isinstance(error, dict):
            kind = error.get("type") or error.get("code")
            message = error.get("message")
            text = (
                self._redact(message)[:MAX_ERROR_TEXT]
                if isinstance(message, str)
                else "stream error"
            )
            category = category_for_error_type(kind if isinstance(kind, str) else None)
            items.append(self._fail(category, f"provider stream error: {text}"))
            return items
        try:  # a chunk whose members have the wrong shapes is malformed too
            for choice in chunk.get("choices") or ():
                self._on_choice(choice, items)
            usage = chunk.get("usage")
            if isinstance(usage, dict) and not self.failed:
                items.append(_usage(usage))
        except (AttributeError, TypeError, ValueError):
            del items[int(raw) :]  # the RawEvent stays; what the chunk meant does not
            items.append(self._fail("unknown", MALFORMED_EVENT))
        return items

    def _on_choice(self, choice: Mapping[str, Any], items: list[StreamItem]) -> None:
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if isinstance(content, str) and content:
            items.append(TextDelta(text=content))
        for part in delta.get("tool_calls") or ():
            pending = self._calls.setdefault(int(part.get("index", 0)), _PendingCall())
            pending.id = part.get("id") or pending.id
            function = part.get("function") or {}
            pending.name = function.get("name") or pending.name
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                pending.arguments.append(arguments)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and self._finish is None:
            self._finish = finish
            items.extend(self._tool_calls())

    def _tool_calls(self) -> Iterator[StreamItem]:
        truncated = self._finish == "length"
        for index in sorted(self._calls):
            pending = self._calls[index]
            parsed = json_object("".join(pending.arguments) or "{}")
            if parsed is None or not pending.id or not pending.name:
                if truncated:
                    continue
                yield self._fail("unknown", f"provider sent an invalid tool call (index {index})")
                return
            yield ToolCall(id=pending.id, name=pending.name, input=parsed)

    def finish(self) -> Iterator[StreamItem]:
        if self.failed:
            return
        if self._finish is None:
            yield ProviderError(
                category="server_error", message="provider stream ended before a finish reason"
            )
            return
        yield Stop(stop_reason=_STOP_REASONS.get(self._finish, self._finish))

    def _fail(self, category: ErrorCategory, message: str) -> ProviderError:
        self.failed = True
        return ProviderError(category=category, message=message)


def _usage(usage: Mapping[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    prompt = int(usage.get("prompt_tokens") or 0)
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_input_tokens=cached,
    )


# --- rate limits -------------------------------------------------------------

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def reset_seconds(value: str) -> float | None:
    """Seconds in an OpenAI reset duration such as ``6m0s``, ``1s`` or ``20ms``."""
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value.strip():
        return None
    return sum(float(number) * _SECONDS[unit] for number, unit in parts)


def openai_rate_limit(headers: httpx.Headers, *, now: float, rejected: bool) -> RateLimit | None:
    """RateLimit from ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``."""
    windows: list[LimitWindow] = []
    for kind in ("requests", "tokens"):
        limit = header_number(headers, f"x-ratelimit-limit-{kind}")
        remaining = header_number(headers, f"x-ratelimit-remaining-{kind}")
        if limit is None or remaining is None:
            continue
        reset = reset_seconds(headers.get(f"x-ratelimit-reset-{kind}", ""))
        resets_at = None if reset is None else int(now + reset)
        windows.append(LimitWindow(limit=limit, remaining=remaining, resets_at=resets_at))
    return rate_limit_state(windows, rejected=rejected)
