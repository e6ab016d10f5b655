"""What a session holds of media from its start but loads at first use
(start-up, DEC-CLI-3): the home's blob store and the MOD-A14B verdict.

The blob store (DEC-HOME-1 ``blobs/``): opening it is crash recovery and
happens at start, as before: its ``sha256`` folder is made 0700 and the
partial files of writers that are gone are removed (:func:`open_objects`).
The store itself
(:class:`~agentx.media.blobs.BlobStore`: its index, digests and atomic
installs) is imported and built by the first call that needs it, once, under
a lock, as several actor threads may ask first: a text session never loads it.

The MOD-A14B verdict (:class:`RuntimeVerdict`) is decided once, when an
attachment first needs it, by :func:`agentx.media.runtime_check.runtime_problem`,
imported then.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from agentx.config.home import private_dirs, sweep_stale
from agentx.diagnostics import logger
from agentx.once import Once

if TYPE_CHECKING:
    from agentx.media.blobs import BlobStore, StoredBlob

#: Where the blobs live under the store's root, named by their SHA-256.
OBJECTS_DIR_NAME = "sha256"
#: A blob being written: ``.partial-<pid>-...`` (DEC-HOME-1 temporary entries).
PARTIAL_PREFIX = ".partial-"


def open_objects(root: Path) -> Path:
    """Make the store's objects folder (0700, the home included) and remove
    the partial files of writers that are gone; returns the folder."""
    objects = private_dirs(root / OBJECTS_DIR_NAME)
    sweep_stale(objects, PARTIAL_PREFIX)
    return objects


def _blob_store(root: Path) -> BlobStore:
    from agentx.media.blobs import BlobStore  # noqa: PLC0415 - module docstring

    return BlobStore(root, opened=True)


class LazyBlobStore:
    """The :class:`~agentx.media.blobs.Blobs` interface of a
    :class:`~agentx.media.blobs.BlobStore` at ``root``; see the module docstring."""

    def __init__(self, root: Path) -> None:
        open_objects(root)
        self._store = Once(lambda: _blob_store(root))

    def _opened(self) -> BlobStore:
        return self._store.get()

    @property
    def max_bytes(self) -> int:
        return self._opened().max_bytes

    @max_bytes.setter
    def max_bytes(self, bound: int) -> None:
        # An attribute of every store, as of BlobStore (WIRE-018's bound).
        self._opened().max_bytes = bound

    @property
    def used_bytes(self) -> int:
        return self._opened().used_bytes

    def __contains__(self, storage_id: object) -> bool:
        return storage_id in self._opened()

    def put_bytes(self, data: bytes) -> StoredBlob:
        return self._opened().put_bytes(data)

    def put_file(self, src: Path) -> StoredBlob:
        return self._opened().put_file(src)

    def read(self, storage_id: str) -> bytes:
        return self._opened().read(storage_id)


class RuntimeVerdict:
    """MOD-A14B for one session, decided once, when an attachment first needs it."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._lock = threading.Lock()
        self._decided = False
        self._problem: str | None = None

    def problem(self) -> str | None:
        """``None`` when attachments may be admitted, else why not (the first
        call runs the check and logs one WARN line when it fails)."""
        with self._lock:
            if not self._decided:
                from agentx.media.runtime_check import runtime_problem  # noqa: PLC0415 - DEC-CLI-3

                self._problem = runtime_problem(self._home)
                self._decided = True
                if self._problem is not None:
                    logger.warning("attachments disabled: {}", self._problem)
            return self._problem
