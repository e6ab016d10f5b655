"""TurnRunnerActor over real pykka threads, a real TurnEngine and a real
ControlBroker (DEC-TURN-1, DEC-EOF-1, WIRE-010/011, WIRE-020).

A turn that must stay active waits in :class:`GatedProvider` until the test
releases it or the turn is cancelled. Every wait is on an event, a queue or
a future; nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentx.actors.turn_runner import (
    CancelQueued,
    InputClosed,
    Interrupt,
    Submit,
    TurnRunnerActor,
)
from agentx.messages.frozen import FrozenDict
from agentx.messages.permission_wire import PermissionResponseSchema, can_use_tool_request
from agentx.messages.prompt_queue import MAX_QUEUED_RECORDS, Priority
from agentx.turns.cancel import CancelScope
from agentx.turns.results import INTERRUPTED
from tests.actors.helpers import WAIT, GatedProvider, Record, RunnerRig, is_mark, is_result, user


@pytest.fixture
def held() -> Iterator[RunnerRig]:
    """A runner whose first turn, ``active``, is inside its model call."""
    rig = RunnerRig(GatedProvider("active"))
    rig.ref.tell(Submit(user("active", uuid="u-active")))
    assert rig.started() == "active"
    yield rig
    rig.provider.release("active")


def outcome(result: Record) -> tuple[str | None, str]:
    return result.get("prompt_uuid"), result["subtype"]


def test_each_submit_gets_exactly_one_result_in_order() -> None:
    """DEC-TURN-1: one result per admitted prompt; ``later`` keeps arrival order."""
    rig = RunnerRig(GatedProvider())
    for n in range(3):
        rig.ref.tell(Submit(user(f"p{n}", uuid=f"u{n}")))
    rig.ref.tell(InputClosed())
    assert rig.drained.wait(WAIT)
    assert [(r["prompt_uuid"], r["result"]) for r in rig.results()] == [
        ("u0", "answer p0"),
        ("u1", "answer p1"),
        ("u2", "answer p2"),
    ]


@pytest.mark.parametrize(
    ("priorities", "order"),
    [
        (("later", "next"), ["u1", "u0"]),
        (("next", "later"), ["u0", "u1"]),
        (("later", "later"), ["u0", "u1"]),
        ((None, "next"), ["u1", "u0"]),
    ],
    ids=["next-overtakes-later", "next-stays-first", "later-is-fifo", "absent-is-later"],
)
def test_next_runs_before_later(
    held: RunnerRig, priorities: tuple[Priority | None, ...], order: list[str]
) -> None:
    """DEC-TURN-1: queued behind an active turn, ``next`` goes to the front."""
    for n, priority in enumerate(priorities):
        held.ref.tell(Submit(user(f"p{n}", uuid=f"u{n}", priority=priority)))
    held.ref.tell(InputClosed())
    held.provider.release("active")
    assert held.drained.wait(WAIT)
    assert [outcome(r) for r in held.results()] == [
        ("u-active", "success"),
        *((uuid, "success") for uuid in order),
    ]


def test_now_interrupts_the_active_turn_and_runs_first(held: RunnerRig) -> None:
    """DEC-TURN-1: ``now`` cancels the active turn (its one result is
    error_during_execution) and runs before everything queued."""
    held.ref.tell(Submit(user("queued", uuid="u-later")))
    held.ref.tell(Submit(user("urgent", uuid="u-now", priority="now")))
    held.ref.tell(InputClosed())
    assert held.drained.wait(WAIT)
    results = held.results()
    assert [outcome(r) for r in results] == [
        ("u-active", "error_during_execution"),
        ("u-now", "success"),
        ("u-later", "success"),
    ]
    assert results[0]["errors"] == (INTERRUPTED,)
    assert held.provider.seen == ["active", "urgent", "queued"]


class WorkerFirst(TurnRunnerActor):
    """The interleaving a ``now`` prompt on an idle runner can meet: the
    worker wakes, takes the record and starts its turn before the actor
    thread gets to the interrupt that admitting the record implies."""

    #: The provider whose ``started`` queue tells that the turn began.
    provider: GatedProvider

    def _interrupt(self, request_id: str | None, *scopes: Any) -> None:
        if request_id is None:
            assert self.provider.started.get(timeout=WAIT) == "urgent"
        super()._interrupt(request_id, *scopes)


def test_a_now_prompt_on_an_idle_runner_never_cancels_its_own_turn() -> None:
    """DEC-TURN-1: ``now`` interrupts what was active when it was admitted
    (nothing, here), even when its own turn has already begun by the time
    the interrupt is carried out: that turn runs to its success."""
    provider = GatedProvider("urgent")
    WorkerFirst.provider = provider
    rig = RunnerRig(provider, actor=WorkerFirst)
    rig.ref.tell(Submit(user("urgent", uuid="u-now", priority="now")))
    rig.handled()  # the interrupt was carried out after the turn began
    provider.release("urgent")
    rig.ref.tell(InputClosed())
    assert rig.drained.wait(WAIT)
    assert [outcome(r) for r in rig.results()] == [("u-now", "success")]


@pytest.mark.parametrize(
    ("submitted", "refused"),
    [(MAX_QUEUED_RECORDS, 0), (MAX_QUEUED_RECORDS + 1, 1)],
    ids=["at-the-limit", "one-past"],
)
def test_queue_full_refuses_the_record_past_the_limit(
    held: RunnerRig, submitted: int, refused: int
) -> None:
    """WIRE-020: 128 records wait behind the active turn; the 129th gets one
    ``input_error: queue_full`` result at once and nothing queued is lost."""
    for n in range(submitted):
        held.ref.tell(Submit(user(f"q{n}", uuid=f"u{n}")))
    held.handled()
    errors = [r for r in held.results() if r["subtype"] == "error_during_execution"]
    assert [r["errors"] for r in errors] == [("input_error: queue_full",)] * refused
    held.ref.tell(InputClosed())
    held.provider.release("active")
    assert held.drained.wait(WAIT)
    ran = [r["prompt_uuid"] for r in held.results() if r["subtype"] == "success"]
    assert ran == [
        "u-active",
        *(f"u{n}" for n in range(MAX_QUEUED_RECORDS if refused else submitted)),
    ]
    assert len(held.results()) == submitted + 1


def test_a_refused_now_record_does_not_interrupt(held: RunnerRig) -> None:
    """WIRE-020: the queue reservation is validated before ``now`` may
    interrupt: with the queue full, the ``now`` record gets queue_full and
    the active turn runs on to its success."""
    for n in range(MAX_QUEUED_RECORDS):
        held.ref.tell(Submit(user(f"q{n}", uuid=f"u{n}")))
    held.ref.tell(Submit(user("urgent", uuid="u-now", priority="now")))
    held.handled()
    (refused,) = held.results()
    assert refused["errors"] == ("input_error: queue_full",)
    held.ref.tell(InputClosed())
    held.provider.release("active")
    assert held.drained.wait(WAIT)
    assert outcome(held.results()[1]) == ("u-active", "success")
    assert "urgent" not in held.provider.seen


def test_a_refused_reference_check_neither_queues_nor_interrupts() -> None:
    """WIRE-020: every attachment manifest is checked before admission; a
    refusal is one input_error result and a ``now`` record does not interrupt."""
    rig = RunnerRig(
        GatedProvider("active"),
        check_refs=lambda record: "attachment_unavailable" if record.uuid == "u-bad" else None,
    )
    rig.ref.tell(Submit(user("active", uuid="u-active")))
    assert rig.started() == "active"
    rig.ref.tell(Submit(user("bad", uuid="u-bad", priority="now")))
    rig.ref.tell(InputClosed())
    (refused,) = rig.sink.wait_for(is_result)
    assert refused["errors"] == ("input_error: attachment_unavailable",)
    rig.provider.release("active")
    assert rig.drained.wait(WAIT)
    assert [outcome(r) for r in rig.results()[1:]] == [("u-active", "success")]
    assert rig.provider.seen == ["active"]


def test_a_duplicate_uuid_is_not_run_again() -> None:
    """DEC-DEDUP-1: a uuid admitted once in the session is not run again."""
    rig = RunnerRig(GatedProvider())
    for text in ("first", "again", "other"):
        rig.ref.tell(Submit(user(text, uuid="u-same" if text != "other" else "u-other")))
    rig.ref.tell(InputClosed())
    assert rig.drained.wait(WAIT)
    assert [outcome(r) for r in rig.results()] == [("u-same", "success"), ("u-other", "success")]
    assert rig.provider.seen == ["first", "other"]


def test_cancel_async_message_drops_only_a_queued_record(held: RunnerRig) -> None:
    """``cancel_async_message``: true for a queued uuid (it never runs), false
    once started, false for an unknown or already cancelled uuid."""
    held.ref.tell(Submit(user("doomed", uuid="u-doomed")))
    held.ref.tell(Submit(user("kept", uuid="u-kept")))
    assert held.ref.ask(CancelQueued("u-doomed"), timeout=WAIT) is True
    assert held.ref.ask(CancelQueued("u-doomed"), timeout=WAIT) is False
    assert held.ref.ask(CancelQueued("u-active"), timeout=WAIT) is False
    assert held.ref.ask(CancelQueued("u-unknown"), timeout=WAIT) is False
    held.ref.tell(InputClosed())
    held.provider.release("active")
    assert held.drained.wait(WAIT)
    assert [outcome(r) for r in held.results()] == [("u-active", "success"), ("u-kept", "success")]
    assert held.provider.seen == ["active", "kept"]


def test_interrupt_cancels_then_acknowledges_before_the_turns_result(held: RunnerRig) -> None:
    """WIRE-010/011: each pending permission's control_cancel_request, then the
    interrupt's acknowledgement, then the cancelled turn's one result."""
    pending = [
        held.broker.ask(
            can_use_tool_request("Bash", {"command": "ls"}, tool_use_id, "Run ls"),
            PermissionResponseSchema(tool_use_id=tool_use_id),
        )
        for tool_use_id in ("toolu_1", "toolu_2")
    ]
    held.ref.tell(Interrupt("req-int"))
    held.sink.wait_for(is_result)
    kinds = [
        (r["type"], r.get("request_id") or r.get("response", {}).get("request_id"))
        for r in held.sink.snapshot()
        if r["type"] != "system"
    ]
    assert kinds == [
        ("control_request", pending[0].request_id),
        ("control_request", pending[1].request_id),
        ("control_cancel_request", pending[0].request_id),
        ("control_cancel_request", pending[1].request_id),
        ("control_response", "req-int"),
        ("result", None),
    ]
    (result,) = held.results()
    assert outcome(result) == ("u-active", "error_during_execution")


def test_interrupt_while_idle_only_acknowledges() -> None:
    """WIRE-010: with no active turn the interrupt still gets its success."""
    rig = RunnerRig(GatedProvider())
    rig.ref.tell(Interrupt("req-idle"))
    rig.ref.tell(InputClosed())
    assert rig.drained.wait(WAIT)
    assert [r["type"] for r in rig.sink.snapshot()] == ["control_response", "mark"]
    assert rig.sink.records[0]["response"] == {"subtype": "success", "request_id": "req-idle"}


def test_input_closed_drains_the_queue_then_reports_drained(held: RunnerRig) -> None:
    """DEC-EOF-1: after EOF the active and the queued turns finish, each with
    its result, and only then is the runner drained."""
    held.ref.tell(Submit(user("queued", uuid="u-queued")))
    held.ref.ask(InputClosed(), timeout=WAIT)
    assert not held.drained.is_set()  # the active turn is still held
    held.provider.release("active")
    assert held.drained.wait(WAIT)
    tail = [r for r in held.sink.snapshot() if is_result(r) or is_mark("drained")(r)]
    assert [r.get("prompt_uuid", r["type"]) for r in tail] == ["u-active", "u-queued", "mark"]


def _worker_of(start: Callable[[], RunnerRig]) -> tuple[RunnerRig, threading.Thread]:
    """Start a rig and return it with its turn worker thread."""
    before = set(threading.enumerate())
    rig = start()
    (worker,) = [t for t in threading.enumerate() if t not in before and t.name == "agentx-turns"]
    return rig, worker


def test_the_interrupt_hold_ends_when_the_cancels_are_written_not_on_a_timer() -> None:
    """WIRE-011, DEC-EOF-1: while the permission cancels are still being
    handed over, the cancelled turn runs to its end without waiting (its
    worker thread finishes), yet its result, its idle and the drained report
    stay behind the cancels and the acknowledgement until the cancels are
    done, however long that takes."""
    cancelling = threading.Event()
    cancels_written = threading.Event()

    def abort_permissions(write_cancels: Callable[[tuple[Record, ...]], None]) -> None:
        cancelling.set()
        assert cancels_written.wait(WAIT)
        write_cancels((FrozenDict(type="control_cancel_request", request_id="perm-1"),))

    rig, worker = _worker_of(
        lambda: RunnerRig(GatedProvider("active"), abort_permissions=abort_permissions)
    )
    rig.ref.tell(Submit(user("active", uuid="u-active")))
    assert rig.started() == "active"
    rig.ref.ask(InputClosed(), timeout=WAIT)
    rig.ref.tell(Interrupt("req-int"))
    assert cancelling.wait(WAIT)
    worker.join(WAIT)
    assert not worker.is_alive()  # the turn ended; nothing of it has left yet
    assert [_kind(r) for r in rig.sink.snapshot()] == ["running"]
    assert not rig.drained.is_set()
    cancels_written.set()
    assert rig.drained.wait(WAIT)
    assert [_kind(r) for r in rig.sink.snapshot()] == [
        "running",
        "control_cancel_request",
        "control_response",
        "result",
        "idle",
        "mark:drained",
    ]
    (result,) = rig.results()
    assert outcome(result) == ("u-active", "error_during_execution")


def test_an_interrupt_during_the_suggestion_aborts_it_and_idle_follows_the_ack() -> None:
    """WIRE-010 and the hard-interrupt order: the interrupt aborts the
    prompt-suggestion work; no suggestion is written, and ``idle`` follows
    the acknowledgement."""
    suggesting = threading.Event()

    def suggest(scope: CancelScope) -> str | None:
        suggesting.set()
        assert scope.wait(WAIT)
        return "never written"

    rig = RunnerRig(GatedProvider(), suggest=suggest)
    rig.ref.tell(Submit(user("p", uuid="u-p")))
    assert suggesting.wait(WAIT)
    rig.ref.tell(Interrupt("req-int"))
    rig.ref.tell(InputClosed())
    assert rig.drained.wait(WAIT)
    assert [_kind(r) for r in rig.sink.snapshot()] == [
        "running",
        "assistant",
        "result",
        "control_response",
        "idle",
        "mark:drained",
    ]


def test_a_successful_turn_writes_its_suggestion_between_result_and_idle() -> None:
    """The after-result order through the actor: result, suggestion, idle."""
    rig = RunnerRig(GatedProvider(), suggest=lambda scope: "and then?")
    rig.ref.tell(Submit(user("p", uuid="u-p")))
    rig.ref.tell(InputClosed())
    assert rig.drained.wait(WAIT)
    kinds = [_kind(r) for r in rig.sink.snapshot()]
    assert kinds[-4:] == ["result", "prompt_suggestion", "idle", "mark:drained"]


def _kind(record: Record) -> str:
    if record["type"] == "mark":
        return f"mark:{record['name']}"
    if record.get("subtype") == "session_state_changed":
        return str(record["state"])
    return str(record["type"])
