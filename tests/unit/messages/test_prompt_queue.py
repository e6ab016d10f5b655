"""The prompt admission queue (DEC-TURN-1 priorities, WIRE-020 capacity, DEC-DEDUP-1)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.prompt_queue import (
    MAX_QUEUED_BYTES,
    MAX_QUEUED_RECORDS,
    Admitted,
    Duplicate,
    Priority,
    PromptQueue,
    QueuedPrompt,
    Refused,
)

MIB = 1024 * 1024


def prompt(
    uuid: str | None, priority: Priority = "later", size: int = 10
) -> QueuedPrompt[str | None]:
    return QueuedPrompt(uuid=uuid, priority=priority, size=size, payload=uuid)


def drain(queue: PromptQueue[str | None]) -> list[str | None]:
    out: list[str | None] = []
    while (item := queue.pop()) is not None:
        out.append(item.payload)
    return out


def test_capacity_constants_are_wire_020() -> None:
    assert (MAX_QUEUED_RECORDS, MAX_QUEUED_BYTES) == (128, 16 * MIB)


@pytest.mark.parametrize(
    ("admissions", "order"),
    [
        pytest.param([("a", "later"), ("b", "later"), ("c", "later")], ["a", "b", "c"], id="fifo"),
        pytest.param([("a", "later"), ("b", "next")], ["b", "a"], id="next-goes-first"),
        pytest.param([("a", "later"), ("b", "now")], ["b", "a"], id="now-goes-first"),
        pytest.param(
            [("a", "next"), ("b", "next")], ["b", "a"], id="latest-next-ahead-of-earlier-next"
        ),
        pytest.param(
            [("a", "later"), ("b", "next"), ("c", "now"), ("d", "later")],
            ["c", "b", "a", "d"],
            id="mixed",
        ),
    ],
)
def test_priority_order(admissions: list[tuple[str, Priority]], order: list[str]) -> None:
    """DEC-TURN-1: ``later`` at the back, ``next`` and ``now`` at the front."""
    queue: PromptQueue[str | None] = PromptQueue()
    for uuid, priority in admissions:
        assert isinstance(queue.admit(prompt(uuid, priority)), Admitted)
    assert drain(queue) == order


@pytest.mark.parametrize(
    ("priority", "interrupt"),
    [
        pytest.param("now", True, id="now-interrupts"),
        pytest.param("next", False, id="next-waits"),
        pytest.param("later", False, id="later-waits"),
    ],
)
def test_only_now_interrupts(priority: Priority, interrupt: bool) -> None:
    queue: PromptQueue[str | None] = PromptQueue()
    assert queue.admit(prompt("u", priority)) == Admitted(interrupt=interrupt)


@pytest.mark.parametrize(
    ("count", "admitted"),
    [
        pytest.param(MAX_QUEUED_RECORDS, True, id="at-128"),
        pytest.param(MAX_QUEUED_RECORDS + 1, False, id="past-128"),
    ],
)
def test_record_bound(count: int, admitted: bool) -> None:
    """WIRE-020: 128 records fit; the 129th is ``queue_full`` and nothing queued is lost."""
    queue: PromptQueue[str | None] = PromptQueue()
    for i in range(count - 1):
        assert queue.admit(prompt(f"u{i}", size=1)) == Admitted(interrupt=False)
    last = queue.admit(prompt("last", "now", size=1))
    if admitted:
        assert last == Admitted(interrupt=True)
        assert len(queue) == MAX_QUEUED_RECORDS
        assert drain(queue) == ["last", *(f"u{i}" for i in range(count - 1))]
    else:
        assert last == Refused(reason="queue_full")
        assert len(queue) == MAX_QUEUED_RECORDS
        assert queue.queued_bytes == MAX_QUEUED_RECORDS
        assert drain(queue) == [f"u{i}" for i in range(MAX_QUEUED_RECORDS)]


@pytest.mark.parametrize(
    ("sizes", "outcomes"),
    [
        pytest.param([16 * MIB], [True], id="one-record-at-16MiB"),
        pytest.param([16 * MIB + 1], [False], id="one-record-past-16MiB"),
        pytest.param([8 * MIB, 8 * MIB], [True, True], id="aggregate-at-16MiB"),
        pytest.param([8 * MIB, 8 * MIB + 1], [True, False], id="aggregate-past-16MiB"),
        pytest.param([16 * MIB, 0], [True, True], id="empty-record-fits-a-full-byte-budget"),
        pytest.param([16 * MIB, 1], [True, False], id="one-byte-past-a-full-budget"),
    ],
)
def test_byte_bound(sizes: list[int], outcomes: list[bool]) -> None:
    """WIRE-020: 16 MiB of aggregate admitted bytes; a refusal changes nothing."""
    queue: PromptQueue[str | None] = PromptQueue()
    accepted = 0
    for i, (size, ok) in enumerate(zip(sizes, outcomes, strict=True)):
        got = queue.admit(prompt(f"u{i}", size=size))
        if ok:
            assert got == Admitted(interrupt=False)
            accepted += size
        else:
            assert got == Refused(reason="queue_full")
        assert queue.queued_bytes == accepted


def test_popping_frees_capacity() -> None:
    queue: PromptQueue[str | None] = PromptQueue()
    assert isinstance(queue.admit(prompt("a", size=16 * MIB)), Admitted)
    assert queue.admit(prompt("b", size=1)) == Refused(reason="queue_full")
    assert drain(queue) == ["a"]
    assert queue.queued_bytes == 0
    assert queue.admit(prompt("b", size=16 * MIB)) == Admitted(interrupt=False)


def test_check_reports_without_changing_anything() -> None:
    """WIRE-020: the reservation is validated before a ``now`` record interrupts."""
    queue: PromptQueue[str | None] = PromptQueue(max_records=1)
    assert queue.check(uuid="a", size=5) is None
    assert len(queue) == 0
    assert not queue.seen("a")
    assert isinstance(queue.admit(prompt("a", size=5)), Admitted)
    assert queue.check(uuid="a", size=0) == Duplicate()
    assert queue.check(uuid="b", size=0) == Refused(reason="queue_full")
    assert queue.check(uuid=None, size=0) == Refused(reason="queue_full")
    assert (len(queue), queue.queued_bytes) == (1, 5)


@pytest.mark.parametrize(
    "between",
    [
        pytest.param("nothing", id="while-queued"),
        pytest.param("pop", id="after-it-ran"),
        pytest.param("cancel", id="after-it-was-cancelled"),
    ],
)
def test_duplicate_uuid_is_not_run_again(between: str) -> None:
    """DEC-DEDUP-1: an admitted uuid stays admitted for the session."""
    queue: PromptQueue[str | None] = PromptQueue()
    assert isinstance(queue.admit(prompt("a")), Admitted)
    if between == "pop":
        assert queue.pop() is not None
    elif between == "cancel":
        assert queue.cancel("a")
    assert queue.seen("a")
    before = (len(queue), queue.queued_bytes)
    assert queue.admit(prompt("a", "now")) == Duplicate()
    assert (len(queue), queue.queued_bytes) == before


def test_duplicate_wins_over_queue_full() -> None:
    queue: PromptQueue[str | None] = PromptQueue(max_records=1)
    assert isinstance(queue.admit(prompt("a")), Admitted)
    assert queue.admit(prompt("a")) == Duplicate()


def test_refused_uuid_is_not_remembered() -> None:
    """A ``queue_full`` record was never admitted, so re-sending it later runs it."""
    queue: PromptQueue[str | None] = PromptQueue(max_records=1)
    assert isinstance(queue.admit(prompt("a")), Admitted)
    assert queue.admit(prompt("b")) == Refused(reason="queue_full")
    assert not queue.seen("b")
    assert drain(queue) == ["a"]
    assert queue.admit(prompt("b")) == Admitted(interrupt=False)


def test_records_without_uuid_are_never_duplicates() -> None:
    queue: PromptQueue[str | None] = PromptQueue()
    assert queue.admit(prompt(None)) == Admitted(interrupt=False)
    assert queue.admit(prompt(None)) == Admitted(interrupt=False)
    assert len(queue) == 2


@pytest.mark.parametrize(
    ("limit", "forgotten", "remembered"),
    [
        pytest.param(3, (), ("a", "b", "c"), id="at-the-memory-bound"),
        pytest.param(2, ("a",), ("b", "c"), id="past-the-memory-bound-forgets-oldest"),
    ],
)
def test_uuid_memory_is_bounded(
    limit: int, forgotten: tuple[str, ...], remembered: tuple[str, ...]
) -> None:
    queue: PromptQueue[str | None] = PromptQueue(max_remembered_uuids=limit)
    for uuid in ("a", "b", "c"):
        assert isinstance(queue.admit(prompt(uuid)), Admitted)
    assert [u for u in ("a", "b", "c") if not queue.seen(u)] == list(forgotten)
    assert [u for u in ("a", "b", "c") if queue.seen(u)] == list(remembered)


@pytest.mark.parametrize(
    ("target", "cancelled", "left", "left_bytes"),
    [
        pytest.param("b", True, ["a", "c"], 4, id="queued-record"),
        pytest.param("x", False, ["a", "b", "c"], 7, id="unknown-uuid"),
    ],
)
def test_cancel_by_uuid(target: str, cancelled: bool, left: list[str], left_bytes: int) -> None:
    """DEC-PROFILE-1 ``cancel_async_message``: drop a queued, not yet started record."""
    queue: PromptQueue[str | None] = PromptQueue()
    for uuid, size in (("a", 1), ("b", 3), ("c", 3)):
        queue.admit(prompt(uuid, size=size))
    assert queue.cancel(target) is cancelled
    assert queue.queued_bytes == left_bytes
    assert drain(queue) == left


def test_cancel_after_start_is_false() -> None:
    queue: PromptQueue[str | None] = PromptQueue()
    queue.admit(prompt("a"))
    assert queue.pop() is not None
    assert queue.cancel("a") is False


def test_pop_on_empty_is_none() -> None:
    assert PromptQueue[str]().pop() is None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Op:
    kind: str
    uuid: str
    priority: Priority
    size: int


_ops = st.lists(
    st.builds(
        _Op,
        kind=st.sampled_from(("admit", "admit", "admit", "pop", "cancel")),
        uuid=st.sampled_from([f"u{i}" for i in range(12)]),
        priority=st.sampled_from(("now", "next", "later")),
        size=st.integers(min_value=0, max_value=8),
    ),
    max_size=60,
)


@given(_ops)
def test_accounting_matches_contents(ops: list[_Op]) -> None:
    """Whatever happens, the byte count is the sum of what is queued, within bounds,
    and every admitted uuid is popped or cancelled exactly once."""
    queue: PromptQueue[str | None] = PromptQueue(max_records=5, max_bytes=20)
    model: dict[str, int] = {}
    admitted: list[str] = []
    out: list[str] = []
    for op in ops:
        if op.kind == "admit":
            got = queue.admit(prompt(op.uuid, op.priority, op.size))
            if isinstance(got, Admitted):
                model[op.uuid] = op.size
                admitted.append(op.uuid)
        elif op.kind == "pop":
            item = queue.pop()
            if item is not None:
                assert item.uuid is not None
                del model[item.uuid]
                out.append(item.uuid)
        elif queue.cancel(op.uuid):
            del model[op.uuid]
            out.append(op.uuid)
        assert len(queue) == len(model) <= 5
        assert queue.queued_bytes == sum(model.values()) <= 20
    assert len(set(admitted)) == len(admitted)
    assert sorted(out + list(model)) == sorted(admitted)
