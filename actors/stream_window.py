"""StreamWindow: how many ``stream_event`` records may wait for stdout
(WIRE-003, DECISIONS section 8: nothing waits without a deadline).

``--include-partial-messages`` writes one ``stream_event`` per model delta.
The writer's inbox has no bound, so a client reading stdout more slowly than
the model streams would otherwise let those records pile up in memory
without limit. The window counts the ``stream_event`` records handed to the
writer (:meth:`sent`, by :class:`~agentx.actors.writer.WriterSink`) and not
yet written (:meth:`written`, by the writer once it handled them). The model
call asks :meth:`room` before it emits the next one: it waits while
``limit`` records are in flight.

Only ``stream_event`` records are counted and only the producer of them
waits; every record still goes to the writer's one FIFO, in order, so
nothing is dropped, duplicated or reordered, and the records the protocol
orders (results, control responses, cancellations) never wait here.

The wait returns at once when the turn's scope is cancelled (an interrupt,
the shutdown's cancel of the active turn, DEC-EXIT-1). Its deadline: after
``deadline`` seconds in which the writer wrote none of the counted records
(stdout stalled), it returns anyway and the record goes on, one WARNING line
said once per stall; the producer then waits again at the next record, so a
stalled stdout holds the turn, as it holds the writer, until it drains or the
turn is cancelled, and the records waiting grow by at most one per deadline.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from agentx.diagnostics import logger
from agentx.turns.cancel import CancelScope

#: Records in flight before the model call waits: a few hundred deltas keep
#: the writer busy (it batches up to FLUSH_BYTES per write) and bound memory.
STREAM_WINDOW_RECORDS = 256
#: DECISIONS section 8: the longest one wait lasts with no record written.
STREAM_WINDOW_SECONDS = 60.0
#: How often a waiting producer looks at its cancel scope (CancelScope has no
#: condition to wait on together with the window's).
_POLL_SECONDS = 0.05


def stream_events(records: Iterable[Mapping[str, Any]]) -> int:
    """How many of ``records`` the window counts."""
    return sum(1 for record in records if record.get("type") == "stream_event")


class StreamWindow:
    """A thread-safe count of ``stream_event`` records on their way to stdout."""

    __slots__ = ("_changed", "_closed", "_deadline", "_in_flight", "_limit", "_stalled")

    def __init__(
        self, limit: int = STREAM_WINDOW_RECORDS, deadline: float = STREAM_WINDOW_SECONDS
    ) -> None:
        if limit < 1:
            raise ValueError("a stream window holds at least one record")
        self._limit = limit
        self._deadline = deadline
        self._in_flight = 0
        self._stalled = False
        self._closed = False
        self._changed = threading.Condition(threading.Lock())

    @property
    def in_flight(self) -> int:
        with self._changed:
            return self._in_flight

    def sent(self, count: int) -> None:
        """``count`` counted records were handed to the writer."""
        if count:
            with self._changed:
                self._in_flight += count

    def written(self, count: int) -> None:
        """The writer handled ``count`` counted records (written or dropped
        after a latched failure: either way they left its inbox)."""
        if count:
            with self._changed:
                self._in_flight = max(0, self._in_flight - count)
                self._stalled = False
                self._changed.notify_all()

    def close(self) -> None:
        """The writer stopped: no record will be written, nobody waits."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def room(self, cancel: CancelScope) -> None:
        """Return once fewer than ``limit`` records are in flight, ``cancel``
        is set, the writer stopped, or ``deadline`` seconds passed with none
        written."""
        with self._changed:
            until = time.monotonic() + self._deadline
            while self._in_flight >= self._limit and not (self._closed or cancel.is_set()):
                now = time.monotonic()
                if now >= until:
                    if not self._stalled:
                        self._stalled = True
                        logger.warning(
                            "stdout wrote no stream_event for {:.0f} s; streaming on",
                            self._deadline,
                        )
                    return
                before = self._in_flight
                self._changed.wait(min(_POLL_SECONDS, until - now))
                if self._in_flight < before:
                    # A record written restarts the deadline (progress, not a stall).
                    until = time.monotonic() + self._deadline
