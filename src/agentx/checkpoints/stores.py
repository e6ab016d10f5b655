"""Where a session's file checkpoints live (DEC-PROFILE-2, DEC-STORE-1).

The checkpoints go where the session goes: in the local file store, the
session's folder holds ``checkpoints/entries.jsonl`` (one entry a line,
:func:`agentx.messages.checkpoints.encode`) and ``checkpoints/kept/<sha256>``
(the kept bytes, named by their digest); in PostgreSQL, the tables
``agentx_checkpoints`` and ``agentx_checkpoint_files``
(:mod:`agentx.checkpoints.pg_store`), deleted with the session. Either way
an entry or kept file is durable before the change it protects is made (an
``fsync`` of file and folder, a committed statement), so a session resumed
after a crash never lacks the entry of a change that happened.

With ``--no-session-persistence`` they live in a private temp folder that
:meth:`CheckpointStore.close` removes: nothing is left on disk.

Kept bytes read back are checked against their digest.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal, Protocol

from msgspec import Struct

ENTRIES_FILE = "entries.jsonl"
KEPT_DIR = "kept"
#: The checkpoints folder inside a session's folder of the file store.
CHECKPOINTS_DIR = "checkpoints"


class CheckpointStoreError(Exception):
    """The checkpoints cannot be read or written; the message is credential-free."""


class Place(Struct, frozen=True, kw_only=True):
    """Where one session's checkpoints go: a folder of the file store, a
    PostgreSQL store (``location`` is its URL, never shown), or a temp folder."""

    kind: Literal["files", "postgres", "temp"]
    location: str
    session_id: str


class CheckpointStore(Protocol):
    def load(self) -> list[str]:
        """Every stored entry line, in order."""

    def append(self, line: str) -> None:
        """Store one entry, durable when this returns."""

    def put(self, digest: str, data: bytes) -> None:
        """Store kept bytes under their digest (once), durable when this returns."""

    def get(self, digest: str) -> bytes:
        """The kept bytes; :class:`CheckpointStoreError` when missing or altered."""

    def close(self) -> None:
        """Release the store (a temp folder is removed)."""


def open_store(place: Place) -> CheckpointStore:
    """The store ``place`` names; PostgreSQL (psycopg) is imported only for it."""
    if place.kind == "postgres":
        from agentx.checkpoints.pg_store import PostgresCheckpoints  # noqa: PLC0415

        return PostgresCheckpoints(place.location, place.session_id)
    if place.kind == "temp":
        folder = Path(tempfile.mkdtemp(prefix="agentx-checkpoints-"))
        return FileCheckpoints(folder, durable=False, remove_on_close=True)
    return FileCheckpoints(Path(place.location), durable=True, remove_on_close=False)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileCheckpoints:
    """The checkpoints of one session in a private folder."""

    def __init__(self, folder: Path, *, durable: bool, remove_on_close: bool) -> None:
        self._folder = folder
        self._durable = durable
        self._remove = remove_on_close
        self._entries = folder / ENTRIES_FILE
        try:
            os.makedirs(folder / KEPT_DIR, mode=0o700, exist_ok=True)
            self._linked = self._entries.exists()
            if durable:
                _fsync_dir(folder)
                _fsync_dir(folder.parent)
        except OSError as exc:
            raise CheckpointStoreError(f"{folder}: {exc.strerror}") from None

    def load(self) -> list[str]:
        """The entries; a torn last line (a crash mid-append: its change
        never happened) is cut from the file."""
        try:
            data = self._entries.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise CheckpointStoreError(f"{self._entries}: {exc.strerror}") from None
        whole = data[: data.rfind(b"\n") + 1]
        if len(whole) != len(data):
            with open(self._entries, "r+b") as handle:
                handle.truncate(len(whole))
                os.fsync(handle.fileno())
        try:
            return whole.decode("ascii").splitlines()
        except UnicodeDecodeError:
            raise CheckpointStoreError(f"{self._entries}: not an entries file") from None

    def append(self, line: str) -> None:
        try:
            fd = os.open(
                self._entries, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
            )
            try:
                os.write(fd, line.encode("ascii") + b"\n")
                if self._durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if self._durable and not self._linked:
                _fsync_dir(self._folder)  # the new file's name is durable too
            self._linked = True
        except OSError as exc:
            raise CheckpointStoreError(f"{self._entries}: {exc.strerror}") from None

    def put(self, digest: str, data: bytes) -> None:
        final = self._folder / KEPT_DIR / digest
        if final.exists():
            return
        tmp = final.with_name(f".{digest}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if self._durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
            if self._durable:
                _fsync_dir(final.parent)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise CheckpointStoreError(f"{final}: {exc.strerror}") from None

    def get(self, digest: str) -> bytes:
        path = self._folder / KEPT_DIR / digest
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CheckpointStoreError(f"{path}: {exc.strerror}") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise CheckpointStoreError(f"{path}: the kept bytes were altered")
        return data

    def close(self) -> None:
        if self._remove:
            shutil.rmtree(self._folder, ignore_errors=True)
