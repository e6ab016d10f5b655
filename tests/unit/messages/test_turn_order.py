"""The turn side's ordering core, as tables (WIRE-004, WIRE-010/011,
DEC-TURN-2, DEC-TURN-5, the spec's hard-interrupt order, scenario 15).

Each case feeds the core a sequence of events and compares every step it
returned, in order, as a short name: a record's type (a system record's
subtype, a state change's state), ``log`` for the turn's internal event,
``log:<task id>`` for a task's, ``flush`` for the internal-event flush and
``drained`` for the runner's end-of-turns report.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentx.messages import outbound
from agentx.messages.frozen import FrozenDict
from agentx.messages.turn_order import (
    Drained,
    FlushEvents,
    LogTaskEnd,
    LogTurnEnd,
    Steps,
    TurnOrder,
)

Event = Callable[[TurnOrder], Steps]


def _order(session: list[str] | None = None) -> TurnOrder:
    ids = itertools.count()
    box = session or ["sid"]
    return TurnOrder(session_id=lambda: box[-1], new_uuid=lambda: f"uuid-{next(ids)}")


def _name(step: Mapping[str, Any] | LogTurnEnd | LogTaskEnd | FlushEvents | Drained) -> str:
    if isinstance(step, FlushEvents):
        return "flush"
    if isinstance(step, Drained):
        return "drained"
    if isinstance(step, LogTurnEnd):
        return "log"
    if isinstance(step, LogTaskEnd):
        return f"log:{step.task_id}"
    if step.get("subtype") == "session_state_changed":
        return str(step["state"])
    if step["type"] == "control_response":
        return f"ack:{step['response']['request_id']}"
    if step["type"] == "control_cancel_request":
        return f"cancel:{step['request_id']}"
    if step["type"] in ("system", "result"):
        return f"{step['type']}:{step['subtype']}"
    return str(step["type"])


def _names(steps: Steps) -> list[str]:
    return [_name(step) for step in steps]


def _record(kind: str, **fields: Any) -> FrozenDict:
    return FrozenDict(type=kind, **fields)


ASSISTANT = _record("assistant", uuid="a-1")
TOOL_RESULT = _record("user", uuid="u-1")
TOOL_SUMMARY = _record("tool_use_summary", summary="Ran ls", uuid="s-1")
TASK_NOTE = _record("system", subtype="task_notification", uuid="t-1")
SUCCESS = _record("result", subtype="success", uuid="r-1", result="done")
INTERRUPTED = _record(
    "result", subtype="error_during_execution", uuid="r-2", errors=("Interrupted by user",)
)


def started(order: TurnOrder) -> Steps:
    return order.turn_started("list the files")


def asked(order: TurnOrder) -> Steps:
    return order.permission_opened()


def answered(order: TurnOrder) -> Steps:
    return order.permission_closed()


def task(order: TurnOrder) -> Steps:
    return order.task_started()


def task_ended(order: TurnOrder) -> Steps:
    return order.task_finished("task_1", "completed")


def writes(*records: FrozenDict) -> Event:
    return lambda order: order.records(records)


def finished(*, more: bool = False, suggestion: str | None = None, summary: bool = False) -> Event:
    return lambda order: order.turn_finished(
        more_queued=more, after_result=True, suggestion=suggestion, summary=summary
    )


def drained(order: TurnOrder) -> Steps:
    return order.drained()


def interrupt(order: TurnOrder) -> Steps:
    order.interrupt()
    return ()


CANCELS = (
    _record("control_cancel_request", request_id="perm-1"),
    _record("control_cancel_request", request_id="perm-2"),
)


def cancelled(order: TurnOrder) -> Steps:
    """The control broker hands over the pending permissions' cancels."""
    order.cancels(CANCELS)
    return ()


def acknowledged(request_id: str | None) -> Event:
    return lambda order: order.acknowledge(request_id)


