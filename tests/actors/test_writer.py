"""WriterActor over a real pykka thread (WIRE-003, WIRE-013, WIRE-015, DEC-AUTH-6, scenario 15).

Every wait is on a future or an event; nothing sleeps.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator

import pykka
import pytest

from agentx.actors.writer import FLUSH_BYTES, Drain, FrameBuffer, WriterActor
from agentx.messages.encode import encode_record
from agentx.messages.frozen import FrozenDict
from agentx.messages.guard import CredentialValidator, FailureKind, OutputGuard
from agentx.messages.records import Emit
from agentx.messages.stream_guard import StreamGuard, stream_guard

WAIT = 10.0
SECRET = "sk-writer-test-secret-0123456789"


class Sink:
    """The byte sink behind the writer: records every write call; can hold
    the first call until the test releases it, or fail on demand."""

    def __init__(self, *, hold_first: bool = False, fail_with: BaseException | None = None) -> None:
        self.writes: list[bytes] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        if not hold_first:
            self.release.set()
        self.fail_with = fail_with

    def __call__(self, data: bytes) -> int:
        self.entered.set()
        assert self.release.wait(WAIT)
        if self.fail_with is not None:
            raise self.fail_with
        self.writes.append(data)
        return len(data)


class Writer:
    def __init__(self, sink: Sink, *, stream: StreamGuard | None = None) -> None:
        self.failures: queue.SimpleQueue[str] = queue.SimpleQueue()
        frames = FrameBuffer(sink)
        self.guard = OutputGuard(frames, state_lock=threading.Lock(), write_lock=threading.RLock())
        self.guard.install_validator(CredentialValidator([SECRET]))
        self.ref = WriterActor.start(
            guard=self.guard, frames=frames, on_failure=self.failures.put, stream=stream
        )

    def emit(self, *records: FrozenDict) -> None:
        self.ref.tell(Emit(records=records))

    def drain(self) -> bool:
        return bool(self.ref.ask(Drain(), timeout=WAIT))


def record(n: int, text: str = "x") -> FrozenDict:
    return FrozenDict(type="n", n=n, text=text)


def line(n: int, text: str = "x") -> bytes:
    return b'{"type":"n","n":%d,"text":"%s"}\n' % (n, text.encode())


@pytest.fixture
def held() -> Iterator[tuple[Sink, Writer]]:
    """A writer blocked inside its first write, so the test can queue more."""
    sink = Sink(hold_first=True)
    writer = Writer(sink)
    writer.emit(record(0))
    assert sink.entered.wait(WAIT)
    yield sink, writer
    sink.release.set()


def test_an_idle_writer_writes_each_emit_at_once() -> None:
    sink = Sink()
    writer = Writer(sink)
    writer.emit(record(1))
    assert writer.drain()
    writer.emit(record(2), record(3))
    assert writer.drain()
    assert sink.writes == [line(1), line(2) + line(3)]


def test_queued_emits_leave_in_one_write_in_order(held: tuple[Sink, Writer]) -> None:
    sink, writer = held
    for n in (1, 2, 3):
        writer.emit(record(n))
    sink.release.set()
    assert writer.drain()
    assert sink.writes == [line(0), line(1) + line(2) + line(3)]


@pytest.mark.parametrize(
    ("pair_bytes", "flushed_with_third"),
    [(FLUSH_BYTES, False), (FLUSH_BYTES - 1, True)],
    ids=["at-the-flush-size", "one-byte-under"],
)
def test_a_full_buffer_is_written_while_more_messages_wait(
    held: tuple[Sink, Writer], pair_bytes: int, flushed_with_third: bool
) -> None:
    sink, writer = held
    fixed = len(line(1, ""))
    first, second = "y" * (pair_bytes // 2 - fixed), "y" * (pair_bytes - pair_bytes // 2 - fixed)
    assert len(line(1, first)) + len(line(2, second)) == pair_bytes
    writer.emit(record(1, first))
    writer.emit(record(2, second))
    writer.emit(record(3))
    sink.release.set()
    assert writer.drain()
    pair = line(1, first) + line(2, second)
    expected = [pair + line(3)] if flushed_with_third else [pair, line(3)]
    assert sink.writes == [line(0), *expected]


@pytest.mark.parametrize(
    ("pair_bytes", "split"),
    [(FLUSH_BYTES, True), (FLUSH_BYTES - 1, False)],
    ids=["at-the-flush-size", "one-byte-under"],
)
def test_a_full_buffer_is_written_between_the_records_of_one_message(
    pair_bytes: int, split: bool
) -> None:
    """A long message split into many records (DEC-COMPAT-3) is not held
    whole: the buffer is written as soon as it holds FLUSH_BYTES."""
    sink = Sink()
    writer = Writer(sink)
    fixed = len(line(1, ""))
    first, second = "y" * (pair_bytes // 2 - fixed), "y" * (pair_bytes - pair_bytes // 2 - fixed)
    writer.emit(record(1, first), record(2, second), record(3))
    assert writer.drain()
    pair = line(1, first) + line(2, second)
    assert sink.writes == ([pair, line(3)] if split else [pair + line(3)])


def test_stop_writes_what_is_held(held: tuple[Sink, Writer]) -> None:
    sink, writer = held
    writer.emit(record(1))
    writer.emit(record(2))
    stopped = writer.ref.stop(block=False)
    sink.release.set()
    stopped.get(timeout=WAIT)
    assert sink.writes == [line(0), line(1) + line(2)]


def test_a_credential_record_writes_the_validated_prefix_and_latches(
    held: tuple[Sink, Writer],
) -> None:
    sink, writer = held
    writer.emit(record(1), record(2, SECRET), record(3))
    writer.emit(record(4))
    sink.release.set()
    assert writer.failures.get(timeout=WAIT) == FailureKind.CREDENTIAL
    assert not writer.drain()
    assert sink.writes == [line(0), line(1)]
    assert writer.failures.empty()


@pytest.mark.parametrize(
    ("error", "kind"),
    [(BrokenPipeError(), FailureKind.BROKEN_PIPE), (OSError(5, "EIO"), FailureKind.WRITER)],
    ids=["broken-pipe", "other-writer-error"],
)
def test_a_failed_flush_latches_the_guard_once(error: BaseException, kind: FailureKind) -> None:
    sink = Sink(fail_with=error)
    writer = Writer(sink)
    writer.emit(record(1))
    assert writer.failures.get(timeout=WAIT) == kind
    assert writer.guard.failure == kind
    sink.entered.clear()
    writer.emit(record(2))
    assert not writer.drain()
    assert not sink.entered.is_set()  # WIRE-015: no callback after the latch
    assert writer.failures.empty()


def test_a_short_write_latches() -> None:
    writes: list[bytes] = []

    def short(data: bytes) -> int:
        writes.append(data)
        return len(data) - 1

    failures: queue.SimpleQueue[str] = queue.SimpleQueue()
    frames = FrameBuffer(short)
    guard = OutputGuard(frames, state_lock=threading.Lock(), write_lock=threading.RLock())
    guard.install_validator(None)
    ref: pykka.ActorRef[WriterActor] = WriterActor.start(
        guard=guard, frames=frames, on_failure=failures.put
    )
    ref.tell(Emit(records=(record(1),)))
    assert failures.get(timeout=WAIT) == FailureKind.SHORT_WRITE
    assert writes == [line(1)]


NEWLINE = b"\n"


def test_the_barrier_runs_before_each_write_and_never_for_nothing() -> None:
    """DEC-STORE-1 group commit: the transcript sync (the barrier) precedes the
    bytes it guards, once per coalesced write; an empty flush runs neither."""
    log: list[str] = []

    def write(data: bytes) -> int:
        log.append(f"write {data.count(NEWLINE)}")
        return len(data)

    def barrier() -> bool:
        log.append("barrier")
        return True

    frames = FrameBuffer(write, barrier=barrier)
    assert frames.flush() is None
    assert log == []
    frames(line(1))
    frames(line(2))
    assert frames.flush() is None
    frames(line(3))
    assert frames.flush() is None
    assert log == ["barrier", "write 2", "barrier", "write 1"]


def test_a_writer_with_a_barrier_syncs_before_the_held_records_leave() -> None:
    """Records queued behind a held write leave in one write after one barrier."""
    sink = Sink(hold_first=True)
    barriers: list[int] = []

    def barrier() -> bool:
        barriers.append(len(sink.writes))
        return True

    frames = FrameBuffer(sink, barrier=barrier)
    guard = OutputGuard(frames, state_lock=threading.Lock(), write_lock=threading.RLock())
    guard.install_validator(None)
    failures: queue.SimpleQueue[str] = queue.SimpleQueue()
    ref: pykka.ActorRef[WriterActor] = WriterActor.start(
        guard=guard, frames=frames, on_failure=failures.put
    )
    try:
        ref.tell(Emit(records=(record(1),)))
        assert sink.entered.wait(WAIT)
        for n in (2, 3, 4):
            ref.tell(Emit(records=(record(n),)))
        sink.release.set()
        assert ref.ask(Drain(), timeout=WAIT)
    finally:
        ref.stop()
    assert sink.writes == [line(1), line(2) + line(3) + line(4)]
    assert barriers == [0, 1]  # each barrier ran before its write


def test_a_failed_barrier_drops_what_it_held_and_drain_says_so() -> None:
    """DEC-STORE-6: frames waiting for a barrier that failed are never
    written (what they acknowledge is not stored), nor are later ones while
    the barrier keeps failing; a drain then reports the output unhealthy."""
    sink = Sink()
    answers = [True, False, False]
    frames = FrameBuffer(sink, barrier=lambda: answers.pop(0))
    guard = OutputGuard(frames, state_lock=threading.Lock(), write_lock=threading.RLock())
    guard.install_validator(None)
    failures: queue.SimpleQueue[str] = queue.SimpleQueue()
    ref: pykka.ActorRef[WriterActor] = WriterActor.start(
        guard=guard, frames=frames, on_failure=failures.put
    )
    try:
        ref.tell(Emit(records=(record(1),)))
        assert ref.ask(Drain(), timeout=WAIT)
        ref.tell(Emit(records=(record(2),)))
        assert not ref.ask(Drain(), timeout=WAIT)
        ref.tell(Emit(records=(record(3),)))
        assert not ref.ask(Drain(), timeout=WAIT)
    finally:
        ref.stop()
    assert sink.writes == [line(1)]
    assert answers == []
    assert failures.empty(), "a store failure is not an output failure (exit 4, not 3)"


def text_delta(text: str) -> FrozenDict:
    delta = FrozenDict(type="text_delta", text=text)
    event = FrozenDict(type="content_block_delta", index=0, delta=delta)
    return FrozenDict(type="stream_event", event=event, parent_tool_use_id=None)


def test_a_credential_split_across_stream_events_latches_before_its_second_half() -> None:
    """DEC-AUTH-6: each half passes WIRE-013 alone; the joining delta is refused
    with the same latch, and nothing after it is written."""
    sink = Sink()
    writer = Writer(sink, stream=stream_guard([SECRET]))
    head, tail = text_delta(SECRET[:9]), text_delta(SECRET[9:])
    writer.emit(record(1), head)
    writer.emit(tail, record(2))
    writer.emit(record(3))
    assert writer.failures.get(timeout=WAIT) == FailureKind.CREDENTIAL
    assert writer.guard.failure == FailureKind.CREDENTIAL
    assert not writer.drain()
    assert b"".join(sink.writes) == line(1) + encode_record(head)
    assert writer.failures.empty()


def test_without_the_stream_guard_both_halves_are_written() -> None:
    """What the stream guard closes: the per-record check alone lets the
    joined deltas spell the credential."""
    sink = Sink()
    writer = Writer(sink)
    writer.emit(text_delta(SECRET[:9]), text_delta(SECRET[9:]))
    assert writer.drain()
    written = [json.loads(frame) for frame in b"".join(sink.writes).splitlines()]
    assert "".join(r["event"]["delta"]["text"] for r in written) == SECRET


def test_credential_free_deltas_are_byte_identical_with_the_stream_guard() -> None:
    records = [text_delta(piece) for piece in ("sk-writer", "-test-", "secret", "-01234", "\\u")]
    outputs = []
    for stream in (None, stream_guard([SECRET])):
        sink = Sink()
        writer = Writer(sink, stream=stream)
        writer.emit(*records, record(1))
        assert writer.drain()
        outputs.append(b"".join(sink.writes))
    assert outputs[0] == outputs[1] == b"".join(map(encode_record, records)) + line(1)


def test_a_stream_the_guard_cannot_follow_latches_stream_limit() -> None:
    sink = Sink()
    writer = Writer(sink, stream=StreamGuard([SECRET], max_streams=2))
    first = text_delta("a")
    other = FrozenDict(
        type="stream_event",
        event=FrozenDict(type="content_block_delta", index=1, delta=FrozenDict(text="b")),
        parent_tool_use_id=None,
    )
    writer.emit(first, other, record(1))
    assert writer.failures.get(timeout=WAIT) == FailureKind.STREAM_LIMIT
    assert not writer.drain()
    assert b"".join(sink.writes) == encode_record(first)
