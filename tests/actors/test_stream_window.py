"""StreamWindow between a producer and a real WriterActor (DECISIONS section 8,
WIRE-003): a producer of ``stream_event`` records waits at the window's limit
while the writer's sink is held, resumes when it drains, and an interrupt
(its cancel scope) or the writer's stop unblocks it; every record is written
once, in order.

Every wait is on an event, a future or a thread join with a deadline; nothing
sleeps to synchronise.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pykka
import pytest

from agentx.actors.stream_window import StreamWindow, stream_events
from agentx.actors.writer import Drain, FrameBuffer, WriterActor, WriterSink
from agentx.messages.frozen import FrozenDict
from agentx.messages.guard import CredentialValidator, OutputGuard
from agentx.turns.cancel import CancelScope

WAIT = 10.0
LIMIT = 4


class GatedSink:
    """The writer's byte sink: every write waits for ``open`` (set by the test)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.entered = threading.Event()
        self.open = threading.Event()

    def __call__(self, data: bytes) -> int:
        self.entered.set()
        assert self.open.wait(WAIT)
        self.data += data
        return len(data)

    def records(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in bytes(self.data).splitlines()]


def start_writer(sink: GatedSink, window: StreamWindow) -> pykka.ActorRef[WriterActor]:
    frames = FrameBuffer(sink)
    guard = OutputGuard(frames, state_lock=threading.Lock(), write_lock=threading.RLock())
    guard.install_validator(CredentialValidator([]))
    return WriterActor.start(
        guard=guard, frames=frames, on_failure=lambda kind: None, window=window
    )


def event(n: int) -> FrozenDict:
    return FrozenDict(type="stream_event", event=FrozenDict(n=n), session_id="s", uuid=f"u{n}")


class Producer(threading.Thread):
    """The model call's side: asks for room, then emits one stream_event, ``total`` times.

    ``asking[i]`` is set just before record i asks for room, ``sent[i]`` once
    it was handed to the writer.
    """

    def __init__(self, window: StreamWindow, sink: WriterSink, scope: CancelScope, total: int):
        super().__init__(daemon=True)
        self.window, self.sink, self.scope, self.total = window, sink, scope, total
        self.asking = [threading.Event() for _ in range(total)]
        self.sent = [threading.Event() for _ in range(total)]
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            for n in range(self.total):
                self.asking[n].set()
                self.window.room(self.scope)
                self.sink.emit((event(n),))
                self.sent[n].set()
        except BaseException as exc:  # the test reads it
            self.failure = exc


@pytest.fixture
def gated() -> Iterator[tuple[GatedSink, StreamWindow, WriterSink]]:
    """A writer whose sink holds its first write (of a ``system`` record)."""
    sink = GatedSink()
    window = StreamWindow(limit=LIMIT)
    ref = start_writer(sink, window)
    writer = WriterSink(ref, window)
    writer.emit((FrozenDict(type="system", subtype="first"),))
    assert sink.entered.wait(WAIT)
    yield sink, window, writer
    sink.open.set()
    if ref.is_alive():
        ref.stop(timeout=WAIT)


def test_producer_waits_at_the_limit_and_resumes_in_order(
    gated: tuple[GatedSink, StreamWindow, WriterSink],
) -> None:
    sink, window, writer = gated
    producer = Producer(window, writer, CancelScope(), total=3 * LIMIT)
    producer.start()
    # LIMIT records pass the window; the one past the limit waits for the sink.
    assert producer.asking[LIMIT].wait(WAIT)
    assert all(producer.sent[n].is_set() for n in range(LIMIT))
    assert window.in_flight == LIMIT
    assert not producer.sent[LIMIT].is_set()
    # A record the spec orders never waits and is not counted.
    writer.emit((FrozenDict(type="result", subtype="success"),))
    assert window.in_flight == LIMIT
    sink.open.set()
    producer.join(WAIT)
    assert not producer.is_alive()
    assert producer.failure is None
    assert writer.drain(timeout=WAIT)
    assert window.in_flight == 0
    kinds = [(r["type"], r.get("uuid")) for r in sink.records()]
    # The result was queued after the first LIMIT events: FIFO order holds.
    expected = (
        [("system", None)]
        + [("stream_event", f"u{n}") for n in range(LIMIT)]
        + [("result", None)]
        + [("stream_event", f"u{n}") for n in range(LIMIT, 3 * LIMIT)]
    )
    assert kinds == expected


def test_an_interrupt_unblocks_a_waiting_producer(
    gated: tuple[GatedSink, StreamWindow, WriterSink],
) -> None:
    sink, window, writer = gated
    scope = CancelScope()
    producer = Producer(window, writer, scope, total=LIMIT + 2)
    producer.start()
    assert producer.asking[LIMIT].wait(WAIT)
    assert not producer.sent[LIMIT].is_set()
    scope.cancel()
    # The sink is still held: only the cancel lets the producer on.
    producer.join(WAIT)
    assert not producer.is_alive()
    assert producer.failure is None
    assert window.in_flight == LIMIT + 2
    sink.open.set()
    assert writer.drain(timeout=WAIT)
    assert window.in_flight == 0
    uuids = [r.get("uuid") for r in sink.records() if r["type"] == "stream_event"]
    assert uuids == [f"u{n}" for n in range(LIMIT + 2)]


def test_the_writer_stopping_unblocks_a_waiting_producer() -> None:
    sink = GatedSink()
    window = StreamWindow(limit=1)
    ref = start_writer(sink, window)
    writer = WriterSink(ref, window)
    writer.emit((FrozenDict(type="system", subtype="first"),))
    assert sink.entered.wait(WAIT)
    producer = Producer(window, writer, CancelScope(), total=2)
    producer.start()
    assert producer.asking[1].wait(WAIT)
    assert not producer.sent[1].is_set()
    stopped = ref.stop(block=False)
    sink.open.set()
    stopped.get(timeout=WAIT)
    producer.join(WAIT)
    assert not producer.is_alive()
    # The window let it on; the dead writer refuses the record loudly.
    assert isinstance(producer.failure, pykka.ActorDeadError)


def test_a_stalled_sink_lets_one_record_on_per_deadline(
    gated: tuple[GatedSink, StreamWindow, WriterSink],
) -> None:
    """DECISIONS section 8: the wait has a deadline; past it, the record goes on."""
    sink, _, writer = gated
    window = StreamWindow(limit=1, deadline=0.05)
    window.sent(1)
    window.room(CancelScope())  # returns by the deadline though nothing was written
    assert window.in_flight == 1
    sink.open.set()
    assert writer.drain(timeout=WAIT)


def test_a_record_never_queued_is_not_counted() -> None:
    """A tell to a stopped writer fails: its records are not left in flight."""
    sink = GatedSink()
    sink.open.set()
    window = StreamWindow(limit=1)
    ref = start_writer(sink, window)
    ref.stop(timeout=WAIT)
    writer = WriterSink(ref, window)
    with pytest.raises(pykka.ActorDeadError):
        writer.emit((event(0),))
    assert window.in_flight == 0


def test_the_window_counts_only_stream_events() -> None:
    records = (event(0), FrozenDict(type="assistant"), event(1), FrozenDict(type="result"))
    assert stream_events(records) == 2
    with pytest.raises(ValueError, match="at least one"):
        StreamWindow(limit=0)


def test_drain_is_unaffected(gated: tuple[GatedSink, StreamWindow, WriterSink]) -> None:
    sink, window, writer = gated
    writer.emit((event(0),))
    future = writer._ref.ask(Drain(), block=False)
    sink.open.set()
    assert future.get(timeout=WAIT) is True
    assert window.in_flight == 0
