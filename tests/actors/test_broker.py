"""ControlBrokerActor over real pykka threads (WIRE-006..011, WIRE-015, scenarios 4, 5, 12, 13, 19).

Every wait is on a future or an event; nothing sleeps.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pykka
import pytest

from agentx.actors.broker import ControlBroker, ControlRequestFailed
from agentx.messages.control import (
    ABORTED_MESSAGE,
    EMISSION_FAILED_MESSAGE,
    SHUTDOWN_MESSAGE,
    STREAM_CLOSED_MESSAGE,
    Rejected,
    RejectReason,
    Resolved,
    Settlement,
)
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import ControlResponse
from agentx.messages.permission_wire import (
    PermissionAllow,
    PermissionDeny,
    PermissionResponseSchema,
    can_use_tool_request,
)

WAIT = 10.0


def ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"req_{next(counter)}"


def response(request_id: str, payload: Any = None) -> ControlResponse:
    inner = {"subtype": "success", "request_id": request_id}
    if payload is not None:
        inner["response"] = payload
    return ControlResponse(
        line=1,
        request_id=request_id,
        subtype="success",
        response=None if payload is None else freeze(payload),
        error=None,
        pending_permission_requests=None,
        raw=freeze({"type": "control_response", "response": inner}),
    )


def accept_any(payload: FrozenDict | None) -> object:
    return payload


def permission(tool_use_id: str) -> FrozenDict:
    return can_use_tool_request("Bash", {"command": "ls"}, tool_use_id, "Run ls")


class Sink:
    """The writer's inbox stand-in: records in the order they were handed over."""

    def __init__(self) -> None:
        self.records: list[Mapping[str, Any]] = []

    def __call__(self, records: tuple[Mapping[str, Any], ...]) -> None:
        self.records.extend(records)

    def kinds(self) -> list[tuple[str, str]]:
        return [(r["type"], r["request_id"]) for r in self.records]


class Hostile(Exception):
    """An error whose text cannot be produced: formatting it would raise."""

    def __str__(self) -> str:
        raise RuntimeError("formatted a callback error")

    def __repr__(self) -> str:
        raise RuntimeError("formatted a callback error")


def failure(pending: Any) -> ControlRequestFailed:
    with pytest.raises(ControlRequestFailed) as caught:
        pending.result.get(timeout=WAIT)
    return caught.value


# --- correlation across threads ---------------------------------------------------


def test_asker_on_another_thread_gets_the_validated_value() -> None:
    sink = Sink()
    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    with ThreadPoolExecutor(max_workers=1) as worker:
        asked = worker.submit(
            lambda: broker.ask(
                permission("toolu_1"), PermissionResponseSchema(tool_use_id="toolu_1")
            )
        )
        pending = asked.result(timeout=WAIT)
        waited = worker.submit(pending.result.get, timeout=WAIT)
        assert sink.kinds() == [("control_request", "req_1")]
        assert sink.records[0]["request"] == permission("toolu_1")
        broker.on_response(response("req_1", {"behavior": "deny", "message": "no"}))
        assert waited.result(timeout=WAIT) == PermissionDeny(message="no")
    assert broker.pending_ids() == ()


def test_envelope_is_emitted_in_fifo_order_after_earlier_records() -> None:
    """Scenario 3: a permission request never overtakes what was queued before it."""
    sink = Sink()
    sink(({"type": "assistant", "request_id": "-"},))
    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    broker.ask(permission("toolu_1"), accept_any)
    broker.ask({"subtype": "mcp_status"}, accept_any)
    assert sink.kinds() == [
        ("assistant", "-"),
        ("control_request", "req_1"),
        ("control_request", "req_2"),
    ]


def test_abort_cancels_rejects_and_ignores_the_late_response() -> None:
    """Scenario 4."""
    sink = Sink()
    orphans: list[Any] = []
    broker = ControlBroker.start(emit=sink, new_request_id=ids(), orphan_handler=orphans.append)
    pending = broker.ask({"subtype": "mcp_status"}, accept_any)
    broker.abort(pending.request_id)
    assert failure(pending).reason is RejectReason.ABORTED
    assert sink.kinds() == [("control_request", "req_1"), ("control_cancel_request", "req_1")]
    broker.on_response(response("req_1"))
    broker.abort("req_1")
    assert broker.pending_ids() == ()
    assert orphans == []
    assert len(sink.records) == 2


def test_orphan_goes_to_the_handler_and_defaults_to_a_warning(warnings: list[str]) -> None:
    orphans: list[Any] = []
    seen = threading.Event()

    def handler(resp: Any) -> None:
        orphans.append(resp)
        seen.set()

    broker = ControlBroker.start(emit=Sink(), new_request_id=ids(), orphan_handler=handler)
    stray = response("nobody")
    broker.on_response(stray)
    assert seen.wait(WAIT)
    assert orphans == [stray]

    default = ControlBroker.start(emit=Sink(), new_request_id=ids())
    default.on_response(stray)
    default.pending_ids()
    assert warnings == ["orphan control_response for request_id 'nobody'"]