def _run(events: tuple[Event, ...]) -> list[str]:
    order = _order()
    return [name for event in events for name in _names(event(order))]


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            (interrupt, acknowledged("req")),
            ["ack:req"],
            id="idle-session-only-acknowledges",
        ),
        pytest.param(
            (
                started,
                asked,
                asked,
                interrupt,
                cancelled,
                answered,
                answered,
                writes(TOOL_RESULT),
                writes(TASK_NOTE),
                writes(INTERRUPTED),
                finished(),
                acknowledged("req"),
            ),
            [
                "running",
                "requires_action",
                "cancel:perm-1",
                "cancel:perm-2",
                "ack:req",
                "running",
                "user",
                "system:task_notification",
                "result:error_during_execution",
                "log",
                "flush",
                "idle",
            ],
            id="hard-interrupt-order-after-the-acknowledgement",
        ),
        pytest.param(
            (started, interrupt, writes(TASK_NOTE), cancelled, acknowledged("req")),
            [
                "running",
                "cancel:perm-1",
                "cancel:perm-2",
                "ack:req",
                "system:task_notification",
            ],
            id="cancels-precede-what-was-held-before-they-came",
        ),
        pytest.param(
            (started, interrupt, cancelled, writes(INTERRUPTED), acknowledged(None)),
            ["running", "cancel:perm-1", "cancel:perm-2", "result:error_during_execution"],
            id="a-shutdown-writes-the-cancels-without-an-acknowledgement",
        ),
        pytest.param(
            (started, interrupt, writes(INTERRUPTED), finished(), drained, acknowledged("req")),
            [
                "running",
                "ack:req",
                "result:error_during_execution",
                "log",
                "flush",
                "idle",
                "drained",
            ],
            id="drained-is-reported-after-the-held-result",
        ),
        pytest.param(
            (started, writes(SUCCESS), finished(), drained),
            ["running", "result:success", "log", "flush", "idle", "drained"],
            id="drained-without-an-interrupt-follows-at-once",
        ),
        pytest.param(
            (started, writes(ASSISTANT), interrupt, writes(INTERRUPTED), acknowledged("req")),
            ["running", "assistant", "ack:req", "result:error_during_execution"],
            id="earlier-records-stay-before-the-acknowledgement",
        ),
        pytest.param(
            (started, interrupt, writes(INTERRUPTED), acknowledged(None)),
            ["running", "result:error_during_execution"],
            id="a-now-prompt-holds-without-acknowledging",
        ),
        pytest.param(
            (
                started,
                interrupt,
                acknowledged("req"),
                writes(INTERRUPTED),
                finished(),
            ),
            ["running", "ack:req", "result:error_during_execution", "log", "flush", "idle"],
            id="after-the-acknowledgement-records-pass-at-once",
        ),
        pytest.param(
            (
                started,
                task,
                writes(SUCCESS),
                finished(suggestion="next?"),
                interrupt,
                task_ended,
                acknowledged("req"),
            ),
            [
                "running",
                "result:success",
                "prompt_suggestion",
                "log",
                "flush",
                "ack:req",
                "log:task_1",
                "flush",
                "idle",
            ],
            id="a-task-ending-during-the-hold-lets-idle-out-after-the-acknowledgement",
        ),
    ],
)
def test_interrupt_order(events: tuple[Event, ...], expected: list[str]) -> None:
    """WIRE-011 and the hard-interrupt order: what the turn side writes while
    the interrupt is acknowledged follows the acknowledgement, in order."""
    assert _run(events) == expected


def test_nothing_leaves_while_the_hold_is_open() -> None:
    """Every method returns no step between interrupt and acknowledge: the
    hold ends on the acknowledgement, never by itself."""
    order = _order()
    assert _names(order.turn_started("p")) == ["running"]
    order.interrupt()
    assert order.holding
    held = (
        order.permission_opened(),
        order.permission_closed(),
        order.task_started(),
        order.records((TOOL_RESULT, INTERRUPTED)),
        order.task_finished("task_1", "stopped"),
        order.turn_finished(more_queued=False, after_result=True, summary=True),
    )
    assert held == ((),) * len(held)
    released = _names(order.acknowledge("req"))
    assert released[0] == "ack:req"
    assert not order.holding
    assert released[1:] == [
        "requires_action",
        "running",
        "user",
        "result:error_during_execution",
        "log:task_1",
        "system:post_turn_summary",
        "log",
        "flush",
        "idle",
    ]


def test_the_acknowledgement_is_the_wire_success_with_no_payload() -> None:
    """WIRE-010: matching request_id, subtype success, no operation payload."""
    order = _order()
    order.interrupt()
    assert order.acknowledge("req-7") == (outbound.control_response_success("req-7"),)


@pytest.mark.parametrize(
    "misuse",
    [
        pytest.param(lambda order: (order.interrupt(), order.interrupt()), id="interrupt-twice"),
        pytest.param(lambda order: order.acknowledge("req"), id="acknowledge-without-interrupt"),
        pytest.param(
            lambda order: (order.interrupt(), order.acknowledge("a"), order.acknowledge("b")),
            id="acknowledge-twice",
        ),
        pytest.param(lambda order: order.cancels(CANCELS), id="cancels-without-interrupt"),
    ],
)
def test_a_hold_is_opened_and_closed_exactly_once(misuse: Callable[[TurnOrder], object]) -> None:
    with pytest.raises(ValueError, match="interrupt"):
        misuse(_order())


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            (started, writes(SUCCESS), finished(suggestion="and then?", summary=True)),
            [
                "running",
                "result:success",
                "prompt_suggestion",
                "system:post_turn_summary",
                "log",
                "flush",
                "idle",
            ],
            id="result-suggestion-summary-flush-idle",
        ),
        pytest.param(
            (started, writes(SUCCESS), finished()),
            ["running", "result:success", "log", "flush", "idle"],
            id="without-suggestion-or-summary",
        ),
        pytest.param(
            (started, writes(SUCCESS), finished(more=True, suggestion="x", summary=True)),
            ["running", "result:success", "prompt_suggestion", "system:post_turn_summary", "log"],
            id="queued-prompts-defer-the-flush-and-idle",
        ),
        pytest.param(
            (
                started,
                writes(SUCCESS),
                finished(more=True),
                started,
                writes(SUCCESS),
                finished(),
            ),
            ["running", "result:success", "log", "result:success", "log", "flush", "idle"],
            id="one-flush-for-the-burst",
        ),
        pytest.param(
            (started, task, writes(SUCCESS), finished(suggestion="s"), task_ended),
            [
                "running",
                "result:success",
                "prompt_suggestion",
                "log",
                "flush",
                "log:task_1",
                "flush",
                "idle",
            ],
            id="a-running-task-lets-idle-out-when-it-ends",
        ),
        pytest.param(
            (started, finished()),
            ["running", "flush", "idle"],
            id="no-result-written-no-after-result-steps",
        ),
        pytest.param(
            (started, writes(INTERRUPTED), finished(summary=True)),
            [
                "running",
                "result:error_during_execution",
                "system:post_turn_summary",
                "log",
                "flush",
                "idle",
            ],
            id="an-interrupted-turn-still-gets-its-summary",
        ),
    ],
)
def test_after_result_order(events: tuple[Event, ...], expected: list[str]) -> None:
    """The hard-interrupt order's tail and scenario 15: result, suggestion,
    summary, the internal event and its flush, then idle (WIRE-004)."""
    assert _run(events) == expected


