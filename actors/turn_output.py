"""The turn worker's output side (WIRE-004, WIRE-010/011, DEC-TURN-2, DEC-TURN-5).

:class:`TurnOutput` is the worker's emit handle, held while an interrupt is
acknowledged so the cancelled turn's records follow the acknowledgement;
:class:`ToolProgress` emits ``tool_progress`` while a tool runs long;
:class:`StateRecorder` publishes ``session_state_changed`` (``idle`` only
after the background tasks and the internal-event flush);
:class:`SummarizingGate` sends the ``blocked`` post-turn summary before a
permission prompt; :func:`flush_events` is the internal-event flush of the
hard-interrupt order (scenario 15).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

from loguru import logger

from agentx.messages import outbound, post_turn_summary
from agentx.messages.records import Records, RecordSink
from agentx.messages.session_state import SessionStateCore
from agentx.sessions.event_log import InternalEventLog
from agentx.sessions.identity import SessionIdentity
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionAsk, PermissionGate, PermissionOutcome

#: DEC-TURN-3: tool_progress for tools running longer than this.
TOOL_PROGRESS_SECONDS = 1.0
#: Upper bound on holding turn output while an interrupt is acknowledged.
HOLD_LIMIT_SECONDS = 10.0


class TurnObservation:
    """What the worker's turn wrote that the end-of-turn records need
    (post-turn summary facts, the result); written on the worker thread only."""

    __slots__ = ("last_assistant_uuid", "last_tool_summary", "prompt", "result")

    def __init__(self, prompt: str = "") -> None:
        self.prompt = prompt
        self.last_assistant_uuid: str | None = None
        self.last_tool_summary: str | None = None
        self.result: Mapping[str, Any] | None = None

    def see(self, record: Mapping[str, Any]) -> None:
        kind = record.get("type")
        if kind == "assistant":
            self.last_assistant_uuid = record["uuid"]
        elif kind == "tool_use_summary":
            self.last_tool_summary = record["summary"]
        elif kind == "result":
            self.result = record


class TurnOutput:
    """The worker thread's emit handle (spec hard-interrupt order, WIRE-010/011).

    While an interrupt is being acknowledged the handle is held: the
    cancelled turn's tool results, state changes and result wait until the
    cancel records and the acknowledgement are in the FIFO, so the ordinary
    result always follows the acknowledgement. The background tasks emit
    through the same handle, so their events follow the acknowledgement too.

    ``hold_result`` runs before a turn's ``result`` is written: the result
    waits for the finite background tasks' terminal events, interrupted or
    not (DEC-TURN-5, scenario 9).
    """

    def __init__(self, emit: RecordSink, hold_result: Callable[[], None] | None = None) -> None:
        self._emit = emit
        self._hold_result = hold_result
        self._released = threading.Event()
        self._released.set()
        self.observed = TurnObservation()

    def hold_results_on(self, hold_result: Callable[[], None]) -> None:
        """Set ``hold_result`` once the background tasks exist (they emit
        through this handle, so they are built after it)."""
        self._hold_result = hold_result

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def begin_turn(self, prompt: str) -> None:
        """The worker starts the turn for ``prompt``."""
        self.observed = TurnObservation(prompt)

    def emit(self, records: Records) -> None:
        self._released.wait(HOLD_LIMIT_SECONDS)
        for record in records:
            if record.get("type") == "result" and self._hold_result is not None:
                self._hold_result()
            self.observed.see(record)
        self._emit(records)

    __call__ = emit


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
            timer.join()


class StateRecorder:
    """Publishes :class:`SessionStateCore` changes (DEC-TURN-2, WIRE-004).

    The worker thread reports turns and permissions; background task
    watchers report their tasks, so every change happens under one lock.
    ``before_idle`` runs right before ``idle`` is published: the
    internal-event flush of the hard-interrupt order.
    """

    def __init__(
        self,
        emit: RecordSink,
        session: SessionIdentity,
        new_uuid: Callable[[], str],
        before_idle: Callable[[], None] | None = None,
    ) -> None:
        self._core = SessionStateCore()
        self._emit = emit
        self._session = session
        self._uuid = new_uuid
        self._before_idle = before_idle
        self._lock = threading.Lock()

    def _publish(self, state: outbound.SessionState | None) -> None:
        if state is None:
            return
        if state == "idle" and self._before_idle is not None:
            self._before_idle()
        self._emit(
            (outbound.session_state_changed(state, session_id=self._session.id, uuid=self._uuid()),)
        )

    def turn_started(self) -> None:
        with self._lock:
            self._publish(self._core.turn_started())

    def turn_finished(self, *, more_queued: bool) -> None:
        with self._lock:
            self._publish(self._core.turn_finished(more_queued=more_queued))

    def permission_opened(self) -> None:
        with self._lock:
            self._publish(self._core.permission_opened())

    def permission_closed(self) -> None:
        with self._lock:
            self._publish(self._core.permission_closed())

    def task_started(self) -> None:
        with self._lock:
            self._publish(self._core.task_started())

    def task_finished(self) -> None:
        with self._lock:
            self._publish(self._core.task_finished())


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
