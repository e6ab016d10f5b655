"""ReaderActor: owns stdin through a pump thread (DESIGN.md "The actors").

The pump reads raw byte chunks and hands each to the reader, waiting for the
reader to take it (natural backpressure: stdin is never read faster than it
is framed). The reader frames bytes (never text), decodes each line closed
(WIRE-014/021) and routes the records one chunk completes as one batch, in
arrival order, so the router can answer a run of control requests with one
write instead of one actor message per record. EOF is an explicit step:
the unterminated tail is decoded and routed first, then ``on_eof`` runs, so
a final valid control_response resolves before blanket EOF cleanup
(WIRE-EOF-001). The first fatal framing or decode error ends the input; the
lines framed before it are still routed (nothing accepted is lost) and
``on_fatal`` gets the line number and a content-free reason (WIRE-001).
Chunks after the end are taken and dropped: stdin keeps draining, so a host
still writing never blocks on a full pipe while accepted turns finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pykka

from agentx.actors.base import Actor
from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.framing import FramingError, Line, LineFramer

#: Chunks the pump may hand over before the reader has taken them.
PUMP_WINDOW = 4
PUMP_POLL_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Feed:
    chunk: bytes
    #: Released once the chunk is framed and routed (the pump's backpressure).
    taken: threading.Semaphore | None = None


@dataclass(frozen=True, slots=True)
class Close:
    """Input EOF (or a read error, which ends input the same way)."""


class ReaderActor(Actor):
    def __init__(
        self,
        *,
        route: Callable[[tuple[InboundRecord, ...]], None],
        on_eof: Callable[[], None],
        on_fatal: Callable[[int, str], None],
    ) -> None:
        super().__init__()
        self._framer = LineFramer()
        self._route = route
        self._on_eof = on_eof
        self._on_fatal = on_fatal
        self._done = False

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Feed):
            try:
                if not self._done:
                    self._feed(message.chunk)
            finally:
                # Taken even after the end (then dropped): the pump keeps
                # draining stdin, so a host still writing never blocks on a
                # full pipe while accepted turns finish.
                if message.taken is not None:
                    message.taken.release()
        elif isinstance(message, Close):
            if not self._done:
                self._close()
        else:
            raise TypeError(f"ReaderActor got an unknown message {type(message).__name__}")
        return None

    def _feed(self, chunk: bytes) -> None:
        try:
            lines = self._framer.feed(chunk)
        except FramingError as exc:
            self._framing_failed(exc)
            return
        self._dispatch(lines)

    def _close(self) -> None:
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


def start_pump(
    read_chunk: Callable[[], bytes], reader: pykka.ActorRef[ReaderActor]
) -> threading.Thread:
    """Start the stdin pump: a daemon thread, so a blocked read never holds exit."""

    # At most PUMP_WINDOW chunks wait in the reader's inbox: stdin is never
    # read much faster than it is framed, and the pump is not woken per chunk.
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
