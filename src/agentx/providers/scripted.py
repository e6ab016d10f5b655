"""The offline scripted provider (DEC-SCRIPT-1).

Without a script it echoes the latest user text (and names the attachments it
received: kind, name, size, sha256) so a fresh install runs with no network.
With a script file ``{"version":1,"turns":[...]}`` turn *i* answers the *i*-th
model request of the process; after the last turn it echoes. Steps:
``{"text":S}`` (streamed in deltas), ``{"tool_use":{"name":N,"input":{...}}}``,
``{"usage":{...}}``, ``{"sleep_ms":N}`` (honours cancellation) and
``{"error":CATEGORY}``. It performs no I/O beyond reading its script.

Prompt suggestions (``--prompt-suggestions``): the script may also carry
``"suggestions":[S, ...]``; the *i*-th suggestion call (``ModelRequest.purpose``
``prompt_suggestion``) answers ``S[i]`` as one text delta, without consuming a
turn, so enabling the flag never shifts a script's turns. With no scripted
suggestion left the rule is the echo's: the latest user text before the
suggestion instruction (the provider predicts the prompt is sent again).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast, get_args

from msgspec import Struct
from msgspec.structs import replace

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.messages.context_usage import estimate_tokens
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.strict_json import StrictJSONError, loads_strict
from agentx.providers.base import (
    Cancelled,
    CancelToken,
    ErrorCategory,
    MediaBlock,
    ModelRequest,
    ProviderError,
    RawEvent,
    Stop,
    StreamItem,
    TextBlock,
    TextDelta,
    ToolCall,
    Usage,
    text_chars,
)

_ERROR_CATEGORIES = frozenset(get_args(ErrorCategory))
_USAGE_KEYS = frozenset(
    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)
_DELTA = re.compile(r"\S+\s*|\s+")


class ScriptError(ValueError):
    """The script file is unreadable or breaks DEC-SCRIPT-1 (exit 2 at start-up)."""


class ScriptTurn(Struct, frozen=True, kw_only=True):
    steps: tuple[FrozenDict, ...]
    stop_reason: str | None


class Script(Struct, frozen=True, kw_only=True):
    turns: tuple[ScriptTurn, ...]
    suggestions: tuple[str, ...] = ()


def parse_script_document(data: bytes) -> Script:
    """Validate a script document strictly; the error names the JSON path, never content."""
    try:
        doc = loads_strict(data)
    except StrictJSONError as exc:
        raise ScriptError(f"script is not strict JSON: {exc.reason}") from None
    if not isinstance(doc, Mapping) or not (
        {"version", "turns"} <= set(doc) <= {"version", "turns", "suggestions"}
    ):
        raise ScriptError("script must be an object with version, turns and optional suggestions")
    if doc["version"] != 1 or isinstance(doc["version"], bool):
        raise ScriptError("script version must be 1")
    if not isinstance(doc["turns"], tuple):
        raise ScriptError("script turns must be an array")
    suggestions = doc.get("suggestions", ())
    if not isinstance(suggestions, tuple) or not all(isinstance(x, str) for x in suggestions):
        raise ScriptError("script suggestions must be an array of strings")
    turns = tuple(_parse_turn(turn, f"turns[{i}]") for i, turn in enumerate(doc["turns"]))
    return Script(turns=turns, suggestions=suggestions)


def _parse_turn(turn: Any, path: str) -> ScriptTurn:
    if not isinstance(turn, Mapping) or not set(turn) <= {"steps", "stop_reason"}:
        raise ScriptError(f"{path} must be an object with steps and optional stop_reason")
    steps = turn.get("steps")
    if not isinstance(steps, tuple):
        raise ScriptError(f"{path}.steps must be an array")
    stop = turn.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise ScriptError(f"{path}.stop_reason must be a string")
    for j, step in enumerate(steps):
        _check_step(step, f"{path}.steps[{j}]")
    return ScriptTurn(steps=steps, stop_reason=stop)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _valid_tool_use(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and set(value) == {"name", "input"}
        and isinstance(value["name"], str)
        and bool(value["name"])
        and isinstance(value["input"], Mapping)
    )


def _valid_usage(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and set(value) <= _USAGE_KEYS
        and all(_is_count(v) for v in value.values())
    )


_STEP_CHECKS: dict[str, Any] = {
    "text": lambda value: isinstance(value, str),
    "tool_use": _valid_tool_use,
    "usage": _valid_usage,
    "sleep_ms": _is_count,
    "error": lambda value: value in _ERROR_CATEGORIES,
}


def _check_step(step: Any, path: str) -> None:
    if not isinstance(step, Mapping) or len(step) != 1:
        raise ScriptError(f"{path} must be an object with exactly one member")
    ((kind, value),) = step.items()
    check = _STEP_CHECKS.get(kind)
    if check is None or not check(value):
        raise ScriptError(f"{path} is not a valid step")


def load_script_document(path: Path) -> Script:
    """The script file: a regular file of at most ``START_FILE_LIMITS["script"]``
    bytes (DECISIONS section 8); its path is private (DEC-AUTH-3a: it comes
    from auth.json), so a failure names the script alone."""
    try:
        data = read_start_file(path, START_FILE_LIMITS["script"], "script", name_path=False)
    except OSError:
        raise ScriptError("script file cannot be read") from None
    except StartFileError as exc:
        raise ScriptError(f"script file {exc.problem}") from None
    return parse_script_document(data)


class ScriptedClient:
    """A :class:`~agentx.providers.base.ProviderClient` with no network."""

    def __init__(
        self,
        *,
        model: str,
        turns: tuple[ScriptTurn, ...] = (),
        suggestions: tuple[str, ...] = (),
    ) -> None:
        self._model = model
        self._turns = turns
        self._suggestions = suggestions
        self._calls = 0
        self._suggestion_calls = 0

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        if request.purpose == "prompt_suggestion":
            yield from self._suggest(request, cancel)
            return
        index = self._calls
        self._calls += 1
        if cancel.is_set():
            raise Cancelled
        if index < len(self._turns):
            yield from self._play(self._turns[index], request, cancel)
        else:
            yield from self._echo(request)

    def _suggest(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        index = self._suggestion_calls
        self._suggestion_calls += 1
        if cancel.is_set():
            raise Cancelled
        if index < len(self._suggestions):
            text = self._suggestions[index]
        else:
            text = _echo_text(replace(request, messages=request.messages[:-1]))
        yield TextDelta(text=text)
        yield Usage(
            input_tokens=_estimate_tokens(request), output_tokens=estimate_tokens(len(text))
        )
        yield Stop(stop_reason="end_turn")

    def _echo(self, request: ModelRequest) -> Iterator[StreamItem]:
        text = _echo_text(request)
        events = request.stream_events
        if events:
            yield from _start_events(self._model)
        for piece in _DELTA.findall(text) or [text]:
            if events:
                yield _delta_event(piece)
            yield TextDelta(text=piece)
        usage = Usage(
            input_tokens=_estimate_tokens(request), output_tokens=estimate_tokens(len(text))
        )
        yield usage
        if events:
            yield from _stop_events("end_turn", usage)
        yield Stop(stop_reason="end_turn")

    def _play(
        self, turn: ScriptTurn, request: ModelRequest, cancel: CancelToken
    ) -> Iterator[StreamItem]:
        events = request.stream_events
        if events:
            yield from _start_events(self._model)
        usage = Usage()
        used_tool = False
        for step in turn.steps:
            ((kind, value),) = step.items()
            if kind == "text":
                for piece in _DELTA.findall(value) or [value]:
                    if events:
                        yield _delta_event(piece)
                    yield TextDelta(text=piece)
            elif kind == "tool_use":
                used_tool = True
                yield ToolCall(
                    id=f"toolu_{uuid.uuid4().hex[:24]}",
                    name=value["name"],
                    input=freeze(value["input"]),
                )
            elif kind == "usage":
                usage = Usage(**value)
                yield usage
            elif kind == "sleep_ms":
                if cancel.wait(value / 1000):
                    raise Cancelled
            else:
                category = cast(ErrorCategory, value)
                yield ProviderError(category=category, message=f"scripted {category} error")
                return
            if cancel.is_set():
                raise Cancelled
        stop = turn.stop_reason or ("tool_use" if used_tool else "end_turn")
        if events:
            yield from _stop_events(stop, usage)
        yield Stop(stop_reason=stop)


def _echo_text(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.role != "user":
            continue
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        media = [b for b in message.content if isinstance(b, MediaBlock)]
        if not texts and not media:
            continue
        lines = ["".join(texts)] if texts else []
        lines += [f"[{m.kind} {m.name} {m.size_bytes} bytes sha256={m.sha256}]" for m in media]
        return "\n".join(lines)
    return ""


def _estimate_tokens(request: ModelRequest) -> int:
    """Input estimate: the system prompt and the newest message (O(1) per call)."""
    newest = text_chars(request.messages[-1]) if request.messages else 0
    return estimate_tokens(len(request.system) + newest)


def _start_events(model: str) -> Iterator[RawEvent]:
    yield RawEvent(
        event=freeze(
            {
                "type": "message_start",
                "message": {"type": "message", "role": "assistant", "model": model, "content": []},
            }
        )
    )
    yield RawEvent(
        event=freeze(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        )
    )


def _delta_event(piece: str) -> RawEvent:
    return RawEvent(
        event=freeze(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": piece},
            }
        )
    )


def _stop_events(stop_reason: str, usage: Usage) -> Iterator[RawEvent]:
    yield RawEvent(event=freeze({"type": "content_block_stop", "index": 0}))
    yield RawEvent(
        event=freeze(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason},
                "usage": {"output_tokens": usage.output_tokens},
            }
        )
    )
    yield RawEvent(event=freeze({"type": "message_stop"}))