def test_an_input_error_turn_has_no_after_result_steps() -> None:
    """A prompt answered by an input error (its attachment vanished) gets
    neither suggestion nor summary nor internal event; idle still follows
    the flush."""
    order = _order()
    order.turn_started("p")
    order.records((SUCCESS,))  # an earlier result seen by this turn's core
    steps = order.turn_finished(more_queued=False, after_result=False, suggestion="s", summary=True)
    assert _names(steps) == ["flush", "idle"]


def test_exactly_one_flush_precedes_idle() -> None:
    """The after-result flush and the flush before idle are one step."""
    order = _order()
    order.turn_started("p")
    order.records((SUCCESS,))
    steps = order.turn_finished(more_queued=False, after_result=True)
    assert _names(steps)[-2:] == ["flush", "idle"]
    assert _names(steps).count("flush") == 1


@pytest.mark.parametrize(
    ("result", "queued", "stopping", "due"),
    [
        (SUCCESS, False, False, True),
        (INTERRUPTED, False, False, False),
        (SUCCESS, True, False, False),
        (SUCCESS, False, True, False),
        (None, False, False, False),
    ],
    ids=["success", "error-result", "prompt-queued", "stopping", "no-result"],
)
def test_suggestion_due(result: FrozenDict | None, queued: bool, stopping: bool, due: bool) -> None:
    order = _order()
    order.turn_started("p")
    if result is not None:
        order.records((result,))
    assert order.suggestion_due(queued=queued, stopping=stopping) is due


def test_the_turn_end_names_the_result_and_the_suggestion() -> None:
    """The internal event carries the result's uuid and subtype and the uuid
    the suggestion record was written with; the summary summarises the last
    assistant record and reports the last tool summary."""
    order = _order()
    order.turn_started("list the files\nplease")
    order.records((ASSISTANT, TOOL_SUMMARY, SUCCESS))
    steps = order.turn_finished(
        more_queued=False, after_result=True, suggestion="and then?", summary=True
    )
    suggestion, summary, log = steps[0], steps[1], steps[2]
    assert isinstance(suggestion, Mapping) and isinstance(summary, Mapping)
    assert suggestion["suggestion"] == "and then?"
    assert log == LogTurnEnd("r-1", "success", suggestion["uuid"])
    assert summary["summarizes_uuid"] == "a-1"
    assert summary["recent_action"] == "Ran ls"
    assert summary["title"] == "list the files"


def test_a_new_turn_forgets_the_last_turns_observations() -> None:
    order = _order()
    order.turn_started("first")
    order.records((ASSISTANT, TOOL_SUMMARY, SUCCESS))
    order.turn_finished(more_queued=False, after_result=True)
    order.turn_started("second")
    assert order.observed.prompt == "second"
    assert order.observed.result is None
    assert order.observed.last_assistant_uuid is None
    assert order.observed.last_tool_summary is None


def test_records_are_built_with_the_current_session_id() -> None:
    """``/clear`` renews the session id: the next state change carries it."""
    session = ["sid-1"]
    order = _order(session)
    (running,) = order.turn_started("p")
    session.append("sid-2")
    order.records((SUCCESS,))
    *_, idle = order.turn_finished(more_queued=False, after_result=True, suggestion="s")
    assert isinstance(running, Mapping) and isinstance(idle, Mapping)
    assert (running["session_id"], idle["session_id"]) == ("sid-1", "sid-2")


def test_an_unbalanced_state_event_is_refused() -> None:
    """A defect in a shell (a permission closed twice) fails loud."""
    order = _order()
    with pytest.raises(ValueError, match="permission_closed"):
        order.permission_closed()
    with pytest.raises(ValueError, match="task_finished"):
        order.task_finished("task_1", "completed")
