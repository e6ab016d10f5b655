"""The reader actor: owns stdin (DESIGN.md "The actors", "Reader").

:class:`ReaderActor`'s own thread reads raw byte chunks and hands each to its
:class:`Reader` core, which frames bytes (never text), decodes each line
closed (WIRE-014/021) and routes the records one chunk completes as one
batch, in arrival order, so the router can answer a run of control requests
with one write. Reading and routing share the thread: no hand-off per chunk,
and stdin is never read faster than it is framed (natural backpressure).

EOF is an explicit step: the unterminated tail is decoded and routed first,
then ``on_eof`` runs, so a final valid control_response resolves before
blanket EOF cleanup (WIRE-EOF-001). The first fatal framing or decode error
ends the input; the lines framed before it are still routed (nothing accepted
is lost) and ``on_fatal`` gets the line number and a content-free reason
(WIRE-001). Chunks after the end are read and dropped: stdin keeps draining,
so a host still writing never blocks on a full pipe while accepted turns
finish. A defect in routing is the actor's failure, reported to the
supervision tree like any other (DECISIONS section 8: status 4).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pykka
from msgspec import Struct

from agentx.actors.base import Actor
from agentx.actors.supervision import ExitLatch
from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.framing import FramingError, Line, LineFramer


class Reader:
    """Framing, closed decoding and routing; driven by the reader actor."""

    __slots__ = ("_done", "_framer", "_on_eof", "_on_fatal", "_route", "_sdk")

    def __init__(
        self,
        *,
        route: Callable[[tuple[InboundRecord, ...]], None],
        on_eof: Callable[[], None],
        on_fatal: Callable[[int, str], None],
        sdk: bool = False,
    ) -> None:
        #: DEC-PROFILE-2: decode the ``sdk`` profile's user record.
        self._sdk = sdk
        self._framer = LineFramer()
        self._route = route
        self._on_eof = on_eof
        self._on_fatal = on_fatal
        self._done = False

    @property
    def done(self) -> bool:
        """True once the input ended (EOF reported, or a fatal error)."""
        return self._done

    def feed(self, chunk: bytes) -> None:
        """Route the records ``chunk`` completes (dropped after the end)."""
        if self._done:
            return
        try:
            lines = self._framer.feed(chunk)
        except FramingError as exc:
            self._framing_failed(exc)
            return
        self._dispatch(lines)

    def close(self) -> None:
        """Input EOF (or a read error, which ends input the same way)."""
        if self._done:
            return
        try:
            lines = self._framer.close()
        except FramingError as exc:
            self._framing_failed(exc)
            return
        if self._dispatch(lines):
            self._done = True
            self._on_eof()

    def _dispatch(self, lines: Sequence[Line]) -> bool:
        """Route the records of ``lines``; the ones before a fatal line are
        routed before the fatal report (nothing accepted is lost)."""
        records: list[InboundRecord] = []
        for line in lines:
            try:
                records.append(decode_line(line, sdk=self._sdk))
            except FatalDecodeError as exc:
                if records:
                    self._route(tuple(records))
                self._fatal(exc.line_number, exc.message)
                return False
        if records:
            self._route(tuple(records))
        return True

    def _framing_failed(self, exc: FramingError) -> None:
        if self._dispatch(exc.preceding):
            self._fatal(exc.line_number, exc.reason)

    def _fatal(self, line_number: int, reason: str) -> None:
        self._done = True
        self._on_fatal(line_number, reason)


class ReadNext(Struct, frozen=True):
    """The reader actor's note to itself: read and route the next chunk."""


class RoutingGate:
    """Shared by the reader actor and its handle: held while a chunk is
    routed; once ``halted``, nothing more is."""

    __slots__ = ("halted", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.halted = False


class ReaderActor(Actor):
    """The :class:`Reader` on an actor thread that owns stdin.

    The actor reads a chunk, routes it, then tells itself to read the next:
    no hand-off between reading and routing (bench/e2e_bench.py: on this machine
    one cross-thread hand-off costs more CPU than decoding a record), and
    stdin is never read ahead of the framing (natural backpressure). Its
    thread is a daemon (as every actor's), so a read blocked on an open stdin
    never holds exit.
    After EOF it stops itself. :meth:`ReaderHandle.stop` ends the routing.
    """

    def __init__(
        self,
        read_chunk: Callable[[], bytes],
        reader: Reader,
        gate: RoutingGate,
        supervision: ExitLatch | None = None,
    ) -> None:
        super().__init__(supervision=supervision)
        self._read_chunk = read_chunk
        self._reader = reader
        self._gate = gate

    def on_start(self) -> None:
        self.actor_ref.tell(ReadNext())

    def on_receive(self, message: Any) -> Any:
        if not isinstance(message, ReadNext):
            raise TypeError(f"ReaderActor got an unknown message {type(message).__name__}")
        try:
            chunk = self._read_chunk()
        except OSError:
            chunk = b""  # a read error ends input like EOF
        with self._gate.lock:
            if self._gate.halted:
                return None
            if chunk:
                self._reader.feed(chunk)
            else:
                self._reader.close()
        if chunk:
            self.actor_ref.tell(ReadNext())
        else:
            self.stop()
        return None


class ReaderHandle:
    """The host's hold on a started :class:`ReaderActor`."""

    __slots__ = ("_gate", "ref")

    def __init__(self, ref: pykka.ActorRef[ReaderActor], gate: RoutingGate) -> None:
        self.ref = ref
        self._gate = gate

    def stop(self, timeout: float) -> bool:
        """End the routing: once this returns True nothing more is routed and
        neither ``on_eof`` nor ``on_fatal`` runs. False if the chunk being
        routed did not finish within ``timeout``. The actor stops when its
        read returns (a daemon thread: a read that never does holds nothing)."""
        if not self._gate.lock.acquire(timeout=timeout):
            return False
        self._gate.halted = True
        self._gate.lock.release()
        self.ref.stop(block=False)
        return True


def start_reader(
    read_chunk: Callable[[], bytes], reader: Reader, supervision: ExitLatch | None = None
) -> ReaderHandle:
    """Start the reader actor on ``read_chunk`` (stdin's reads)."""
    gate = RoutingGate()
    return ReaderHandle(ReaderActor.start(read_chunk, reader, gate, supervision), gate)
