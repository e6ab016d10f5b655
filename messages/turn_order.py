"""The order of a turn's output across parties: one core, one ordered list
(WIRE-004, WIRE-010/011, DEC-TURN-2, DEC-TURN-5, the spec's hard-interrupt
order, scenario 15).

Everything the turn side writes passes through :class:`TurnOrder`: the
engine's records, tool progress, background task events, session state
changes, and the records of the end of a turn. Each method returns the
:data:`Steps` to carry out, in order: records for the writer, and the two
internal-event log steps (:class:`LogTurnEnd`, :class:`LogTaskEnd`,
:class:`FlushEvents`) and the runner's :class:`Drained` report. The
shell carries out one method's steps, and hands their records to the writer,
before the next method runs (one lock), so the order decided here is the
order the writer receives.

Rule 1, the interrupt (WIRE-010/011, hard-interrupt order). :meth:`interrupt`
opens a hold. While it is open the shell cancels the active scopes and
hands :meth:`cancels` every pending permission's ``control_cancel_request``
(the control broker rejects each waiter after handing over its cancel);
everything the turn side produces meanwhile (the denied permission's
``running``, the terminal ``tool_result``, task events, the
``error_during_execution`` result, the flush, ``idle``) is kept in the order
it came. :meth:`acknowledge` closes the hold and returns one list: the
cancels, the interrupt's ``control_response``, then the kept steps. The hold
ends on that event, never on a timer.

Rule 2, after the result (hard-interrupt order, scenario 15): the result,
then the prompt suggestion (only when its work survived), then the
post-turn summary (``--post-turn-summaries``), then the turn's internal
event and the internal-event flush (deferred while prompts are queued: one
write for the burst), then ``idle``.

Rule 3, drained (DEC-EOF-1): :meth:`drained` reports the end of the turns
only after everything before it, held or not, has left.

Rule 4, idle (WIRE-004, DEC-TURN-2): ``idle`` is published only when the
session state core says the turn and every finite background task have
drained, and the internal-event flush immediately precedes it, whichever
party's event (the turn's end or the last task's end) lets it out.

The result itself waits for the finite background tasks of its turn
(DEC-TURN-5); that wait is bounded by the tasks' own timeouts and decided by
:meth:`agentx.messages.tasks.TaskBoard.result_hold`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct

from agentx.messages import outbound
from agentx.messages.records import Records
from agentx.messages.session_state import SessionStateCore


class LogTurnEnd(Struct, frozen=True):
    """Add the turn's ``turn_end`` entry to the internal-event log."""

    result_uuid: str
    subtype: str
    prompt_suggestion_uuid: str | None


class LogTaskEnd(Struct, frozen=True):
    """Add a background task's ``task_end`` entry to the internal-event log."""

    task_id: str
    status: str


class FlushEvents(Struct, frozen=True):
    """Write the internal-event log through (scenario 15); never a claim
    that any visible record was delivered."""


class Drained(Struct, frozen=True):
    """Report that the runner has no turn left (DEC-EOF-1): every admitted
    turn's result is in the writer's FIFO before this step runs."""


Step = Mapping[str, Any] | LogTurnEnd | LogTaskEnd | FlushEvents | Drained
Steps = tuple[Step, ...]


class Observed(Struct, frozen=True):
    """What the turn wrote that the end-of-turn records need."""

    prompt: str = ""
    last_assistant_uuid: str | None = None
    last_tool_summary: str | None = None
    result: Mapping[str, Any] | None = None


