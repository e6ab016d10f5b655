"""Attachment blobs in the PostgreSQL session store (DEC-STORE-1, WIRE-022).

The same content-addressed interface as the home's blob files
(:class:`agentx.media.blobs.Blobs`): a blob is the row of ``agentx_blobs`` under
the SHA-256 of its bytes, written in one committed statement
(``synchronous_commit`` on) before its storage ID is handed out, so a
manifest never names a blob that is not durable, and a session resumed on
another machine (another ``$AGENTX_HOME``, the same database) reads its
attachments back. A blob read back is checked against its name.

The unique-bytes bound (WIRE-018, ``storage_full``) counts the bytes this
process added to the database: the database is shared by every
conversation of a service, whose size is the operator's to bound, and a
blob already stored costs nothing. One connection, used under a lock (the
upload manager, the turn and MCP tools all store blobs); a connection found
closed (a restarted server) is opened again before the next statement.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import psycopg

from agentx.media.blobs import (
    STORAGE_ID_PREFIX,
    BlobNotFound,
    StorageFull,
    StoredBlob,
    parse_storage_id,
)
from agentx.messages.attachment_limits import MAX_STORAGE_BYTES
from agentx.sessions.store.pg_base import alive, failure, open_connection, url_secrets


class PostgresBlobStore:
    """Content-addressed, deduplicating, bounded blobs in one database."""

    def __init__(self, url: str, *, max_bytes: int = MAX_STORAGE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._url = url
        self._secrets = url_secrets(url)
        self._lock = threading.Lock()
        self._conn = open_connection(url, self._secrets)
        #: hex -> size of every blob known to be stored.
        self._known: dict[str, int] = {}
        self._used = 0

    @property
    def used_bytes(self) -> int:
        return self._used

    def _execute(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                if not alive(self._conn):
                    self._conn.close()
                    self._conn = open_connection(self._url, self._secrets)
                cursor = self._conn.execute(query, params)
                return cursor.fetchall() if cursor.description is not None else []
            except psycopg.Error as exc:
                raise failure(exc, self._secrets) from None

    def _size(self, hexdigest: str) -> int | None:
        if hexdigest in self._known:
            return self._known[hexdigest]
        rows = self._execute(
            "SELECT octet_length(data) FROM agentx_blobs WHERE sha256 = %s", (hexdigest,)
        )
        if rows:
            self._known[hexdigest] = rows[0][0]
            return int(rows[0][0])
        return None

    def __contains__(self, storage_id: object) -> bool:
        if not isinstance(storage_id, str):
            return False
        hexdigest = parse_storage_id(storage_id)
        return hexdigest is not None and self._size(hexdigest) is not None

    def put_bytes(self, data: bytes) -> StoredBlob:
        """Store ``data`` (deduplicated, committed before this returns)."""
        hexdigest = hashlib.sha256(data).hexdigest()
        if self._size(hexdigest) is None:
            if self._used + len(data) > self.max_bytes:
                raise StorageFull(
                    f"{len(data)} more bytes would pass the {self.max_bytes} byte bound"
                )
            self._execute(
                "INSERT INTO agentx_blobs (sha256, data) VALUES (%s, %s)"
                " ON CONFLICT (sha256) DO NOTHING",
                (hexdigest, data),
            )
            self._known[hexdigest] = len(data)
            self._used += len(data)
        return StoredBlob(
            storage_id=STORAGE_ID_PREFIX + hexdigest, sha256=hexdigest, size_bytes=len(data)
        )

    def put_file(self, src: Path) -> StoredBlob:
        """Store a copy of the file at ``src`` (an admitted attachment, at most
        the 20 MiB item bound, MOD-083: read whole)."""
        return self.put_bytes(src.read_bytes())

    def read(self, storage_id: str) -> bytes:
        """The stored bytes; :class:`BlobNotFound` for none, or for bytes that
        no longer match their name."""
        hexdigest = parse_storage_id(storage_id)
        if hexdigest is None:
            raise BlobNotFound(storage_id)
        rows = self._execute("SELECT data FROM agentx_blobs WHERE sha256 = %s", (hexdigest,))
        if not rows:
            raise BlobNotFound(storage_id)
        data = bytes(rows[0][0])
        if hashlib.sha256(data).hexdigest() != hexdigest:
            raise BlobNotFound(storage_id)
        return data

    def close(self) -> None:
        with self._lock:
            self._conn.close()
