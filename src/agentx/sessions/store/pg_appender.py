"""Appending one session's transcript to PostgreSQL (DEC-STORE-1).

The writing connection holds the session's advisory lock for the session's
life (one writer per session, on any machine). :meth:`PostgresAppender.append`
admits and encodes a batch and holds it in memory after checking, without a
round trip, that the connection is still open (a restarted server fails the
turn in flight, whose result says why). :meth:`PostgresAppender.sync`, the
writer's barrier before any output byte leaves, writes every batch held
since the last sync as one row in one statement: one round trip and one
commit (``synchronous_commit`` on) for every turn that finished since
(group commit). A statement commits whole, so nothing half-written is
ever read back; a commit that fails is remembered, and what it held is
never written later (DEC-STORE-1: a failed sync fails the next turn).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from agentx.sessions.store.files import (
    Admit,
    SessionError,
    SessionNotFound,
    TranscriptRefused,
    encode_entries,
)
from agentx.sessions.store.pg_base import StoreUnavailable, alive, failure

#: The barrier's one statement: the held batches as one row, and the
#: session's change mark for ``--continue``.
_COMMIT = (
    "WITH batch AS (INSERT INTO agentx_batches (session_id, seq, lines)"
    " VALUES (%(sid)s, %(seq)s, %(lines)s))"
    " UPDATE agentx_sessions SET changed = nextval('agentx_change')"
    " WHERE session_id = %(sid)s"
)
LOST = "the connection to the PostgreSQL session store was lost (did the server restart?)"


class PostgresAppender:
    """One session's batches, written on a connection holding its advisory lock.

    Two locks: ``_lock`` guards the held batches and the state (an append
    never waits for a commit in flight), ``_io`` the connection (one
    statement at a time). A failure is remembered: every later append raises
    :class:`SessionError` saying why.
    """

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        session_id: str,
        *,
        admit: Admit | None,
        secrets: frozenset[str],
    ) -> None:
        self._conn = conn
        self._session_id = session_id
        self._admit = admit
        self._secrets = secrets
        self._lock = threading.Lock()
        self._io = threading.Lock()
        self._held: list[str] = []
        self._closed = False
        self._failed: str | None = None
        try:
            row = conn.execute(
                "SELECT (SELECT coalesce(max(seq), 0) FROM agentx_batches WHERE session_id = %s)"
                " FROM agentx_sessions WHERE session_id = %s",
                (session_id, session_id),
            ).fetchone()
        except psycopg.Error as exc:
            raise failure(exc, secrets) from None
        if row is None:
            raise SessionNotFound(session_id)
        self._seq: int = row[0]

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        payload = encode_entries(entries)
        if not entries:
            return
        if self._admit is not None and not self._admit(payload):
            raise TranscriptRefused("an entry holds a configured credential")
        with self._lock:
            self._check()
            # A commit in flight will tell; otherwise look at the socket.
            if self._io.acquire(blocking=False):
                try:
                    if not alive(self._conn):
                        self._failed = f"{LOST}; the session's writes stopped"
                        raise StoreUnavailable(LOST)
                finally:
                    self._io.release()
            self._held.append(payload.decode("utf-8"))

    def _check(self) -> None:
        if self._closed:
            raise SessionError("transcript closed")
        if self._failed is not None:
            raise SessionError(self._failed)

    def sync(self) -> None:
        with self._io:
            with self._lock:
                if self._closed or not self._held or self._failed is not None:
                    self._held.clear()
                    return
                lines = "".join(self._held)
                self._held.clear()
                seq = self._seq + 1
            try:
                self._conn.execute(
                    _COMMIT, {"sid": self._session_id, "seq": seq, "lines": lines}, prepare=True
                )
            except psycopg.Error as exc:
                found = failure(exc, self._secrets)
                with self._lock:
                    self._held.clear()
                    self._failed = f"{found}; the session's writes stopped"
                raise found from None
            with self._lock:
                self._seq = seq

    def close(self) -> None:
        """Write what is held, then release the session (its connection)."""
        try:
            self.sync()
        finally:
            with self._io, self._lock:
                if not self._closed:
                    self._closed = True
                    self._conn.close()
