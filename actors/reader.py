"""The reader: owns stdin on one thread (DESIGN.md "The actors", "Reader").

:class:`InputPump` is that thread. It reads raw byte chunks and hands each to
its :class:`Reader` on the same thread: stdin is never read faster than it is
framed (natural backpressure), and a record costs no thread hand-off before
it is routed (issue 9 item 6: on this machine one cross-thread hand-off costs
more CPU than decoding a record). The reader frames bytes (never text),
decodes each line closed (WIRE-014/021) and routes the records one chunk
completes as one batch, in arrival order, so the router can answer a run of
control requests with one write.

EOF is an explicit step: the unterminated tail is decoded and routed first,
then ``on_eof`` runs, so a final valid control_response resolves before
blanket EOF cleanup (WIRE-EOF-001). The first fatal framing or decode error
ends the input; the lines framed before it are still routed (nothing accepted
is lost) and ``on_fatal`` gets the line number and a content-free reason
(WIRE-001). Chunks after the end are read and dropped: stdin keeps draining,
so a host still writing never blocks on a full pipe while accepted turns
finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from loguru import logger

from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.framing import FramingError, Line, LineFramer


class Reader:
    """Framing, closed decoding and routing; driven by one thread at a time."""

    __slots__ = ("_done", "_framer", "_on_eof", "_on_fatal", "_route")

    def __init__(
        self,
        *,
        route: Callable[[tuple[InboundRecord, ...]], None],
        on_eof: Callable[[], None],
        on_fatal: Callable[[int, str], None],
    ) -> None:
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
                records.append(decode_line(line))
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


class InputPump:
    """The thread that owns stdin and drives a :class:`Reader`.

    A daemon thread, so a blocked read never holds exit. :meth:`stop` ends
    the routing: once it returns True, the reader routes nothing more and
    calls neither ``on_eof`` nor ``on_fatal``.
    """

    __slots__ = ("_lock", "_read_chunk", "_reader", "_stopped", "thread")

    def __init__(self, read_chunk: Callable[[], bytes], reader: Reader) -> None:
        self._read_chunk = read_chunk
        self._reader = reader
        #: Held while the reader handles a chunk; ``stop`` waits for it.
        self._lock = threading.Lock()
        self._stopped = False
        self.thread = threading.Thread(target=self._run, name="agentx-reader", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float) -> bool:
        """Stop routing; False if the chunk being handled did not finish in time."""
        if not self._lock.acquire(timeout=timeout):
            return False
        self._stopped = True
        self._lock.release()
        return True

    def _run(self) -> None:
        while True:
            try:
                chunk = self._read_chunk()
            except OSError:
                chunk = b""
            with self._lock:
                if self._stopped:
                    return
                self._handle(chunk)
            if not chunk:
                return

    def _handle(self, chunk: bytes) -> None:
        """One chunk through the reader (``b""`` is EOF). A defect in routing
        is logged and the input goes on: a dead reader would hang the host."""
        try:
            if chunk:
                self._reader.feed(chunk)
            else:
                self._reader.close()
        except Exception:
            logger.exception("input chunk dropped: routing failed")


def start_pump(read_chunk: Callable[[], bytes], reader: Reader) -> InputPump:
    """Start the thread that reads ``read_chunk`` into ``reader``."""
    pump = InputPump(read_chunk, reader)
    pump.start()
    return pump
