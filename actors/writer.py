"""WriterActor: the only owner of stdout (WIRE-003, WIRE-013, WIRE-015, DEC-AUTH-6).

Its inbox is the shared FIFO: ordinary events, outbound control requests,
cancellation records and keepalives all arrive here, each sender's order
preserved, and one message drains at a time. Every record goes through the
:class:`~agentx.messages.guard.OutputGuard`, which validates the exact final
bytes before anything reaches the sink. A latched failure (credential match,
broken pipe, short write) is reported once to ``on_failure``; later records
are dropped without touching the guard's callbacks again. With credential
material configured, a :class:`~agentx.messages.stream_guard.StreamGuard`
first reads each record: a ``stream_event`` whose delta would complete a
literal in the text a UI joins is refused the same way (DEC-AUTH-6).

Validated frames wait in a :class:`FrameBuffer` (the guard's write callback)
and leave in one write whenever the inbox is empty, the buffer holds
``FLUSH_BYTES`` (also between the records of one message), or a ``Drain``
or stop arrives: under load many records share
one system call, and an idle writer never holds a record back.

With a :class:`~agentx.actors.stream_window.StreamWindow`, the writer counts
each handled ``stream_event`` record as written, so the model call streaming
them waits while too many are still queued here (memory bound for a slow
stdout reader, DECISIONS section 8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pykka
from msgspec import Struct

from agentx.actors.base import Actor
from agentx.actors.stream_window import StreamWindow, stream_events
from agentx.actors.supervision import ExitLatch
from agentx.diagnostics import logger
from agentx.messages.encode import EncodeError
from agentx.messages.guard import (
    FailureKindName,
    OutputFailure,
    OutputGuard,
    Writer,
    deliver,
)
from agentx.messages.records import Emit, Records

if TYPE_CHECKING:
    from agentx.messages.stream_guard import StreamGuard

#: A full buffer is written even while more messages wait (bounds the delay
#: a queued interrupt acknowledgement can see behind a streaming turn).
FLUSH_BYTES = 16_384


class FrameBuffer:
    """Complete, validated frames on their way to ``write``, in order.

    ``barrier`` runs before each write: the session transcript's sync
    (:meth:`agentx.sessions.setup.StoredTranscript.sync`), so no byte leaves
    before the transcript entries written ahead of it are durable (DEC-STORE-1's
    "durable before its result"), and the frames of many turns share one
    ``fsync``. It must not raise; it answers False when the store failed
    (DEC-STORE-6): the frames it held are dropped, never written, since what
    they acknowledge is not stored (the barrier's owner ends the session).
    """

    __slots__ = ("_barrier", "_dropped", "_frames", "_size", "_write")

    def __init__(self, write: Writer, *, barrier: Callable[[], bool] | None = None) -> None:
        self._write = write
        self._barrier = barrier
        self._frames: list[bytes] = []
        self._size = 0
        self._dropped = False

    def __call__(self, frame: bytes) -> int:
        self._frames.append(frame)
        self._size += len(frame)
        return len(frame)

    @property
    def size(self) -> int:
        return self._size

    @property
    def dropped(self) -> bool:
        """A failed barrier dropped frames (DEC-STORE-6)."""
        return self._dropped

    def flush(self) -> FailureKindName | None:
        """Write everything held with one call; what latched, if anything."""
        if not self._frames:
            return None
        data = self._frames[0] if len(self._frames) == 1 else b"".join(self._frames)
        self._frames.clear()
        self._size = 0
        if self._barrier is not None and not self._barrier():
            self._dropped = True  # DEC-STORE-6: never acknowledge what is not stored
            return None
        return deliver(self._write, data)


class Drain(Struct, frozen=True):
    """Answered once everything sent before it was handled."""


class WriterActor(Actor):
    """Serialises complete, validated records onto the output sink.

    ``stream`` is None when the credential union is empty: then no record is
    read before the guard encodes it (ordinary bytes, WIRE-013).
    """

    def __init__(
        self,
        *,
        guard: OutputGuard,
        frames: FrameBuffer,
        on_failure: Callable[[str], None],
        select: Callable[[Mapping[str, Any]], bool] = lambda record: True,
        stream: StreamGuard | None = None,
        supervision: ExitLatch | None = None,
        window: StreamWindow | None = None,
    ) -> None:
        super().__init__(supervision=supervision)
        self._window = window
        self._guard = guard
        self._stream = stream
        self._frames = frames
        self._select = select
        self._on_failure = on_failure
        self._failed = False

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Emit):
            try:
                self._write(message.records)
                if self._frames.size >= FLUSH_BYTES or self.actor_inbox.empty():
                    self._flush()
            finally:
                if self._window is not None:
                    # Written, held in at most FLUSH_BYTES of frames, or dropped
                    # after a latched failure: they left the inbox either way.
                    self._window.written(stream_events(message.records))
            return None
        if isinstance(message, Drain):
            self._flush()
            # Scenario 15: this says only that the bytes were handed to the
            # sink, never that a client received or acknowledged them.
            return not self._failed and not self._frames.dropped
        raise TypeError(f"WriterActor got an unknown message {type(message).__name__}")

    def on_stop(self) -> None:
        if self._window is not None:
            self._window.close()  # what is still queued is never handled
        self._flush()

    def _flush(self) -> bool:
        """Write what is held; False once output failed."""
        kind = self._frames.flush()
        if kind is not None and not self._failed:
            self._guard.latch(kind)
            self._fail(kind)
        return not self._failed

    def _refuse(self, kind: FailureKindName) -> None:
        # Frames validated before the refused one still leave, in order.
        self._flush()
        if not self._failed:
            self._fail(kind)

    def _fail(self, kind: str) -> None:
        self._failed = True
        self._on_failure(kind)

    def _write(self, records: Records) -> None:
        if self._failed:
            return
        stream = self._stream
        for record in records:
            if not self._select(record):
                continue
            if stream is not None and (refused := stream.check(record)) is not None:
                # DEC-AUTH-6: the latch and exit of a WIRE-013 rejection.
                self._guard.latch(refused)
                self._refuse(refused)
                return
            try:
                self._guard.write_record(record)
            except OutputFailure as failure:
                self._refuse(failure.kind)
                return
            except EncodeError as exc:
                # A record with no JSON spelling is a defect upstream; nothing
                # was written and the encoder did not latch (WIRE-013).
                logger.error("record dropped: {}", exc)
                continue
            # A long message split into many records (DEC-COMPAT-3) is held
            # one record at a time, not whole.
            if self._frames.size >= FLUSH_BYTES and not self._flush():
                return


class WriterSink:
    """The ``emit`` handle every other party writes through (one tell per batch).

    With a ``window``, the ``stream_event`` records of each batch are counted
    as sent before the tell (the writer counts them written), so a producer
    asking :meth:`StreamWindow.room` sees them in flight.
    """

    __slots__ = ("_ref", "_window")

    def __init__(
        self, ref: pykka.ActorRef[WriterActor], window: StreamWindow | None = None
    ) -> None:
        self._ref = ref
        self._window = window

    def emit(self, records: Records) -> None:
        window = self._window
        if window is None:
            self._ref.tell(Emit(records=records))
            return
        counted = stream_events(records)
        window.sent(counted)
        try:
            self._ref.tell(Emit(records=records))
        except BaseException:
            window.written(counted)  # never queued: nothing to wait for
            raise

    __call__ = emit

    def drain(self, timeout: float | None = None) -> bool:
        """Block until everything emitted before was handled; False if output failed."""
        return bool(self._ref.ask(Drain(), block=True, timeout=timeout))
