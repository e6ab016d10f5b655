"""The content-addressed blob store (DEC-HOME-1 ``blobs/``, WIRE-018's
512 MiB unique-blob bound, WIRE-022's opaque ``storage_id``).

A blob is named by the SHA-256 of its stored bytes and lives at
``<root>/sha256/<hex>``. Writes are crash-safe: the bytes go to a temporary
file in the same directory, are fsynced, renamed over the final name with
``os.replace`` and the directory is fsynced, so a kill at any point leaves
either no blob or the whole blob. Temporary files carry their writer's PID;
opening the store removes those whose process is gone, so a store shared by
several agentx processes never loses another live writer's file.

The unique-bytes bound counts every distinct blob once and is checked before
any byte is written (``storage_full``). It is accounted in this process from
the directory contents seen at open.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Protocol

from msgspec import Struct

from agentx.config.home import fsync_dir
from agentx.media.deferred import OBJECTS_DIR_NAME, PARTIAL_PREFIX, open_objects
from agentx.messages.attachment_limits import MAX_STORAGE_BYTES

STORAGE_ID_PREFIX = "blob_sha256_"
_STORAGE_ID = re.compile(r"blob_sha256_([0-9a-f]{64})")
_HEX_NAME = re.compile(r"[0-9a-f]{64}")
_COPY_BLOCK = 1024 * 1024

#: Writes a blob's bytes into the open temporary file.
_Writer = Callable[[IO[bytes]], object]


class StorageFull(Exception):
    """Storing the blob would pass the unique-bytes bound (``storage_full``)."""


class BlobNotFound(KeyError):
    """No blob has this storage ID (or the ID is malformed)."""


class StoredBlob(Struct, frozen=True, kw_only=True):
    """What a manifest needs about a stored blob; never its path (WIRE-022)."""

    storage_id: str
    sha256: str
    size_bytes: int


class Blobs(Protocol):
    """Where attachment blobs live: :class:`BlobStore` (the home's files) or
    the PostgreSQL session store's (DEC-STORE-1); the same content-addressed
    interface either way."""

    @property
    def max_bytes(self) -> int:
        """The unique-bytes bound (WIRE-018)."""

    @property
    def used_bytes(self) -> int:
        """Unique stored bytes counted against :attr:`max_bytes`."""

    def __contains__(self, storage_id: object) -> bool:
        """Whether a blob has this storage ID."""

    def put_bytes(self, data: bytes) -> StoredBlob:
        """Store ``data`` durably (deduplicated); raises :class:`StorageFull`."""

    def put_file(self, src: Path) -> StoredBlob:
        """Store a copy of the file at ``src``; raises :class:`StorageFull`."""

    def read(self, storage_id: str) -> bytes:
        """The stored bytes; raises :class:`BlobNotFound`."""


def parse_storage_id(storage_id: str) -> str | None:
    """The hex SHA-256 a storage ID names, or ``None`` for a malformed one."""
    match = _STORAGE_ID.fullmatch(storage_id)
    return None if match is None else match.group(1)


def _file_sha256(path: Path) -> tuple[str, int]:
    import hashlib  # noqa: PLC0415 - OpenSSL loads with the first blob (DEC-CLI-3)

    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while block := f.read(_COPY_BLOCK):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


class BlobStore:
    """Content-addressed, deduplicating, bounded, crash-safe blob storage."""

    def __init__(
        self, root: Path, *, max_bytes: int = MAX_STORAGE_BYTES, opened: bool = False
    ) -> None:
        """``opened``: the folder was made and swept already
        (:class:`~agentx.media.deferred.LazyBlobStore` opens it at start)."""
        self.max_bytes = max_bytes
        self._objects = root / OBJECTS_DIR_NAME if opened else open_objects(root)
        self._lock = threading.Lock()
        self._index: dict[str, int] | None = None
        self._used = 0

    @property
    def _sizes(self) -> dict[str, int]:
        """Each stored blob's size, read on first use: a session that stores
        and reads no attachment never stats the store (start-up, DEC-CLI-3)."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    sizes = {
                        entry.name: entry.stat().st_size
                        for entry in self._objects.iterdir()
                        if _HEX_NAME.fullmatch(entry.name)
                    }
                    self._used = sum(sizes.values())
                    self._index = sizes
                index = self._index
        return index

    @property
    def used_bytes(self) -> int:
        """Unique stored bytes (each distinct blob counted once)."""
        _ = self._sizes
        return self._used

    def __contains__(self, storage_id: object) -> bool:
        if not isinstance(storage_id, str):
            return False
        match = _STORAGE_ID.fullmatch(storage_id)
        return match is not None and match.group(1) in self._sizes

    def put_bytes(self, data: bytes) -> StoredBlob:
        """Store ``data`` (deduplicated); raises :class:`StorageFull`."""
        import hashlib  # noqa: PLC0415 - OpenSSL loads with the first blob (DEC-CLI-3)

        hexdigest = hashlib.sha256(data).hexdigest()
        if hexdigest not in self._sizes:
            self._check_room(len(data))
            self._install(hexdigest, lambda out: out.write(data))
        return self._stored(hexdigest)

    def put_file(self, src: Path) -> StoredBlob:
        """Store a copy of the file at ``src``, streamed in 1 MiB blocks (memory
        stays bounded); raises :class:`StorageFull`."""
        hexdigest, size = _file_sha256(src)
        if hexdigest not in self._sizes:
            self._check_room(size)

            def copy(out: IO[bytes]) -> None:
                with src.open("rb") as f:
                    while block := f.read(_COPY_BLOCK):
                        out.write(block)

            self._install(hexdigest, copy)
        return self._stored(hexdigest)

    def read(self, storage_id: str) -> bytes:
        """The stored bytes; raises :class:`BlobNotFound`."""
        match = _STORAGE_ID.fullmatch(storage_id)
        if match is None or match.group(1) not in self._sizes:
            raise BlobNotFound(storage_id)
        return (self._objects / match.group(1)).read_bytes()

    def _check_room(self, size: int) -> None:
        if self.used_bytes + size > self.max_bytes:
            raise StorageFull(f"{size} more bytes would pass the {self.max_bytes} byte bound")

    def _install(self, hexdigest: str, write: _Writer) -> None:
        """Temp file in the same directory, fsync, atomic rename, fsync dir."""
        import tempfile  # noqa: PLC0415 - loaded with the first blob (DEC-CLI-3)

        with tempfile.NamedTemporaryFile(
            dir=self._objects, prefix=f"{PARTIAL_PREFIX}{os.getpid()}-", delete=False
        ) as out:
            temp = Path(out.name)
            try:
                write(out)
                out.flush()
                os.fsync(out.fileno())
            except BaseException:
                temp.unlink(missing_ok=True)
                raise
        try:
            os.replace(temp, self._objects / hexdigest)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        fsync_dir(self._objects)
        size = (self._objects / hexdigest).stat().st_size
        self._sizes[hexdigest] = size
        self._used += size

    def _stored(self, hexdigest: str) -> StoredBlob:
        return StoredBlob(
            storage_id=STORAGE_ID_PREFIX + hexdigest,
            sha256=hexdigest,
            size_bytes=self._sizes[hexdigest],
        )
