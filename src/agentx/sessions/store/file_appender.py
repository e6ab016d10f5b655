"""The file backend's appender: one ``transcript.jsonl`` open for appending.

Durability (DEC-STORE-1): :class:`TranscriptAppender` writes a batch with one
``os.write`` of the joined lines and makes everything appended so far durable
with one ``os.fsync`` when :meth:`~TranscriptAppender.sync` is called: the
host syncs before any output byte leaves (group commit), so a result that
depends on a batch is written only after the batch is on disk. One process
writes a session at a time (an exclusive ``flock``).
"""

from __future__ import annotations

import fcntl
import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentx.config.home import with_path
from agentx.sessions.store.errors import (
    SessionBusy,
    SessionCorrupt,
    SessionError,
    SessionNotFound,
    TranscriptRefused,
)
from agentx.sessions.store.jsonl import Admit, encode_entries


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write part of it)."""
    written = os.write(fd, data)
    while written < len(data):
        written += os.write(fd, data[written:])


def lock_exclusive(fd: int) -> None:
    """Hold the transcript for this descriptor, or :class:`SessionBusy`."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SessionBusy("the session is open in another agentx process") from None


class TranscriptAppender:
    """One session's transcript, open for appending: group commit (DEC-STORE-1).

    :meth:`append` writes a batch with one ``os.write`` of the joined lines,
    straight through to the operating system; :meth:`sync` makes everything
    appended so far durable with one ``os.fsync``, however many appends it
    covers. The host calls :meth:`sync` from the writer actor before output
    bytes leave (:class:`agentx.actors.writer.FrameBuffer`), so a result is
    never on stdout before the entries it depends on are on disk, and a
    burst of turns shares one disk wait instead of one each.

    The appender holds an exclusive ``flock`` on the transcript for as long
    as it is open: a second appender, in this process or another, gets
    :class:`SessionBusy` (two writers would interleave their lines).

    Appends come from one thread (the turn worker), syncs from another; a
    sync runs without the lock held, so an append never waits for the disk,
    and :meth:`close` waits for a running sync so the descriptor is never
    reused under it. A failed sync is remembered: every later append raises
    :class:`SessionError`, and so does every later sync: the results that
    waited for the failed sync are dropped and the session ends
    (DEC-STORE-6, :class:`agentx.sessions.setup.StoredTranscript`).

    ``admit`` (DEC-AUTH-6) sees each encoded batch before it is written; a
    batch it refuses raises :class:`TranscriptRefused` and writes nothing.
    """

    def __init__(self, path: Path, session_id: str, *, admit: Admit | None = None) -> None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            lock_exclusive(fd)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                raise SessionCorrupt(f"{path}: ends in a torn line; open() the session first")
        except OSError as exc:
            os.close(fd)
            raise with_path(exc, path) from None
        except BaseException:
            os.close(fd)
            raise
        self._admit = admit
        self._path = path
        self._fd = fd
        # An appender dropped without close() (an embedding application's
        # failed start-up) still releases its descriptor and lock.
        self._release = weakref.finalize(self, os.close, fd)
        self._size = size
        self._cond = threading.Condition()
        self._dirty = False
        self._syncing = 0
        self._closed = False
        self._failed: str | None = None
        #: A failed ``fsync`` (DEC-STORE-6): every later barrier fails too.
        self._sync_failed: str | None = None

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Write ``entries`` (not yet durable: see :meth:`sync`).

        Raises ``ValueError`` for an entry that would not read back, and
        :class:`SessionError` after a failed sync or once closed; either way
        nothing is written. If the write fails part-way (disk full, file size
        limit) the transcript is cut back to its previous length and the
        error is raised: no partial batch is left behind.
        """
        batch = encode_entries(entries)
        if not entries:
            return
        if self._admit is not None and not self._admit(batch.pieces()):
            raise TranscriptRefused("an entry holds a configured credential")
        with self._cond:
            if self._closed:
                raise SessionError("transcript closed")
            if self._failed is not None:
                raise SessionError(self._failed)
            written = 0
            try:
                # The pieces as spelled again: the same bytes the guard saw.
                for piece in batch.pieces():
                    write_all(self._fd, piece)
                    written += len(piece)
            except BaseException:
                self._cut_back()
                raise
            self._size += written
            self._dirty = True

    def _cut_back(self) -> None:
        """Remove a batch that failed part-way (its lines must never be read
        back: DEC-STORE-1). If even that fails, nothing is appended again."""
        try:
            os.ftruncate(self._fd, self._size)
        except OSError as exc:
            self._failed = f"transcript could not be cut back: {exc.strerror}"

    def sync(self) -> None:
        """Make every append so far durable; nothing new is a no-op.

        Raises the ``OSError`` of a failed ``fsync`` (and remembers it); after
        one, every sync raises :class:`SessionError`: a later ``fsync`` may
        report success for pages the kernel already dropped (DEC-STORE-6)."""
        with self._cond:
            if self._sync_failed is not None:
                raise SessionError(self._sync_failed)
            if self._closed or not self._dirty:
                return
            self._dirty = False
            self._syncing += 1
        try:
            os.fsync(self._fd)
        except OSError as exc:
            with self._cond:
                self._failed = self._sync_failed = f"transcript sync failed: {exc.strerror}"
            raise with_path(exc, self._path) from None
        finally:
            with self._cond:
                self._syncing -= 1
                self._cond.notify_all()

    def close(self) -> None:
        """Close after any running sync; later appends raise, syncs do nothing."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.wait_for(lambda: self._syncing == 0)
            self._release()
