"""The provider client interface the turn runner drives (DEC-AUTH-2).

A provider turns one :class:`ModelRequest` into a stream of
:class:`StreamItem` values. ``stream`` is a blocking generator; the turn
runner consumes it on a worker thread and cancels it through the
:class:`CancelToken`, which must reach an open HTTP read within 100 ms
(implementations register a callback that closes the response).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal, Protocol

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, FrozenJSON, repr_without

# --- conversation blocks (provider-neutral, Anthropic-shaped) -------------


class TextBlock(Struct, frozen=True, kw_only=True):
    text: str


class ToolUseBlock(Struct, frozen=True, kw_only=True):
    id: str
    name: str
    input: FrozenDict


class ToolResultBlock(Struct, frozen=True, kw_only=True):
    tool_use_id: str
    content: str
    is_error: bool = False


class MediaBlock(Struct, frozen=True, kw_only=True):
    """An attachment projected to the provider (bytes stay inside HTTP, WIRE-022)."""

    kind: Literal["image", "document"]
    mime_type: str
    name: str
    data: bytes
    sha256: str
    size_bytes: int

    def __repr__(self) -> str:
        return repr_without(self, frozenset({"data"}))


class ThinkingBlock(Struct, frozen=True, kw_only=True):
    """The model's thinking with its signature, sent back unchanged on every
    later request (the Messages API requires it, DEC-CLI-5)."""

    thinking: str
    signature: str


class RedactedThinkingBlock(Struct, frozen=True, kw_only=True):
    """Thinking the provider encrypted; sent back unchanged like any other."""

    data: str


Block = (
    TextBlock | ToolUseBlock | ToolResultBlock | MediaBlock | ThinkingBlock | RedactedThinkingBlock
)


class Message(Struct, frozen=True, kw_only=True):
    role: Literal["user", "assistant"]
    content: tuple[Block, ...]


def text_chars(message: Message) -> int:
    """Characters of text a message carries (its text and tool-result blocks);
    the basis of agentx's token estimates (context usage, the echo provider)."""
    return sum(
        len(block.text) if isinstance(block, TextBlock) else len(block.content)
        for block in message.content
        if isinstance(block, TextBlock | ToolResultBlock)
    )


class ToolSpec(Struct, frozen=True, kw_only=True):
    name: str
    description: str
    input_schema: FrozenJSON


ThinkingMode = Literal["adaptive", "enabled", "disabled"]


class Thinking(Struct, frozen=True, kw_only=True):
    """Extended thinking as the Messages API takes it (DEC-CLI-5 ``--thinking``,
    ``--max-thinking-tokens``, ``--thinking-display``)."""

    mode: ThinkingMode
    #: ``enabled`` only: the thinking budget in tokens.
    budget_tokens: int | None = None
    display: Literal["summarized", "omitted"] | None = None


class RequestOptions(Struct, frozen=True, kw_only=True):
    """What every request of the process carries besides the conversation,
    fixed at start (DEC-CLI-5): thinking, the ``anthropic-beta`` values and
    the task budget."""

    thinking: Thinking | None = None
    betas: tuple[str, ...] = ()
    task_budget: int | None = None


class RetryNotice(Struct, frozen=True, kw_only=True):
    """A provider request failed and will be retried (``system/api_retry``)."""

    attempt: int
    max_retries: int
    retry_delay_ms: int
    #: The HTTP status, or None for a connection failure with no response.
    error_status: int | None
    error: str


class ModelRequest(Struct, frozen=True, kw_only=True):
    model: str
    system: str
    #: Any immutable sequence (the engine hands a snapshot view of its history).
    messages: Sequence[Message]
    tools: tuple[ToolSpec, ...] = ()
    effort: str | None = None
    max_tokens: int = 8192
    #: Whether the caller emits ``stream_event`` records (--include-partial-messages);
    #: a client may skip building :class:`RawEvent` items when False.
    stream_events: bool = False
    #: What the call is for: a turn's model call, or the prompt-suggestion
    #: call after a result (DEC-TURN-5). HTTP clients send both alike;
    #: the scripted provider answers a suggestion call from its own list.
    purpose: Literal["turn", "prompt_suggestion"] = "turn"
    #: Called before each retry wait (the ``sdk`` profile writes ``system/api_retry``).
    on_retry: Callable[[RetryNotice], None] | None = None


# --- stream items -----------------------------------------------------------


class TextDelta(Struct, frozen=True, kw_only=True):
    text: str


class ThinkingDone(Struct, frozen=True, kw_only=True):
    """One complete thinking block of the answer (in its place before the text)."""

    block: ThinkingBlock | RedactedThinkingBlock


class ToolCall(Struct, frozen=True, kw_only=True):
    id: str
    name: str
    input: FrozenDict


class Usage(Struct, frozen=True, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


class Stop(Struct, frozen=True, kw_only=True):
    stop_reason: str | None


#: The spec's assistant error categories.
ErrorCategory = Literal[
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "invalid_request",
    "server_error",
    "unknown",
    "max_output_tokens",
]


class ProviderError(Struct, frozen=True, kw_only=True):
    category: ErrorCategory
    message: str
    #: The model was overloaded or unavailable (HTTP 529 or 503, an
    #: ``overloaded_error`` event): what ``--fallback-model`` answers.
    overloaded: bool = False


class RawEvent(Struct, frozen=True, kw_only=True):
    """A raw provider stream event for ``stream_event`` (--include-partial-messages)."""

    event: FrozenDict


class RateLimit(Struct, frozen=True, kw_only=True):
    """Rate-limit state read from response headers (``rate_limit_event``)."""

    status: Literal["allowed", "warning", "rejected"]
    resets_at: int | None = None
    utilization: float | None = None


StreamItem = (
    TextDelta | ThinkingDone | ToolCall | Usage | Stop | ProviderError | RawEvent | RateLimit
)


class Cancelled(Exception):
    """Raised by a provider stream when its CancelToken fired."""


class CancelToken(Protocol):
    def is_set(self) -> bool: ...

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True when cancelled (an interruptible sleep)."""

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once when cancelled (at once if already cancelled)."""


class ProviderClient(Protocol):
    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        """Yield the items of one model call; raise :class:`Cancelled` on cancel."""
