"""The reader actor: owns stdin through a pump thread (DESIGN.md "The actors",
"Reader").

The pump thread only reads raw byte chunks and tells each to the
:class:`ReaderActor`; at most :data:`PUMP_WINDOW` chunks wait for the actor,
so stdin is never read far ahead of the framing (natural backpressure). The
actor drives a :class:`Reader`, which frames bytes (never text), decodes
each line closed (WIRE-014/021) and routes the records one chunk completes
as one batch, in arrival order, so the router can answer a run of control
requests with one write.

EOF is an explicit step: the unterminated tail is decoded and routed first,
then ``on_eof`` runs, so a final valid control_response resolves before
blanket EOF cleanup (WIRE-EOF-001). The first fatal framing or decode error
ends the input; the lines framed before it are still routed (nothing accepted
is lost) and ``on_fatal`` gets the line number and a content-free reason
(WIRE-001). Chunks after the end are taken and dropped: stdin keeps draining,
so a host still writing never blocks on a full pipe while accepted turns
finish. A defect in routing drops that chunk with a log line and the input
goes on: a dead reader would hang the host.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pykka
from loguru import logger

from agentx.actors.base import Actor
from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.framing import FramingError, Line, LineFramer


class Reader:
    """Framing, closed decoding and routing; driven by the reader actor."""

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


@dataclass(frozen=True, slots=True)
class Feed:
    """One chunk read from stdin."""

    chunk: bytes
    #: Released once the chunk is routed (the pump's window).
    taken: threading.Semaphore | None = None


@dataclass(frozen=True, slots=True)
class Close:
    """Input EOF (or a read error, which ends input the same way)."""


class ReaderActor(Actor):
    """The :class:`Reader` on its own actor thread."""

    def __init__(self, reader: Reader) -> None:
        super().__init__()
        self._reader = reader

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Feed):
            try:
                self._reader.feed(message.chunk)
            except Exception:
                logger.exception("input chunk dropped: routing failed")
            finally:
                if message.taken is not None:
                    message.taken.release()
        elif isinstance(message, Close):
            try:
                self._reader.close()
            except Exception:
                logger.exception("input tail dropped: routing failed")
        else:
            raise TypeError(f"ReaderActor got an unknown message {type(message).__name__}")
        return None


#: Chunks the pump may have read before the reader actor has routed them.
PUMP_WINDOW = 4
#: How often a pump waiting for the window checks that the reader still runs.
PUMP_POLL_SECONDS = 0.5


def start_pump(
    read_chunk: Callable[[], bytes], reader: pykka.ActorRef[ReaderActor]
) -> threading.Thread:
    """Start the thread that reads ``read_chunk`` into ``reader``: a daemon,
    so a blocked read never holds exit. It ends after EOF, or once the
    reader actor has stopped."""
    window = threading.Semaphore(PUMP_WINDOW)

    def pump() -> None:
        while True:
            try:
                chunk = read_chunk()
            except OSError:
                chunk = b""
            try:
                if not chunk:
                    reader.tell(Close())
                    return
                while not window.acquire(timeout=PUMP_POLL_SECONDS):
                    if not reader.is_alive():
                        return
                reader.tell(Feed(chunk, window))
            except pykka.ActorDeadError:
                return

    thread = threading.Thread(target=pump, name="agentx-stdin-pump", daemon=True)
    thread.start()
    return thread
