"""One model call of a turn (spec "Core output records", WIRE-012).

:class:`ModelCaller` streams one request from the provider, collecting the
text, the tool calls, the stop reason, the usage or the error; passes partial
``stream_event`` records and rate-limit events through as they arrive; and
emits the ``assistant`` record (split across records of one message id when
too long for one line, DEC-COMPAT-3).

``--fallback-model`` (DEC-CLI-5, as Claude Code does): when a call ends
overloaded or unavailable after the provider's own retries, and nothing of
it was kept (no text, no tool call), the caller writes
``system/model_fallback`` (not in the standalone profile) and one WARN line,
and asks again on the fallback model, which serves the rest of the session.
Each provider retry is a ``system/api_retry`` record where the profile
writes them (:attr:`~agentx.turns.contracts.EngineConfig.retry_records`).
"""

from __future__ import annotations

from typing import Final

from msgspec import Struct, field

from agentx.diagnostics import logger
from agentx.messages import outbound, record_limit
from agentx.messages.accounting import TokenUsage
from agentx.messages.frozen import FrozenDict
from agentx.messages.mode_notes import system_for_mode
from agentx.providers.base import (
    Block,
    Cancelled,
    Message,
    ModelRequest,
    ProviderError,
    RateLimit,
    RawEvent,
    RedactedThinkingBlock,
    RetryNotice,
    Stop,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDone,
    ToolCall,
    ToolUseBlock,
    Usage,
)
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionPolicy
from agentx.turns.results import TurnState, token_usage
from agentx.turns.session import TurnSession
from agentx.turns.tool_calls import shown


class TextParts:
    """The text deltas of one model call, kept compact.

    A provider streams text in deltas of a few characters; a list of them
    costs a string object and a list slot each, several times the text
    itself. The pieces are joined every :data:`JOIN_EVERY` deltas, and
    :meth:`joined` joins the rest once and keeps only the result, so the
    text costs about its own size while it streams and once it is whole.
    """

    __slots__ = ("_chunks", "_joined", "_pending")

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._pending: list[str] = []
        self._joined: str | None = None

    def append(self, piece: str) -> None:
        if self._joined is not None:
            self._chunks, self._joined = [self._joined], None
        self._pending.append(piece)
        if len(self._pending) >= JOIN_EVERY:
            self._chunks.append("".join(self._pending))
            self._pending.clear()

    def __bool__(self) -> bool:
        """Whether any delta arrived (as the list of deltas was)."""
        return bool(self._pending or self._chunks or self._joined)

    def joined(self) -> str:
        """The whole text (joined once; the pieces are dropped)."""
        if self._joined is None:
            self._chunks.append("".join(self._pending))
            self._pending.clear()
            self._joined = "".join(self._chunks)
            self._chunks.clear()
        return self._joined


#: Deltas joined into one string at a time (:class:`TextParts`).
JOIN_EVERY: Final = 4096


class ModelCall(Struct):
    text: TextParts = field(default_factory=TextParts)
    #: Complete thinking blocks, in order (DEC-CLI-5): first in the message.
    thinking: list[ThinkingBlock | RedactedThinkingBlock] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str | None = None
    error: ProviderError | None = None
    usage: Usage | None = None


