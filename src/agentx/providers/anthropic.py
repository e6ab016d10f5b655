"""Anthropic Messages API client (DEC-AUTH-2 ``anthropic``).

``endpoint`` is the API root without a version, as in the Anthropic SDKs'
``base_url`` (``https://api.anthropic.com``); we POST ``{endpoint}/v1/messages``
with ``x-api-key`` and ``anthropic-version: 2023-06-01`` and ``stream: true``.
Images travel as ``image`` blocks and PDFs as ``document`` blocks with a
base64 source, inside the request body only (DECISIONS 7, WIRE-022).

Effort (DEC-CLI-5): sent as the Messages API's ``output_config.effort``
(Anthropic's documentation, "Effort", platform.claude.com/docs/en/
build-with-claude/effort: ``low | medium | high | xhigh | max``, each sent
as itself; no beta
header on the models that take it, and it does not need extended thinking,
whose signed blocks the provider-neutral conversation could not send back).
agentx's ``minimal`` has no Anthropic level; it is sent as ``low``, the
least effort Anthropic offers. No effort: the member is left out.

Stream items: a :class:`RawEvent` for every event (``ping`` included) when the
request asks for stream events (``--include-partial-messages``), a
:class:`TextDelta` per ``text_delta``, a :class:`ToolCall` when a
``tool_use`` block stops (its ``input_json_delta`` fragments joined and
parsed; not a JSON object -> ``ProviderError`` ``unknown``, unless the
message stopped at ``max_tokens``, which drops the truncated call), and at
``message_stop`` one :class:`Usage` (``message_start`` usage updated by the
cumulative ``message_delta`` usage) then :class:`Stop` with the API's own
``stop_reason``. An ``error`` event is a ``ProviderError`` by its type.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import httpx
from msgspec import Struct, field

from agentx.messages.frozen import thaw
from agentx.providers.base import (
    Block,
    CancelToken,
    ErrorCategory,
    MediaBlock,
    ModelRequest,
    ProviderError,
    RateLimit,
    RawEvent,
    RedactedThinkingBlock,
    RequestOptions,
    Stop,
    StreamItem,
    TextBlock,
    TextDelta,
    Thinking,
    ThinkingBlock,
    ThinkingDone,
    ToolCall,
    ToolResultBlock,
    ToolUseBlock,
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
from agentx.providers.rate_limits import LimitWindow, header_number, rate_limit_state
from agentx.providers.sse import ServerSentEvent

ANTHROPIC_VERSION = "2023-06-01"
#: The beta a task budget needs (Anthropic's documentation, "Task budgets").
TASK_BUDGET_BETA = "task-budgets-2026-03-13"
#: agentx effort -> ``output_config.effort`` (``minimal`` has no level of its own).
EFFORT_LEVELS = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


class AnthropicClient:
    """A :class:`~agentx.providers.base.ProviderClient` for the Messages API.

    ``model`` is the profile's model, sent in every body (DEC-SET-2).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        headers: Mapping[str, str],
        model: str,
        *,
        retry: RetryPolicy | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        deadline: float = DEFAULT_DEADLINE,
        options: RequestOptions | None = None,
        provider_id: str = "",
    ) -> None:
        self._model = model
        self._options = options or RequestOptions()
        self._url = f"{base_url.rstrip('/')}/v1/messages"
        self._headers = httpx.Headers(dict(headers))
        if api_key:
            self._headers["x-api-key"] = api_key
        self._headers["anthropic-version"] = ANTHROPIC_VERSION
        betas = beta_values(self._options)
        if betas:  # DEC-CLI-5 --betas, and the task budget's own beta
            self._headers["anthropic-beta"] = ",".join(betas)
        self._headers["accept"] = "text/event-stream"
        self._headers["content-type"] = "application/json"
        self._redact = Redactor((api_key, base_url, *headers.values()))
        self._poster = EventStreamPoster(
            label="anthropic",
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

    @property
    def model(self) -> str:
        """The profile's model (DEC-SET-2)."""
        return self._model

    def close(self) -> None:
        self._poster.close()

    def server_tool_events(
        self, body: Mapping[str, Any], cancel: CancelToken
    ) -> Iterator[Mapping[str, Any]]:
        """DEC-TURN-3 ``WebSearch``: one streamed request with a body the caller
        built (a server tool's sub-request), under this client's headers,
        retries and deadline; yields each event object. An event that is no
        JSON object comes as an ``error`` event; a terminal HTTP failure raises
        :class:`~agentx.providers.errors.ProviderHTTPError`, a cancel
        :class:`~agentx.providers.base.Cancelled`."""
        events = self._poster.post(self._url, self._headers, json_body(dict(body)), cancel)
        with contextlib.closing(events):
            for item in events:
                if not isinstance(item, ServerSentEvent):
                    continue
                event = json_object(item.data)
                if event is None or not isinstance(event.get("type"), str):
                    yield {"type": "error", "error": {"type": "malformed_event"}}
                    return
                yield event

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The Messages API body for ``request`` (DECISIONS 7 projection)."""
        thinking = self._options.thinking
        body: dict[str, Any] = {
            "model": request.model or self._model,
            "max_tokens": request.max_tokens + thinking_budget(thinking),
            "messages": [
                {"role": message.role, "content": [_block(b) for b in message.content]}
                for message in request.messages
            ],
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        if thinking is not None:
            body["thinking"] = thinking_param(thinking)
        output_config: dict[str, Any] = {}
        if request.effort is not None:
            output_config["effort"] = EFFORT_LEVELS[request.effort]
        if self._options.task_budget is not None:
            output_config["task_budget"] = {"type": "tokens", "total": self._options.task_budget}
        if output_config:
            body["output_config"] = output_config
        if request.tools:
            body["tools"] = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": thaw(tool.input_schema),
                }
                for tool in request.tools
            ]
        return body

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        """Yield one call's items; it ends with ``Stop`` or ``ProviderError``."""
        body = json_body(self.request_body(request))
        events = self._poster.post(self._url, self._headers, body, cancel, request.on_retry)
        state = _MessageStream(self._redact)
        with contextlib.closing(events):
            try:
                for item in events:
                    # Events first: httpx.Headers is an ABC, its isinstance slow.
                    if not isinstance(item, ServerSentEvent):
                        limit = anthropic_rate_limit(item, rejected=False)
                        if limit is not None:
                            yield limit
                        continue
                    yield from state.on_event(item.data, raw=request.stream_events)
                    if state.failed or state.stopped:
                        return
            except ProviderHTTPError as exc:
                if exc.status == 429 and exc.headers is not None:
                    limit = anthropic_rate_limit(exc.headers, rejected=True)
                    if limit is not None:
                        yield limit
                yield ProviderError(
                    category=exc.category, message=exc.message, overloaded=exc.overloaded
                )
                return
        yield ProviderError(
            category="server_error", message="provider stream ended before message_stop"
        )


class _ThinkingParts(Struct, kw_only=True):
    thinking: list[str] = field(default_factory=list)
    signature: str = ""


class _ToolBlock(Struct, kw_only=True):
    id: str
    name: str
    partial_json: list[str] = field(default_factory=list)


class _MessageStream:
    """Folds Messages API stream events into stream items."""

    def __init__(self, redact: Redactor) -> None:
        self._redact = redact
        self._usage: dict[str, int] = {}
        self._tools: dict[int, _ToolBlock] = {}
        self._thinking: dict[int, _ThinkingParts] = {}
        self._invalid_tool: str | None = None
        self._stop_reason: str | None = None
        self.failed = False
        self.stopped = False

    def on_event(self, data: str, *, raw: bool) -> list[StreamItem]:
        """The items one event means, a :class:`RawEvent` first when ``raw``.

        A list, not a generator: this runs once per streamed delta.
        """
        event = json_object(data)
        if event is None or not isinstance(event.get("type"), str):
            return [self._fail("unknown", MALFORMED_EVENT)]
        items: list[StreamItem] = [RawEvent(event=event)] if raw else []
        try:  # an event whose members have the wrong shapes is malformed too
            items.extend(self._fold(event))
        except (AttributeError, TypeError, ValueError):
            del items[int(raw) :]  # the RawEvent stays; what the event meant does not
            items.append(self._fail("unknown", MALFORMED_EVENT))
        return items

    def _fold(self, event: Mapping[str, Any]) -> Iterator[StreamItem]:
        match event["type"]:
            case "message_start":
                self._take_usage((event.get("message") or {}).get("usage"))
            case "content_block_start":
                block = event.get("content_block") or {}
                index = int(event.get("index", 0))
                if block.get("type") == "tool_use":
                    self._tools[index] = _ToolBlock(
                        id=str(block.get("id") or ""), name=str(block.get("name") or "")
                    )
                elif block.get("type") == "thinking":
                    self._thinking[index] = _ThinkingParts(
                        thinking=[str(block.get("thinking") or "")],
                        signature=str(block.get("signature") or ""),
                    )
                elif block.get("type") == "redacted_thinking":
                    yield ThinkingDone(block=RedactedThinkingBlock(data=str(block.get("data"))))
            case "content_block_delta":
                yield from self._delta(int(event.get("index", 0)), event.get("delta") or {})
            case "content_block_stop":
                index = int(event.get("index", 0))
                parts = self._thinking.pop(index, None)
                if parts is not None:
                    yield ThinkingDone(
                        block=ThinkingBlock(
                            thinking="".join(parts.thinking), signature=parts.signature
                        )
                    )
                yield from self._tool_call(index)
            case "message_delta":
                reason = (event.get("delta") or {}).get("stop_reason")
                self._stop_reason = reason if isinstance(reason, str) else None
                self._take_usage(event.get("usage"))
            case "message_stop":
                yield from self._stop()
            case "error":
                error = event.get("error") or {}
                message = error.get("message")
                text = self._redact(message)[:MAX_ERROR_TEXT] if isinstance(message, str) else ""
                kind = error.get("type")
                yield self._fail(
                    category_for_error_type(kind if isinstance(kind, str) else None),
                    f"provider stream error: {text or 'no detail'}",
                    overloaded=kind == "overloaded_error",
                )

    def _delta(self, index: int, delta: Mapping[str, Any]) -> Iterator[StreamItem]:
        if delta.get("type") == "text_delta" and delta.get("text"):
            yield TextDelta(text=str(delta["text"]))
        elif delta.get("type") == "input_json_delta" and index in self._tools:
            self._tools[index].partial_json.append(str(delta.get("partial_json") or ""))
        elif delta.get("type") == "thinking_delta" and index in self._thinking:
            self._thinking[index].thinking.append(str(delta.get("thinking") or ""))
        elif delta.get("type") == "signature_delta" and index in self._thinking:
            self._thinking[index].signature += str(delta.get("signature") or "")

    def _tool_call(self, index: int) -> Iterator[StreamItem]:
        block = self._tools.pop(index, None)
        if block is None:
            return
        parsed = json_object("".join(block.partial_json) or "{}")
        if parsed is not None and block.id and block.name:
            yield ToolCall(id=block.id, name=block.name, input=parsed)
        else:
            self._invalid_tool = f"provider sent an invalid tool call (index {index})"

    def _stop(self) -> Iterator[StreamItem]:
        if self._invalid_tool is not None and self._stop_reason != "max_tokens":
            yield self._fail("unknown", self._invalid_tool)
            return
        self.stopped = True
        yield Usage(**{name: self._usage.get(name, 0) for name in _USAGE_FIELDS})
        yield Stop(stop_reason=self._stop_reason)

    def _take_usage(self, usage: object) -> None:
        if isinstance(usage, dict):
            for name in _USAGE_FIELDS:
                value = usage.get(name)
                if isinstance(value, int):
                    self._usage[name] = value

    def _fail(
        self, category: ErrorCategory, message: str, *, overloaded: bool = False
    ) -> ProviderError:
        self.failed = True
        return ProviderError(category=category, message=message, overloaded=overloaded)


def _block(block: Block) -> dict[str, Any]:
    """One conversation block as a Messages API content block."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ToolUseBlock(id=call_id, name=name, input=arguments):
            return {"type": "tool_use", "id": call_id, "name": name, "input": thaw(arguments)}
        case ToolResultBlock(tool_use_id=call_id, content=content, is_error=is_error):
            return {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": content,
                "is_error": is_error,
            }
        case ThinkingBlock(thinking=thinking, signature=signature):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case RedactedThinkingBlock(data=data):
            return {"type": "redacted_thinking", "data": data}
        case MediaBlock(kind=kind, mime_type=mime_type, data=data):
            return {
                "type": kind,
                "source": {
                    "type": "base64",
                    "media_type": mime_type,
                    "data": base64.b64encode(data).decode("ascii"),
                },
            }


def beta_values(options: RequestOptions) -> tuple[str, ...]:
    """The ``anthropic-beta`` values: ``--betas``, then the task budget's beta."""
    betas = list(dict.fromkeys(options.betas))
    if options.task_budget is not None and TASK_BUDGET_BETA not in betas:
        betas.append(TASK_BUDGET_BETA)
    return tuple(betas)


def thinking_budget(thinking: Thinking | None) -> int:
    """The tokens ``max_tokens`` grows by: ``budget_tokens`` must stay below it."""
    if thinking is None or thinking.mode != "enabled" or thinking.budget_tokens is None:
        return 0
    return thinking.budget_tokens


def thinking_param(thinking: Thinking) -> dict[str, Any]:
    """The Messages API ``thinking`` member for ``--thinking`` / ``--max-thinking-tokens``."""
    param: dict[str, Any] = {"type": thinking.mode}
    if thinking.mode == "enabled" and thinking.budget_tokens is not None:
        param["budget_tokens"] = thinking.budget_tokens
    if thinking.display is not None and thinking.mode != "disabled":
        param["display"] = thinking.display
    return param


def anthropic_rate_limit(headers: httpx.Headers, *, rejected: bool) -> RateLimit | None:
    """RateLimit from ``anthropic-ratelimit-<kind>-{limit,remaining,reset}``."""
    windows: list[LimitWindow] = []
    for kind in ("requests", "tokens", "input-tokens", "output-tokens"):
        prefix = f"anthropic-ratelimit-{kind}"
        limit = header_number(headers, f"{prefix}-limit")
        remaining = header_number(headers, f"{prefix}-remaining")
        if limit is None or remaining is None:
            continue
        windows.append(
            LimitWindow(
                limit=limit,
                remaining=remaining,
                resets_at=_epoch(headers.get(f"{prefix}-reset")),
            )
        )
    return rate_limit_state(windows, rejected=rejected)


def _epoch(value: str | None) -> int | None:
    """Epoch seconds of an RFC 3339 reset time."""
    if value is None:
        return None
    try:
        return int(datetime.fromisoformat(value).timestamp())
    except ValueError:
        return None