class TurnOrder:
    """The ordering core of the turn side; see the module docstring.

    ``session_id`` is read each time a record is built (``/clear`` renews
    it); ``new_uuid`` gives each built record its id.
    """

    def __init__(self, *, session_id: Callable[[], str], new_uuid: Callable[[], str]) -> None:
        self._session_id = session_id
        self._uuid = new_uuid
        self._state = SessionStateCore()
        self._held: list[Step] | None = None
        self._cancels: list[Mapping[str, Any]] = []
        self._seen = Observed()

    @property
    def observed(self) -> Observed:
        return self._seen

    @property
    def holding(self) -> bool:
        """True between :meth:`interrupt` and :meth:`acknowledge`."""
        return self._held is not None

    # -- Rule 1: the interrupt ------------------------------------------------

    def interrupt(self) -> None:
        """Open the hold: the turn side's steps are kept until :meth:`acknowledge`."""
        if self._held is not None:
            raise ValueError("interrupt while an interrupt is being acknowledged")
        self._held = []

    def cancels(self, records: Records) -> None:
        """The pending permissions' ``control_cancel_request`` records (WIRE-011)."""
        if self._held is None:
            raise ValueError("permission cancels outside an interrupt")
        self._cancels.extend(records)

    def acknowledge(self, request_id: str | None) -> Steps:
        """Close the hold: the permission cancels, the interrupt's success
        response (WIRE-010; none for a ``now`` prompt, a shutdown or a
        failed cancellation), then every kept step in arrival order."""
        if self._held is None:
            raise ValueError("acknowledge without an interrupt")
        cancels, self._cancels = tuple(self._cancels), []
        held, self._held = tuple(self._held), None
        if request_id is None:
            return (*cancels, *held)
        return (*cancels, outbound.control_response_success(request_id), *held)

    # -- the turn side's records ------------------------------------------------

    def records(self, records: Records) -> Steps:
        """Records the engine, a tool's progress or a background task wrote."""
        for record in records:
            self._see(record)
        return self._out(records)

    def _see(self, record: Mapping[str, Any]) -> None:
        kind = record.get("type")
        seen = self._seen
        if kind == "assistant":
            self._seen = Observed(seen.prompt, record["uuid"], seen.last_tool_summary, seen.result)
        elif kind == "tool_use_summary":
            self._seen = Observed(
                seen.prompt, seen.last_assistant_uuid, record["summary"], seen.result
            )
        elif kind == "result":
            self._seen = Observed(
                seen.prompt, seen.last_assistant_uuid, seen.last_tool_summary, record
            )

    def _out(self, steps: Steps) -> Steps:
        if self._held is None:
            return steps
        self._held.extend(steps)
        return ()

    def drained(self) -> Steps:
        """No turn is left after input EOF; see Rule 3."""
        return self._out((Drained(),))

    # -- Rule 4: session state (DEC-TURN-2, WIRE-004) ---------------------------

    def _publish(self, state: outbound.SessionState | None) -> Steps:
        """The state change's record; the flush goes right before ``idle``."""
        if state is None:
            return ()
        record = outbound.session_state_changed(
            state, session_id=self._session_id(), uuid=self._uuid()
        )
        return (FlushEvents(), record) if state == "idle" else (record,)

    def turn_started(self, prompt: str) -> Steps:
        """A turn for ``prompt`` starts: ``running`` unless it already is."""
        self._seen = Observed(prompt)
        return self._out(self._publish(self._state.turn_started()))

    def permission_opened(self) -> Steps:
        return self._out(self._publish(self._state.permission_opened()))

    def permission_closed(self) -> Steps:
        return self._out(self._publish(self._state.permission_closed()))

    def task_started(self) -> Steps:
        return self._out(self._publish(self._state.task_started()))

    def task_finished(self, task_id: str, status: str) -> Steps:
        """A finite background task ended with ``status``: its internal
        event, then (for the last one) the flush and ``idle``."""
        published = self._publish(self._state.task_finished())
        return self._out((LogTaskEnd(task_id, status), *published))

    # -- Rule 2: after the result -------------------------------------------------

    def suggestion_due(self, *, queued: bool, stopping: bool) -> bool:
        """Whether to ask for the predicted next prompt: only after a
        successful result, with nothing queued and no shutdown under way."""
        result = self._seen.result
        return result is not None and result["subtype"] == "success" and not (queued or stopping)

    def turn_finished(
        self,
        *,
        more_queued: bool,
        after_result: bool,
        suggestion: str | None = None,
        summary: bool = False,
    ) -> Steps:
        """The turn is over: the after-result steps (when ``after_result``
        and the turn wrote its result), then the state change.

        ``suggestion`` is the predicted next prompt when its work survived;
        ``summary`` asks for the post-turn summary; ``more_queued`` defers
        the flush and keeps the session ``running``.
        """
        steps: list[Step] = []
        result = self._seen.result
        if after_result and result is not None:
            steps.extend(self._after_result(result, suggestion=suggestion, summary=summary))
            if not more_queued:
                steps.append(FlushEvents())
        for step in self._publish(self._state.turn_finished(more_queued=more_queued)):
            # One flush right before ``idle``, not two in a row.
            if not (isinstance(step, FlushEvents) and steps and isinstance(steps[-1], FlushEvents)):
                steps.append(step)
        return self._out(tuple(steps))

    def _after_result(
        self, result: Mapping[str, Any], *, suggestion: str | None, summary: bool
    ) -> Steps:
        steps: list[Step] = []
        suggestion_uuid = None
        if suggestion is not None:
            suggestion_uuid = self._uuid()
            steps.append(
                outbound.prompt_suggestion(
                    suggestion, session_id=self._session_id(), uuid=suggestion_uuid
                )
            )
        if summary:
            # --post-turn-summaries only: its core loads with the first summary (DEC-CLI-3).
            from agentx.messages import post_turn_summary  # noqa: PLC0415

            facts = post_turn_summary.TurnFacts(
                prompt=self._seen.prompt,
                result_uuid=result["uuid"],
                subtype=result["subtype"],
                result_text=result.get("result", ""),
                errors=tuple(result.get("errors", ())),
                last_assistant_uuid=self._seen.last_assistant_uuid,
                last_tool_summary=self._seen.last_tool_summary,
            )
            steps.append(
                post_turn_summary.build(facts, session_id=self._session_id(), new_uuid=self._uuid)
            )
        steps.append(LogTurnEnd(result["uuid"], result["subtype"], suggestion_uuid))
        return tuple(steps)
