"""The home's blob store, opened at start and loaded at its first use
(DEC-HOME-1 ``blobs/``, start-up DEC-CLI-3).

Opening the store is crash recovery and happens at start, as before: its
``sha256`` folder is made 0700 and the partial files of writers that are gone
are removed (:func:`open_objects`). The store itself
(:class:`~agentx.media.blobs.BlobStore`: its index, digests and atomic
installs) is imported and built by the first call that needs it, once, under
a lock, as several actor threads may ask first: a text session never loads it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from agentx.config.home import private_dirs, sweep_stale

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


class LazyBlobStore:
    """The :class:`~agentx.media.blobs.Blobs` interface of a
    :class:`~agentx.media.blobs.BlobStore` at ``root``; see the module docstring."""

    def __init__(self, root: Path) -> None:
        open_objects(root)
        self._root = root
        self._lock = threading.Lock()
        self._store: BlobStore | None = None

    def _opened(self) -> BlobStore:
        store = self._store
        if store is None:
            with self._lock:
                if self._store is None:
                    from agentx.media.blobs import BlobStore  # noqa: PLC0415 - module docstring

                    self._store = BlobStore(self._root, opened=True)
                store = self._store
        return store

    @property
    def max_bytes(self) -> int:
        return self._opened().max_bytes

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