class ModelCaller:
    """Runs the model calls of one session's turns."""

    def __init__(self, session: TurnSession, policy: PermissionPolicy) -> None:
        self._s = session
        self._policy = policy
        self._cfg = session.config
        self._emit = session.ports.emit
        self._uuid = session.ports.new_uuid
        #: The model requests go to: the session's, until the fallback served
        #: or the client switched it (DEC-PROFILE-2).
        self.model = session.config.model
        #: The live choice last adopted: a new one replaces :attr:`model`.
        self._chosen = session.config.model

    def call(self, st: TurnState, scope: CancelScope) -> ModelCall:
        live = self._s.ports.live_model
        if live is not None and (chosen := live()) != self._chosen:
            # DEC-PROFILE-2: ``set_model`` takes effect at the next request.
            self.model = self._chosen = chosen
        call = self._call_once(st, scope)
        fallback = self._cfg.fallback_model
        error = call.error
        if (
            error is not None
            and error.overloaded
            and fallback is not None
            and self.model != fallback
            and not call.text
            and not call.thinking
            and not call.tool_calls
        ):
            self._fall_back(fallback, error)
            call = self._call_once(st, scope)
        return call

    def _fall_back(self, fallback: str, error: ProviderError) -> None:
        logger.warning("the model is overloaded or unavailable; retrying on the fallback model")
        if self._cfg.retry_records:
            self._emit(
                (
                    outbound.model_fallback(
                        from_model=self.model,
                        to_model=fallback,
                        reason=error.category,
                        session_id=self._s.session_id,
                        uuid=self._uuid(),
                    ),
                )
            )
        self.model = fallback

    def _retried(self, notice: RetryNotice) -> None:
        self._emit(
            (
                outbound.api_retry(
                    attempt=notice.attempt,
                    max_retries=notice.max_retries,
                    retry_delay_ms=notice.retry_delay_ms,
                    error_status=notice.error_status,
                    error=notice.error,
                    session_id=self._s.session_id,
                    uuid=self._uuid(),
                ),
            )
        )

    def _call_once(self, st: TurnState, scope: CancelScope) -> ModelCall:
        self._s.tools.refresh(scope)
        request = ModelRequest(
            model=self.model,
            # DEC-PERM-MODE: a request made in plan mode says so.
            system=system_for_mode(
                self._s.prompt.system, self._policy.mode, self._s.prompt.plan_instructions
            ),
            messages=self._s.history.view(),
            tools=self._s.tools.specs,
            effort=self._cfg.effort,
            stream_events=self._cfg.include_partial_messages,
            on_retry=self._retried if self._cfg.retry_records else None,
        )
        call = ModelCall()
        opened = self._s.ports.clock()
        try:
            for item in self._s.provider.stream(request, scope):
                self._absorb(item, call, scope)
        finally:
            self._s.account(st, opened, call.usage, model=self.model)
        if scope.is_set():
            raise Cancelled
        if call.error is None and call.stop_reason == "max_tokens":
            # DEC-AUTH-2: a length stop is the max_output_tokens error category.
            call.error = ProviderError(
                category="max_output_tokens", message="the model reached its output token limit"
            )
        return call

    def _absorb(self, item: object, call: ModelCall, scope: CancelScope) -> None:
        if isinstance(item, TextDelta):
            call.text.append(item.text)
        elif isinstance(item, ThinkingDone):
            call.thinking.append(item.block)
        elif isinstance(item, ToolCall):
            call.tool_calls.append(item)
        elif isinstance(item, Usage):
            call.usage = item
        elif isinstance(item, Stop):
            call.stop_reason = item.stop_reason
        elif isinstance(item, ProviderError):
            call.error = item
        elif isinstance(item, RawEvent):
            if self._cfg.include_partial_messages:
                if (room := self._s.ports.stream_room) is not None:
                    # DECISIONS section 8: a slow stdout holds the stream here
                    # (bounded, cancellable), never in the writer's inbox.
                    room(scope)
                self._emit(
                    (
                        outbound.stream_event(
                            item.event,
                            parent_tool_use_id=None,
                            session_id=self._s.session_id,
                            uuid=self._uuid(),
                        ),
                    )
                )
        elif isinstance(item, RateLimit) and item.status != "allowed":
            self._emit(
                (
                    outbound.rate_limit_event(
                        item.status,
                        resets_at=item.resets_at,
                        utilization=item.utilization,
                        session_id=self._s.session_id,
                        uuid=self._uuid(),
                    ),
                )
            )

    def emit_assistant(self, call: ModelCall) -> None:
        text = call.text.joined()
        content: list[FrozenDict] = []
        blocks: list[Block] = []
        for block in call.thinking:  # thinking leads the message, signatures kept
            content.append(thinking_content(block))
            blocks.append(block)
        if text or (call.error is not None):
            shown_text = text or (call.error.message if call.error is not None else "")
            content.append(FrozenDict(type="text", text=shown_text))
            blocks.append(TextBlock(text=shown_text))
        for tc in call.tool_calls:
            content.append(FrozenDict(type="tool_use", id=tc.id, name=tc.name, input=shown(tc)))
            blocks.append(ToolUseBlock(id=tc.id, name=tc.name, input=tc.input))
        message_id = f"msg_{self._uuid().replace('-', '')[:24]}"
        # DEC-CLI-5: the message's transcript id is its (first) record's uuid,
        # so ``--resume-session-at`` takes what the client saw.
        record_uuid = self._uuid()
        if blocks:
            self._s.history.append(Message(role="assistant", content=tuple(blocks)), record_uuid)
        usage = token_usage(call.usage) if call.usage is not None else TokenUsage()
        message = outbound.api_assistant_message(
            message_id=message_id,
            model=self.model,
            content=tuple(content),
            stop_reason=call.stop_reason,
            usage=usage.to_wire(),
        )
        record = outbound.assistant(
            message,
            parent_tool_use_id=None,
            session_id=self._s.session_id,
            uuid=record_uuid,
            error=call.error.category if call.error is not None else None,
        )
        # DEC-COMPAT-3: a message too long for one line is several records of
        # one message id; the history above keeps it whole.
        self._emit(record_limit.split_assistant(record, new_uuid=self._uuid))


def thinking_content(block: ThinkingBlock | RedactedThinkingBlock) -> FrozenDict:
    """A thinking block as the assistant record carries it (Claude Code's shape)."""
    if isinstance(block, ThinkingBlock):
        return FrozenDict(type="thinking", thinking=block.thinking, signature=block.signature)
    return FrozenDict(type="redacted_thinking", data=block.data)
