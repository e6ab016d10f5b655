"""The turn output shell over real threads (WIRE-010/011, DEC-EOF-1, the
hard-interrupt order): what its ordering core decides is what the writer
receives, whichever thread writes. Every wait is on a thread's end or an
event; nothing sleeps."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from agentx.actors.turn_output import TurnOutput
from agentx.messages.frozen import FrozenDict
from agentx.messages.records import RecordSink
from agentx.sessions.identity import SessionIdentity
from tests.actors.helpers import WAIT, Recorder, uuids

TASK_NOTE = FrozenDict(type="system", subtype="task_notification", uuid="t-1")
CANCEL = FrozenDict(type="control_cancel_request", request_id="perm-1")
RESULT = FrozenDict(type="result", subtype="error_during_execution", uuid="r-1", errors=())


def _output() -> tuple[TurnOutput, Recorder]:
    sink = Recorder()
    return TurnOutput(sink, SessionIdentity("sid"), uuids()), sink


def _on_thread(call: Callable[[], None]) -> None:
    """Run ``call`` on another thread and return once it has finished: a
    write during the hold never waits."""
    thread = threading.Thread(target=call)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive()


def _kinds(sink: Recorder) -> list[str]:
    return [
        str(r.get("state") or r.get("subtype") or r["type"])
        if r["type"] != "mark"
        else f"mark:{r['name']}"
        for r in sink.snapshot()
    ]


def test_writes_from_other_threads_during_the_hold_follow_the_acknowledgement() -> None:
    """A background task's notification and the cancelled turn's result,
    written from their own threads while the cancels are handed over, leave
    after the cancels and the acknowledgement (one list), each in the order
    it was written."""
    output, sink = _output()
    output.turn_started("p")

    def cancel(write_cancels: RecordSink) -> None:
        _on_thread(lambda: output.emit((TASK_NOTE,)))
        write_cancels((CANCEL,))
        _on_thread(lambda: output.emit((RESULT,)))
        _on_thread(lambda: output.turn_finished(more_queued=False, after_result=True))

    output.interrupt(cancel, "req")
    assert _kinds(sink) == [
        "running",
        "control_cancel_request",
        "control_response",
        "task_notification",
        "error_during_execution",
        "idle",
    ]
    assert sink.snapshot()[2]["response"] == {"subtype": "success", "request_id": "req"}


def test_a_failed_cancellation_still_writes_what_was_held_without_acknowledging() -> None:
    """Nothing handed over or held is lost when cancelling fails; no
    acknowledgement claims the interrupt succeeded, and the failure
    propagates (the actor's supervision reports it)."""
    output, sink = _output()
    output.turn_started("p")

    def cancel(write_cancels: RecordSink) -> None:
        write_cancels((CANCEL,))
        _on_thread(lambda: output.emit((RESULT,)))
        raise RuntimeError("broker gone")

    with pytest.raises(RuntimeError, match="broker gone"):
        output.interrupt(cancel, "req")
    assert _kinds(sink) == ["running", "control_cancel_request", "error_during_execution"]
    # The hold is closed: the next write leaves at once.
    output.emit((TASK_NOTE,))
    assert _kinds(sink)[-1] == "task_notification"


def test_drained_is_reported_after_the_held_records() -> None:
    """DEC-EOF-1: the drained report waits for the held result, not the
    other way round."""
    output, sink = _output()
    output.turn_started("p")
    reported = threading.Event()

    def report() -> None:
        sink.mark("drained")
        reported.set()

    def cancel(write_cancels: RecordSink) -> None:
        _on_thread(lambda: output.emit((RESULT,)))
        _on_thread(lambda: output.drained(report))
        assert not reported.is_set()

    output.interrupt(cancel, None)
    assert reported.is_set()
    assert _kinds(sink) == ["running", "error_during_execution", "mark:drained"]


def test_permission_cancels_outside_an_interrupt_fail_loud() -> None:
    """Cancels handed over after the hold closed would lose their place
    before the acknowledgement: a defect, refused."""
    output, sink = _output()
    kept: list[RecordSink] = []
    output.interrupt(kept.append, "req")
    with pytest.raises(ValueError, match="outside an interrupt"):
        kept[0]((CANCEL,))
    assert _kinds(sink) == ["control_response"]