def test_interrupt_cancels_every_permission_before_the_ack() -> None:
    """Scenario 12 / WIRE-011: both cancels precede the acknowledgement in FIFO order."""
    sink = Sink()
    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    first = broker.ask(permission("toolu_a"), accept_any)
    other = broker.ask({"subtype": "mcp_status"}, accept_any)
    second = broker.ask(permission("toolu_b"), accept_any)
    assert broker.abort_all_permissions() == ("req_1", "req_3")
    sink(({"type": "control_response", "request_id": "interrupt_1"},))
    assert sink.kinds()[3:] == [
        ("control_cancel_request", "req_1"),
        ("control_cancel_request", "req_3"),
        ("control_response", "interrupt_1"),
    ]
    assert failure(first).reason is RejectReason.ABORTED
    assert failure(second).reason is RejectReason.ABORTED
    assert broker.pending_ids() == (other.request_id,)


def test_interrupt_hands_the_cancels_to_the_callers_emit_before_rejecting() -> None:
    """WIRE-011 with the turn output's ordering core: each cancel record goes
    to the emit the interrupt hands over (not to the writer), and only then
    is its waiter rejected."""
    sink = Sink()
    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    first = broker.ask(permission("toolu_a"), accept_any)
    handed: list[tuple[str, bool]] = []

    def settled() -> bool:
        try:
            first.result.get(timeout=0)
        except pykka.Timeout:
            return False
        except ControlRequestFailed:
            return True
        return True

    def emit(records: tuple[Mapping[str, Any], ...]) -> None:
        handed.extend((r["request_id"], settled()) for r in records)

    assert broker.abort_all_permissions(emit) == ("req_1",)
    assert handed == [("req_1", False)]
    assert failure(first).reason is RejectReason.ABORTED
    assert [kind for kind, _ in sink.kinds()] == ["control_request"]


def test_eof_after_tail_rejects_the_rest_and_refuses_new_asks() -> None:
    """Scenarios 5 and 13, DEC-EOF-1."""
    sink = Sink()
    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    tail = broker.ask(permission("toolu_a"), PermissionResponseSchema(tool_use_id="toolu_a"))
    other = broker.ask(permission("toolu_b"), PermissionResponseSchema(tool_use_id="toolu_b"))
    broker.on_response(response(tail.request_id, {"behavior": "allow"}))
    broker.on_eof()
    assert tail.result.get(timeout=WAIT) == PermissionAllow()
    rejected = failure(other)
    assert (rejected.reason, rejected.message) == (
        RejectReason.STREAM_CLOSED,
        STREAM_CLOSED_MESSAGE,
    )
    emitted = len(sink.records)
    late = broker.ask(permission("toolu_c"), accept_any)
    assert failure(late).reason is RejectReason.STREAM_CLOSED
    assert len(sink.records) == emitted
    assert broker.pending_ids() == ()


def test_stop_rejects_pending_waiters() -> None:
    broker = ControlBroker.start(emit=Sink(), new_request_id=ids())
    pending = broker.ask({"subtype": "mcp_status"}, accept_any)
    broker.stop()
    rejected = failure(pending)
    assert (rejected.reason, rejected.message) == (RejectReason.SHUTDOWN, SHUTDOWN_MESSAGE)


# --- scenario 19: failing and re-entrant callbacks (WIRE-015) ------------------------


class FlakyEmitter:
    """Raises ``error`` for the first ``failures`` calls, then records."""

    def __init__(self, error: Exception, failures: int = 1) -> None:
        self.sink = Sink()
        self.error = error
        self.failures = failures

    def __call__(self, records: tuple[Mapping[str, Any], ...]) -> None:
        if self.failures:
            self.failures -= 1
            raise self.error
        self.sink(records)


@pytest.mark.parametrize(
    "error", [RuntimeError("boom"), Hostile()], ids=["plain-error", "unformattable-error"]
)
def test_failed_envelope_emission_rolls_back_and_the_broker_stays_usable(
    error: Exception, warnings: list[str]
) -> None:
    emitter = FlakyEmitter(error)
    broker = ControlBroker.start(emit=emitter, new_request_id=ids())
    pending = broker.ask({"subtype": "mcp_status"}, accept_any)
    rejected = failure(pending)
    assert (rejected.reason, rejected.message) == (RejectReason.ABORTED, EMISSION_FAILED_MESSAGE)
    assert broker.pending_ids() == ()
    assert warnings == [EMISSION_FAILED_MESSAGE]
    again = broker.ask({"subtype": "mcp_status"}, accept_any)
    broker.on_response(response(again.request_id, {"ok": True}))
    assert again.result.get(timeout=WAIT) == FrozenDict(ok=True)
    broker.on_response(response(pending.request_id))
    assert broker.pending_ids() == ()


