"""The session's internal-event log (WIRE-004, DEC-TURN-5; scenario 15, the spec's
hard-interrupt order "remote internal/resume-event flush").

Internal events are what a resumed or observing host would want to know of
the end-of-turn machinery: that a turn ended (its result's uuid and subtype)
and how each background task ended. They are buffered in memory as they
happen and written by :meth:`InternalEventLog.flush` at one place in the
order: after the result and any prompt suggestion, before ``idle``.

The log records what agentx did, never what a client received: an entry
says a record was *written to the output FIFO*, and FIFO position is not a
delivery acknowledgement (spec, "Ordering"). So nothing here, nor any log
line, claims that a visible record was delivered or acknowledged.

File: ``events.jsonl`` in the session directory, one JSON object a line,
opened at the first flush and kept open until :meth:`InternalEventLog.close`,
appended with one ``os.write`` per flush: written through to the operating
system at that point of the order, not fsynced. Resume reads the transcript,
which is fsynced before each result leaves; this log makes no durability claim of
its own, and an fsync here would double the disk waits of every turn.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentx.messages.frozen import FrozenDict
from agentx.sessions.store.jsonl import encode_entries, parse_transcript

EVENTS_FILE_NAME: Final = "events.jsonl"


class InternalEventLog:
    """Buffered internal events of one session; thread-safe."""

    def __init__(self, path: Path | None) -> None:
        """``path`` None (``--no-session-persistence``) keeps nothing."""
        self._path = path
        self._lock = threading.Lock()
        self._pending: list[Mapping[str, Any]] = []
        self._fd: int | None = None

    def turn_ended(
        self, *, result_uuid: str, subtype: str, prompt_suggestion_uuid: str | None
    ) -> None:
        self._add(
            {
                "type": "turn_end",
                "result_uuid": result_uuid,
                "subtype": subtype,
                "prompt_suggestion_uuid": prompt_suggestion_uuid,
            }
        )

    def task_ended(self, task_id: str, status: str) -> None:
        self._add({"type": "task_end", "task_id": task_id, "status": status})

    def _add(self, entry: Mapping[str, Any]) -> None:
        if self._path is None:
            return
        with self._lock:
            self._pending.append(entry)

    def flush(self) -> None:
        """Write the buffered events through to the OS; nothing to write is a no-op."""
        if self._path is None:
            return
        with self._lock:
            pending, self._pending = self._pending, []
            if not pending:
                return
            batch = encode_entries(pending)
            if self._fd is None:
                self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            size = os.fstat(self._fd).st_size
            try:
                for piece in batch.pieces():
                    view = memoryview(piece)
                    while view:
                        view = view[os.write(self._fd, view) :]
            except OSError:
                # A write cut short (disk full) leaves no torn line before the
                # next flush's lines; these events are lost, and said so.
                os.ftruncate(self._fd, size)
                raise

    def close(self) -> None:
        """Flush what is buffered, then close the file (the host's last step);
        events added later are kept in memory and a later flush reopens it."""
        self.flush()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def read_events(path: Path) -> tuple[FrozenDict, ...]:
    """The flushed events (a torn last line is dropped, as in the transcript)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ()
    return parse_transcript(data)[0]


__all__ = ["EVENTS_FILE_NAME", "InternalEventLog", "read_events"]
