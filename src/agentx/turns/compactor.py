"""Compaction of the conversation (spec ``system/status`` and
``system/compact_boundary``, WIRE-005): the automatic trigger before a model
call and the summary run that ``/compact`` shares with it."""

from __future__ import annotations

from agentx.diagnostics import logger
from agentx.messages import outbound
from agentx.messages.compaction import CompactBoundary, Trigger, plan, should_auto_compact
from agentx.providers.base import Cancelled, Message, TextBlock
from agentx.sessions.compaction import (
    CompactionFailed,
    read_summary,
    stream_usage,
    summary_message,
    summary_request,
)
from agentx.sessions.history import TranscriptWriteFailed
from agentx.sessions.transcript import Recorded
from agentx.turns.cancel import CancelScope
from agentx.turns.results import TurnState
from agentx.turns.session import TurnSession


class Compactor:
    """Summarizes one session's history in place."""

    def __init__(self, session: TurnSession) -> None:
        self._s = session
        self._emit = session.ports.emit
        self._uuid = session.ports.new_uuid

    def auto(self, st: TurnState, scope: CancelScope) -> None:
        """DEC-AUTH-2 ``context_window``: before a model call, once a turn,
        when the estimate passes 80% of the window. A failed summary leaves
        the history as it was, logs a WARN and the turn goes on; an interrupt
        ends the turn."""
        if st.auto_compacted:
            return
        estimate = sum(self._s.context_estimate())
        if not should_auto_compact(estimate=estimate, window=self._s.config.context_window):
            return
        st.auto_compacted = True
        try:
            self.compact("auto", "", st, scope)
        except CompactionFailed as exc:
            logger.warning("automatic compaction failed; continuing uncompacted: {}", exc)

    def compact(
        self, trigger: Trigger, instructions: str, st: TurnState, scope: CancelScope
    ) -> str:
        """Summarize all but the preserved segment. The boundary entry is
        durable before the boundary record is emitted; on any failure or
        interrupt the history is untouched. Returns the command output text."""
        history = self._s.history
        items = history.items()
        chosen = plan(items)
        if chosen is None:
            raise CompactionFailed("nothing to compact")
        hooks = self._s.ports.hooks
        if hooks is not None:
            # DECISIONS section 3: PreCompact before every compaction; a block stops it.
            pre = hooks.fire(
                "PreCompact",
                {"trigger": trigger, "custom_instructions": instructions or None},
                cancelled=scope.is_set,
            )
            if pre.blocked or pre.stop:
                reason = pre.reason or pre.stop_reason or "no reason given"
                raise CompactionFailed(f"blocked by a PreCompact hook: {reason}")
        pre_tokens = self._s.context_usage()["totalTokens"]
        self._emit(
            (outbound.status("compacting", session_id=self._s.session_id, uuid=self._uuid()),)
        )
        try:
            request = summary_request(
                model=self._s.config.model,
                effort=self._s.config.effort,
                summarized=history.messages()[: chosen.summarized],
                instructions=instructions,
            )
            streamed: list[object] = []
            opened = self._s.ports.clock()
            try:
                streamed.extend(self._s.provider.stream(request, scope))
            finally:
                self._s.account(st, opened, stream_usage(streamed))
            if scope.is_set():
                raise Cancelled
            summary = Recorded(uuid=self._uuid(), message=summary_message(read_summary(streamed)))
            boundary = CompactBoundary(
                trigger=trigger,
                pre_tokens=pre_tokens,
                preserved_segment=chosen.segment(items, anchor_uuid=summary.uuid),
            )
            boundary_id = self._uuid()
            try:
                history.compact(chosen, summary=summary, boundary=boundary, uuid=boundary_id)
            except TranscriptWriteFailed as exc:  # DECISIONS section 8: one line
                logger.error("compaction: {}", exc)
                raise CompactionFailed("the transcript could not be written") from None
            except Exception:
                logger.exception("compaction: the transcript could not be written")
                raise CompactionFailed("the transcript could not be written") from None
            self._emit(
                (
                    outbound.compact_boundary(
                        boundary.metadata(), session_id=self._s.session_id, uuid=boundary_id
                    ),
                )
            )
            if hooks is not None:
                self._after_compaction(trigger, summary.message)
        finally:
            self._emit((outbound.status(None, session_id=self._s.session_id, uuid=self._uuid()),))
        return (
            f"Compacted {chosen.summarized} messages into a summary; "
            f"kept the latest {chosen.preserved} verbatim."
        )

    def _after_compaction(self, trigger: Trigger, summary: Message) -> None:
        """PostCompact with the summary, then SessionStart (source ``compact``),
        whose context reaches the next request (DECISIONS section 3)."""
        hooks = self._s.ports.hooks
        assert hooks is not None
        text = "".join(b.text for b in summary.content if isinstance(b, TextBlock))
        hooks.fire("PostCompact", {"trigger": trigger, "compact_summary": text})
        started = hooks.fire("SessionStart", {"source": "compact", "model": self._s.config.model})
        self._s.pending_context.extend(started.contexts)