def test_synchronously_selected_result_survives_a_later_emitter_failure(
    warnings: list[str],
) -> None:
    holder: list[ControlBroker] = []

    def deliver_then_fail(records: tuple[Mapping[str, Any], ...]) -> None:
        holder[0].on_response(response(records[0]["request_id"], {"ok": True}))
        raise Hostile()

    broker = ControlBroker.start(emit=deliver_then_fail, new_request_id=ids())
    holder.append(broker)
    pending = broker.ask({"subtype": "mcp_status"}, accept_any)
    assert pending.result.get(timeout=WAIT) == FrozenDict(ok=True)
    assert broker.pending_ids() == ()
    assert warnings == [EMISSION_FAILED_MESSAGE]


def test_emitter_may_reenter_the_broker_without_deadlock() -> None:
    sink = Sink()
    holder: list[ControlBroker] = []
    nested: list[Any] = []
    reentered = threading.Event()

    def reentrant(records: tuple[Mapping[str, Any], ...]) -> None:
        sink(records)
        if not reentered.is_set():
            reentered.set()
            nested.append(holder[0].ask({"subtype": "mcp_status"}, accept_any))
            nested.append(holder[0].pending_ids())

    broker = ControlBroker.start(emit=reentrant, new_request_id=ids())
    holder.append(broker)
    outer = broker.ask({"subtype": "initialize"}, accept_any)
    assert nested[1] == ("req_1", "req_2")
    assert sink.kinds() == [("control_request", "req_1"), ("control_request", "req_2")]
    broker.on_eof()
    assert failure(outer).reason is RejectReason.STREAM_CLOSED
    assert failure(nested[0]).reason is RejectReason.STREAM_CLOSED


@pytest.mark.parametrize("interrupt", [False, True], ids=["abort", "abort-all-permissions"])
def test_failed_cancel_emission_still_settles_every_detached_waiter(
    interrupt: bool, warnings: list[str]
) -> None:
    sink = Sink()
    fail_next = threading.Event()

    def emitter(records: tuple[Mapping[str, Any], ...]) -> None:
        if fail_next.is_set():
            fail_next.clear()
            raise Hostile()
        sink(records)

    broker = ControlBroker.start(emit=emitter, new_request_id=ids())
    first = broker.ask(permission("toolu_a"), accept_any)
    second = broker.ask(permission("toolu_b"), accept_any)
    fail_next.set()
    if interrupt:
        assert broker.abort_all_permissions() == ("req_1", "req_2")
    else:
        broker.abort(first.request_id)
        broker.abort(second.request_id)
    assert failure(first).reason is RejectReason.ABORTED
    assert failure(second).reason is RejectReason.ABORTED
    assert broker.pending_ids() == ()
    assert warnings == [EMISSION_FAILED_MESSAGE]
    again = broker.ask({"subtype": "mcp_status"}, accept_any)
    broker.on_response(response(again.request_id))
    assert again.result.get(timeout=WAIT) is None


def test_failing_post_cancellation_callbacks_do_not_strand_other_waiters(
    warnings: list[str],
) -> None:
    sink = Sink()
    settled: list[Settlement] = []

    def hostile_callback(settlement: Settlement) -> None:
        settled.append(settlement)
        raise Hostile()

    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    first = broker.ask(permission("toolu_a"), accept_any, on_settle=hostile_callback)
    second = broker.ask(permission("toolu_b"), accept_any, on_settle=hostile_callback)
    assert broker.abort_all_permissions() == ("req_1", "req_2")
    assert [s.request_id for s in settled] == ["req_1", "req_2"]
    assert settled[0] == Rejected(
        request_id="req_1", reason=RejectReason.ABORTED, message=ABORTED_MESSAGE
    )
    assert failure(first).reason is RejectReason.ABORTED
    assert failure(second).reason is RejectReason.ABORTED
    assert warnings == ["control settle callback failed"] * 2
    assert broker.pending_ids() == ()


def test_on_settle_runs_after_the_cancel_record_was_emitted() -> None:
    sink = Sink()
    seen_at_settle: list[int] = []
    broker = ControlBroker.start(emit=sink, new_request_id=ids())
    pending = broker.ask(
        permission("toolu_a"),
        accept_any,
        on_settle=lambda _s: seen_at_settle.append(len(sink.records)),
    )
    broker.abort(pending.request_id)
    assert seen_at_settle == [2]


def test_on_settle_receives_the_resolution() -> None:
    settled: list[Settlement] = []
    done = threading.Event()

    def record(settlement: Settlement) -> None:
        settled.append(settlement)
        done.set()

    broker = ControlBroker.start(emit=Sink(), new_request_id=ids())
    pending = broker.ask({"subtype": "mcp_status"}, accept_any, on_settle=record)
    broker.on_response(response(pending.request_id, {"x": 1}))
    assert done.wait(WAIT)
    assert settled == [Resolved(request_id="req_1", value=FrozenDict(x=1))]


def test_failing_orphan_handler_is_contained(warnings: list[str]) -> None:
    def hostile(_resp: Any) -> None:
        raise Hostile()

    broker = ControlBroker.start(emit=Sink(), new_request_id=ids(), orphan_handler=hostile)
    broker.on_response(response("nobody"))
    assert broker.pending_ids() == ()
    assert warnings == ["control orphan handler failed"]
