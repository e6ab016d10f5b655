"""A session's file checkpoints in the PostgreSQL session store
(DEC-PROFILE-2, DEC-STORE-1; imported only for a ``postgresql://`` store).

The entries are rows of ``agentx_checkpoints`` (session, seq, entry line),
the kept bytes rows of ``agentx_checkpoint_files`` (session, sha256, data);
both go with the session's row when it is deleted. Each statement commits
on its own with ``synchronous_commit`` on (:mod:`agentx.sessions.store.pg_base`),
so an entry is durable before the change it protects. One connection of its
own, used under the keeper's lock; one found closed is opened again. The
session's writer lock is the transcript's; nobody else writes these rows.
"""

from __future__ import annotations

import hashlib
from typing import Any

import psycopg

from agentx.checkpoints.stores import CheckpointStoreError
from agentx.sessions.store.pg_base import alive, failure, open_connection, url_secrets


class PostgresCheckpoints:
    def __init__(self, url: str, session_id: str) -> None:
        self._url = url
        self._session = session_id
        self._secrets = url_secrets(url)
        try:
            self._conn = open_connection(url, self._secrets)
        except Exception as exc:
            raise CheckpointStoreError(str(exc)) from None
        self._seq = 0

    def _execute(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            if not alive(self._conn):
                self._conn.close()
                self._conn = open_connection(self._url, self._secrets)
            cursor = self._conn.execute(query.encode(), params)
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.Error as exc:
            raise CheckpointStoreError(str(failure(exc, self._secrets))) from None
        except Exception as exc:  # open_connection's own, credential-free errors
            raise CheckpointStoreError(str(exc)) from None

    def load(self) -> list[str]:
        rows = self._execute(
            "SELECT seq, entry FROM agentx_checkpoints WHERE session_id = %s ORDER BY seq",
            (self._session,),
        )
        self._seq = rows[-1][0] + 1 if rows else 0
        return [str(entry) for _, entry in rows]

    def append(self, line: str) -> None:
        self._execute(
            "INSERT INTO agentx_checkpoints (session_id, seq, entry) VALUES (%s, %s, %s)",
            (self._session, self._seq, line),
        )
        self._seq += 1

    def put(self, digest: str, data: bytes) -> None:
        self._execute(
            "INSERT INTO agentx_checkpoint_files (session_id, sha256, data) VALUES (%s, %s, %s)"
            " ON CONFLICT (session_id, sha256) DO NOTHING",
            (self._session, digest, data),
        )

    def get(self, digest: str) -> bytes:
        rows = self._execute(
            "SELECT data FROM agentx_checkpoint_files WHERE session_id = %s AND sha256 = %s",
            (self._session, digest),
        )
        if not rows:
            raise CheckpointStoreError("a kept file is missing from the session store")
        data = bytes(rows[0][0])
        if hashlib.sha256(data).hexdigest() != digest:
            raise CheckpointStoreError("a kept file in the session store was altered")
        return data

    def close(self) -> None:
        self._conn.close()
