"""The turn side's one ordered output (WIRE-004, WIRE-010/011, DEC-TURN-2,
DEC-TURN-5, the hard-interrupt order, scenario 15).

:class:`TurnOutput` is the thread shell around
:class:`~agentx.messages.turn_order.TurnOrder`: the turn worker, tool
progress timers, background task watchers and the runner's interrupt all
write through it, and each call carries out the steps the core returns, under
one lock, before the next call's (the writer's FIFO receives exactly the
core's order; no other party writes a record these rules order).
:class:`ToolProgress` emits ``tool_progress`` while a tool runs long;
:class:`SummarizingGate` sends the ``blocked`` post-turn summary before a
permission prompt; :func:`flush_events` is the internal-event flush.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentx.diagnostics import logger
from agentx.messages import outbound
from agentx.messages.records import Records, RecordSink
from agentx.messages.turn_order import (
    Drained,
    FlushEvents,
    LogTaskEnd,
    LogTurnEnd,
    Observed,
    Steps,
    TurnOrder,
)
from agentx.sessions.event_log import InternalEventLog
from agentx.sessions.identity import SessionIdentity
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionAsk, PermissionGate, PermissionOutcome

if TYPE_CHECKING:
    from concurrent.futures import Future

#: DEC-TURN-3: tool_progress for tools running longer than this.
TOOL_PROGRESS_SECONDS = 1.0


class TurnOutput:
    """The turn side's emit handle and session-state publisher; see the
    module docstring.

    ``hold_result`` runs before a turn's ``result`` is handed to the core,
    outside the lock: the result waits for the finite background tasks'
    terminal events, interrupted or not, as long as their timeouts allow
    (DEC-TURN-5, scenario 9). ``events`` is the internal-event log the
    core's log steps go to.
    """

    def __init__(
        self,
        emit: RecordSink,
        session: SessionIdentity,
        new_uuid: Callable[[], str],
        *,
        events: InternalEventLog | None = None,
        hold_result: Callable[[], None] | None = None,
    ) -> None:
        self._emit = emit
        self._events = events
        self._hold_result = hold_result
        self._order = TurnOrder(session_id=lambda: session.id, new_uuid=new_uuid)
        self._lock = threading.Lock()
        self._on_drained: Callable[[], None] | None = None

    def hold_results_on(self, hold_result: Callable[[], None]) -> None:
        """Set ``hold_result`` once the background tasks exist (they emit
        through this handle, so they are built after it)."""
        self._hold_result = hold_result

    @property
    def observed(self) -> Observed:
        """What the current turn wrote so far (for its summaries)."""
        with self._lock:
            return self._order.observed

    def emit(self, records: Records) -> None:
        if self._hold_result is not None and any(r.get("type") == "result" for r in records):
            self._hold_result()
        with self._lock:
            self._carry(self._order.records(records))

    __call__ = emit

    def interrupt(self, cancel: Callable[[RecordSink], object], request_id: str | None) -> None:
        """WIRE-010/011: hold the turn side's output and run ``cancel``, which
        aborts the active scopes and hands every pending permission's cancel
        record to the emit it is given; then write, as one list, the
        cancels, the acknowledgement of ``request_id`` (None: none) and what
        the cancelled turn wrote meanwhile.

        If ``cancel`` fails, the cancels and what was held are still
        written, without an acknowledgement, and the failure propagates.
        """
        with self._lock:
            self._order.interrupt()
        acknowledged: str | None = None
        try:
            cancel(self._cancels)
            acknowledged = request_id
        finally:
            with self._lock:
                self._carry(self._order.acknowledge(acknowledged))

    def _cancels(self, records: Records) -> None:
        with self._lock:
            self._order.cancels(records)

    # -- session state (DEC-TURN-2, WIRE-004) -----------------------------------

    def turn_started(self, prompt: str) -> None:
        with self._lock:
            self._carry(self._order.turn_started(prompt))

    def permission_opened(self) -> None:
        with self._lock:
            self._carry(self._order.permission_opened())

    def permission_closed(self) -> None:
        with self._lock:
            self._carry(self._order.permission_closed())

    def task_started(self) -> None:
        with self._lock:
            self._carry(self._order.task_started())

    def task_finished(self, task_id: str, status: str) -> None:
        with self._lock:
            self._carry(self._order.task_finished(task_id, status))

    # -- the end of a turn --------------------------------------------------------

    def suggestion_due(self, *, queued: bool, stopping: bool) -> bool:
        with self._lock:
            return self._order.suggestion_due(queued=queued, stopping=stopping)

    def turn_finished(
        self,
        *,
        more_queued: bool,
        after_result: bool,
        suggestion: str | None = None,
        summary: bool = False,
    ) -> None:
        """The after-result order, then the state change (see TurnOrder)."""
        with self._lock:
            self._carry(
                self._order.turn_finished(
                    more_queued=more_queued,
                    after_result=after_result,
                    suggestion=suggestion,
                    summary=summary,
                )
            )

    def drained(self, report: Callable[[], None]) -> None:
        """DEC-EOF-1: call ``report`` once everything written before has left
        (after a held interrupt's records, when one is being acknowledged)."""
        with self._lock:
            self._on_drained = report
            self._carry(self._order.drained())

    def _carry(self, steps: Steps) -> None:
        """Carry out ``steps`` in order (under the lock); consecutive records
        go to the writer as one batch."""
        batch: list[Mapping[str, Any]] = []
        for step in steps:
            if isinstance(step, LogTurnEnd | LogTaskEnd | FlushEvents | Drained):
                if batch:
                    self._emit(tuple(batch))
                    batch = []
                self._step(step)
            else:
                batch.append(step)
        if batch:
            self._emit(tuple(batch))

    def _step(self, step: LogTurnEnd | LogTaskEnd | FlushEvents | Drained) -> None:
        if isinstance(step, Drained):
            if self._on_drained is not None:
                self._on_drained()
        elif self._events is None:
            return
        elif isinstance(step, FlushEvents):
            flush_events(self._events)
        elif isinstance(step, LogTaskEnd):
            self._events.task_ended(step.task_id, step.status)
        else:
            self._events.turn_ended(
                result_uuid=step.result_uuid,
                subtype=step.subtype,
                prompt_suggestion_uuid=step.prompt_suggestion_uuid,
            )


class ToolProgress:
    """Emits ``tool_progress`` for a tool running longer than a second.

    One timer thread per tool run, started and joined around the run (the
    turn engine's ``progress`` hook); it emits through the turn's output so
    progress never overtakes the tool use it reports on.
    """

    def __init__(
        self,
        emit: RecordSink,
        session: SessionIdentity,
        new_uuid: Callable[[], str],
        interval: float = TOOL_PROGRESS_SECONDS,
    ) -> None:
        self._emit = emit
        self._session = session
        self._uuid = new_uuid
        self._interval = interval

    def to(self, emit: RecordSink) -> ToolProgress:
        """The same watch writing through ``emit`` (a subagent's records get
        its parent's ``parent_tool_use_id`` there, DEC-TURN-3)."""
        return ToolProgress(emit, self._session, self._uuid, self._interval)

    @contextmanager
    def __call__(self, tool_use_id: str, tool_name: str) -> Iterator[None]:
        done = threading.Event()
        started = time.monotonic()

        def tick() -> None:
            while not done.wait(self._interval):
                self._emit(
                    (
                        outbound.tool_progress(
                            tool_use_id=tool_use_id,
                            tool_name=tool_name,
                            parent_tool_use_id=None,
                            elapsed_time_seconds=round(time.monotonic() - started, 3),
                            session_id=self._session.id,
                            uuid=self._uuid(),
                        ),
                    )
                )

        timer = threading.Thread(target=tick, name="agentx-tool-progress", daemon=True)
        timer.start()
        try:
            yield
        finally:
            done.set()
            # Deadline enforced elsewhere (DECISIONS section 8): with ``done``
            # set the tick's wait returns at once, and what may still run is
            # one emit, a TurnOutput lock hold and a tell to the writer.
            timer.join()


class SummarizingGate:
    """``--post-turn-summaries``: a permission prompt opening mid-turn is
    reported as a blocked session (``system/post_turn_summary`` with
    ``needs_action``) before the host is asked; then the real gate asks."""

    def __init__(
        self,
        gate: PermissionGate,
        output: TurnOutput,
        session: SessionIdentity,
        new_uuid: Callable[[], str],
    ) -> None:
        self._gate = gate
        self._output = output
        self._session = session
        self._uuid = new_uuid

    def ask(self, ask: PermissionAsk) -> Future[PermissionOutcome]:
        # The summary core loads with the first summary, not at start (DEC-CLI-3).
        from agentx.messages import post_turn_summary  # noqa: PLC0415

        seen = self._output.observed
        self._output.emit(
            (
                post_turn_summary.build_blocked(
                    prompt=seen.prompt,
                    summarizes_uuid=seen.last_assistant_uuid or ask.tool_use_id,
                    last_tool_summary=seen.last_tool_summary,
                    tool_name=ask.tool_name,
                    pending_action=ask.description,
                    session_id=self._session.id,
                    new_uuid=self._uuid,
                ),
            )
        )
        return self._gate.ask(ask)

    def ask_network(
        self, host: str, port: int, *, cancel: CancelScope
    ) -> Future[PermissionOutcome]:
        return self._gate.ask_network(host, port, cancel=cancel)


def flush_events(events: InternalEventLog, *, close: bool = False) -> None:
    """The internal-event flush (with ``close``, the last one, at the host's
    end); a failed write is a WARN, never a claim about the visible records
    (scenario 15)."""
    try:
        if close:
            events.close()
        else:
            events.flush()
    except OSError as exc:
        logger.warning("internal-event log write failed: {}", exc.strerror or exc)
