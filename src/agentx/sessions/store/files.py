"""The local file store, the default backend (DEC-HOME-1 ``sessions/``, WIRE-025).

A session lives at ``<root>/<session_id>/`` (``root`` is
``$AGENTX_HOME/sessions``) and holds two files:

- ``header.json``: the session's header (:mod:`agentx.sessions.store.header`),
  written once. The directory is built under a temporary name and renamed
  into place, so a session either exists with its header or does not exist
  at all.
- ``transcript.jsonl``: the append-only conversation, one JSON object per
  ``\\n``-terminated line (:mod:`agentx.sessions.store.jsonl`), written by
  :class:`~agentx.sessions.store.file_appender.TranscriptAppender` with one
  ``fsync`` per sync barrier (group commit).

A crash leaves a readable prefix: a torn last line is dropped with a WARN;
:meth:`SessionStore.open` also cuts it from the file so the next append
starts on a line boundary. One process writes a session at a time; any
number of readers may read it while it is written and each sees a prefix of
the appended entries.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentx.config.home import fsync_dir, private_dirs, sweep_stale, with_path
from agentx.diagnostics import logger
from agentx.sessions.store.base import append_synced
from agentx.sessions.store.errors import (
    SessionCorrupt,
    SessionError,
    SessionExists,
    SessionNotFound,
)
from agentx.sessions.store.file_appender import TranscriptAppender, lock_exclusive, write_all
from agentx.sessions.store.header import (
    SessionHeader,
    _header_bytes,
    _parse_header,
    validate_session_id,
)
from agentx.sessions.store.jsonl import Admit, Transcript, parse_transcript

#: The store's directory inside the AgentX home (DEC-HOME-1).
SESSIONS_DIR_NAME = "sessions"
HEADER_FILE_NAME = "header.json"
TRANSCRIPT_FILE_NAME = "transcript.jsonl"

_TEMP_PREFIX = ".partial-"


class SessionStore:
    """Sessions under ``root`` (``$AGENTX_HOME/sessions``)."""

    def __init__(self, root: Path, *, create: bool = True) -> None:
        """``create=False`` (the read-only ``sessions`` commands) neither makes
        nor sweeps the folder, which must exist."""
        self.root = root
        if create:
            private_dirs(self.root)
            sweep_stale(self.root, _TEMP_PREFIX)

    def _dir(self, session_id: str) -> Path:
        return self.root / validate_session_id(session_id)

    def create(self, header: SessionHeader) -> None:
        """Create the session with ``header`` and an empty transcript.

        The directory is assembled under ``.partial-<pid>-...``, fsynced and
        renamed into place, so a crash never leaves a session without its
        header. Raises :class:`SessionExists` if the id is taken.
        """
        final = self._dir(header.session_id)
        if final.exists():
            raise SessionExists("session already exists")
        # A private staging directory of a unique name, as tempfile.mkdtemp
        # makes one, without loading tempfile and shutil at start (DEC-CLI-3).
        staging = self.root / f"{_TEMP_PREFIX}{os.getpid()}-{os.urandom(8).hex()}"
        os.mkdir(staging, 0o700)
        try:
            for name, data in (
                (HEADER_FILE_NAME, _header_bytes(header)),
                (TRANSCRIPT_FILE_NAME, b""),
            ):
                fd = os.open(staging / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    write_all(fd, data)
                    os.fsync(fd)
                except OSError as exc:
                    raise with_path(exc, staging / name) from None
                finally:
                    os.close(fd)
            fsync_dir(staging)
            try:
                os.rename(staging, final)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise SessionExists("session already exists") from None
                raise
        except BaseException:
            for name in (HEADER_FILE_NAME, TRANSCRIPT_FILE_NAME):
                (staging / name).unlink(missing_ok=True)
            staging.rmdir()
            raise
        fsync_dir(self.root)

    def _load(self, session_id: str) -> tuple[Transcript, int | None]:
        directory = self._dir(session_id)
        try:
            header_data = (directory / HEADER_FILE_NAME).read_bytes()
            data = (directory / TRANSCRIPT_FILE_NAME).read_bytes()
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            header = _parse_header(header_data, session_id)
        except SessionCorrupt as exc:
            raise SessionCorrupt(f"{directory / HEADER_FILE_NAME}: {exc}") from None
        try:
            entries, intact = parse_transcript(data)
        except SessionCorrupt as exc:
            raise SessionCorrupt(f"{directory / TRANSCRIPT_FILE_NAME}: {exc}") from None
        if intact is not None:
            logger.warning(
                "session {}: dropped a torn last transcript line ({} bytes)",
                session_id,
                len(data) - intact,
            )
        return Transcript(header=header, entries=entries, torn=intact is not None), intact

    @property
    def location(self) -> str:
        """The store's directory, for diagnostics."""
        return str(self.root)

    def close(self) -> None:
        """Nothing to release: every appender closes its own descriptor."""

    def _stored(self) -> list[tuple[int, SessionHeader]]:
        """Each readable session's transcript change time and header;
        unreadable sessions are skipped with a WARN."""
        found: list[tuple[int, SessionHeader]] = []
        for directory in self.root.iterdir():
            if directory.name.startswith(_TEMP_PREFIX) or not directory.is_dir():
                continue
            try:
                header = _parse_header((directory / HEADER_FILE_NAME).read_bytes(), directory.name)
                changed = (directory / TRANSCRIPT_FILE_NAME).stat().st_mtime_ns
            except (OSError, SessionError):
                logger.warning("sessions: skipped an unreadable session directory")
                continue
            found.append((changed, header))
        return found

    def newest(self, cwd: str) -> str | None:
        """DEC-CLI-5 ``--continue``: the id of the session started in ``cwd``
        whose transcript changed last (ties: the later ``created_at``), or
        ``None``. Unreadable sessions are skipped with a WARN."""
        found = [
            (changed, header.created_at, header.session_id)
            for changed, header in self._stored()
            if header.cwd == cwd
        ]
        return max(found)[2] if found else None

    def headers(self) -> tuple[SessionHeader, ...]:
        """Every readable session's header, oldest first (ties: by id)."""
        stored = [header for _, header in self._stored()]
        return tuple(sorted(stored, key=lambda h: (h.created_at, h.session_id)))

    def read(self, session_id: str) -> Transcript:
        """Read the session without changing it; a torn tail is dropped with a WARN."""
        return self._load(session_id)[0]

    def open(self, session_id: str) -> Transcript:
        """Read the session for resuming and writing: a torn tail is dropped
        with a WARN and cut from the file (fsynced), so the next append starts
        on a line boundary. :class:`SessionBusy` while an appender holds it."""
        path = self._dir(session_id) / TRANSCRIPT_FILE_NAME
        try:
            fd = os.open(path, os.O_WRONLY)
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            lock_exclusive(fd)  # never cut a tail another process is writing
            transcript, intact = self._load(session_id)
            if intact is not None:
                try:
                    os.ftruncate(fd, intact)
                    os.fsync(fd)
                except OSError as exc:
                    raise with_path(exc, path) from None
        finally:
            os.close(fd)
        return transcript

    def delete(self, session_id: str) -> None:
        """Remove the session's directory under its writer lock: renamed out
        of the store first, so a crash leaves the session whole or gone (a
        ``.partial-`` leftover is swept at the next start)."""
        import shutil  # noqa: PLC0415 - the sessions command's, not a start's (DEC-CLI-3)
        import tempfile  # noqa: PLC0415

        directory = self._dir(session_id)
        try:
            fd = os.open(directory / TRANSCRIPT_FILE_NAME, os.O_RDONLY)
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            lock_exclusive(fd)
            doomed = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-", dir=self.root))
            os.rename(directory, doomed / session_id)
            fsync_dir(self.root)
        finally:
            os.close(fd)
        shutil.rmtree(doomed)

    def appender(self, session_id: str, *, admit: Admit | None = None) -> TranscriptAppender:
        """The session's transcript, open for appending (close it when done)."""
        return TranscriptAppender(
            self._dir(session_id) / TRANSCRIPT_FILE_NAME, session_id, admit=admit
        )

    def append(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append ``entries`` durably (one write, one ``os.fsync``) in one
        call: :class:`TranscriptAppender`'s rules, synced at once."""
        if not entries:
            return
        append_synced(self.appender(session_id), entries)
