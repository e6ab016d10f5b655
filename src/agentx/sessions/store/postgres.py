"""The PostgreSQL session store, through psycopg 3 (DEC-STORE-1).

Imported only when a ``postgresql://`` store is chosen; the tables and
connections are :mod:`agentx.sessions.store.pg_base`'s, the writer
:mod:`agentx.sessions.store.pg_appender`'s.

One writer per session: the appender's own connection holds a session-level
advisory lock on the session id (:func:`~agentx.sessions.store.pg_base.lock_key`)
for the session's life, on any machine; losing the connection releases it.
Reads take one snapshot (repeatable read) for the header and the batches.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import psycopg

from agentx.messages.frozen import FrozenDict
from agentx.sessions.store.base import append_synced
from agentx.sessions.store.errors import SessionCorrupt, SessionExists, SessionNotFound
from agentx.sessions.store.header import (
    SessionHeader,
    _header_bytes,
    _parse_header,
    validate_session_id,
)
from agentx.sessions.store.jsonl import Admit, Transcript, parse_transcript
from agentx.sessions.store.pg_appender import PostgresAppender
from agentx.sessions.store.pg_base import (
    alive,
    failure,
    locked_connection,
    open_connection,
    release,
    url_secrets,
)

__all__ = ["PostgresAppender", "PostgresStore"]


def _transcript(
    session_id: str, header_text: str, batches: Sequence[tuple[int, str]]
) -> Transcript:
    """The session read back; a row that is not whole lines of JSON objects
    is :class:`SessionCorrupt` naming the session and the row's ``seq``."""
    header = _parse_header(header_text.encode("utf-8"), session_id)
    entries: list[FrozenDict] = []
    rows: list[tuple[int, int]] = []
    for seq, lines in batches:
        where = f"session {session_id}, the row with seq {seq}"
        try:
            found, intact = parse_transcript(lines.encode("utf-8"))
        except SessionCorrupt as exc:
            raise SessionCorrupt(f"{where}: {exc}") from None
        if intact is not None:
            raise SessionCorrupt(f"{where}: a stored batch is not whole lines")
        entries.extend(found)
        rows.append((seq, len(found)))
    return Transcript(header=header, entries=tuple(entries), torn=False, rows=tuple(rows))


class PostgresStore:
    """Sessions in the PostgreSQL database of ``url`` (a ``SessionStore``)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._secrets = url_secrets(url)
        self._conn = open_connection(url, self._secrets)
        #: Writer connections taken by :meth:`open`, handed to :meth:`appender`.
        self._held: dict[str, psycopg.Connection[Any]] = {}
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        return "the PostgreSQL session store"

    @property
    def secrets(self) -> frozenset[str]:
        return self._secrets

    def _shared(self) -> psycopg.Connection[Any]:
        """The readers' connection (under ``_lock``), opened again after the
        server closed it (a restart)."""
        if not alive(self._conn):
            self._conn.close()
            self._conn = open_connection(self._url, self._secrets)
        return self._conn

    def create(self, header: SessionHeader) -> None:
        validate_session_id(header.session_id)
        try:
            with self._lock:
                row = (
                    self._shared()
                    .execute(
                        "INSERT INTO agentx_sessions (session_id, header, cwd, changed)"
                        " VALUES (%s, %s, %s, nextval('agentx_change'))"
                        " ON CONFLICT (session_id) DO NOTHING RETURNING 1",
                        (header.session_id, _header_bytes(header).decode("utf-8"), header.cwd),
                    )
                    .fetchone()
                )
        except psycopg.Error as exc:
            raise failure(exc, self._secrets) from None
        if row is None:
            raise SessionExists("session already exists")

    def _read(self, conn: psycopg.Connection[Any], session_id: str) -> Transcript:
        validate_session_id(session_id)
        try:
            with conn.transaction():
                # One snapshot for the header and the batches.
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                row = conn.execute(
                    "SELECT header FROM agentx_sessions WHERE session_id = %s", (session_id,)
                ).fetchone()
                if row is None:
                    raise SessionNotFound(session_id)
                cursor = conn.execute(
                    "SELECT seq, lines FROM agentx_batches WHERE session_id = %s ORDER BY seq",
                    (session_id,),
                )
                return _transcript(session_id, row[0], [(seq, lines) for seq, lines in cursor])
        except psycopg.Error as exc:
            raise failure(exc, self._secrets) from None

    def read(self, session_id: str) -> Transcript:
        with self._lock:
            return self._read(self._shared(), session_id)

    def _locked_connection(self, session_id: str) -> psycopg.Connection[Any]:
        return locked_connection(self._url, self._secrets, session_id)

    def open(self, session_id: str) -> Transcript:
        """Take the session's writer lock and read it; the locked connection
        is kept for :meth:`appender`, so no other writer can come between."""
        with self._lock:
            conn = self._held.pop(session_id, None) or self._locked_connection(session_id)
            try:
                transcript = self._read(conn, session_id)
            except BaseException:
                release(conn, session_id)
                raise
            self._held[session_id] = conn
            return transcript

    def appender(self, session_id: str, *, admit: Admit | None = None) -> PostgresAppender:
        with self._lock:
            conn = self._held.pop(session_id, None) or self._locked_connection(session_id)
        try:
            return PostgresAppender(
                conn,
                session_id,
                admit=admit,
                secrets=self._secrets,
                relock=partial(locked_connection, self._url, self._secrets, session_id),
            )
        except BaseException:
            release(conn, session_id)
            raise

    def append(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        if not entries:
            validate_session_id(session_id)
            return
        append_synced(self.appender(session_id), entries)

    def newest(self, cwd: str) -> str | None:
        try:
            with self._lock:
                row = (
                    self._shared()
                    .execute(
                        "SELECT session_id FROM agentx_sessions WHERE cwd = %s"
                        " ORDER BY changed DESC LIMIT 1",
                        (cwd,),
                    )
                    .fetchone()
                )
        except psycopg.Error as exc:
            raise failure(exc, self._secrets) from None
        return None if row is None else str(row[0])

    def headers(self) -> tuple[SessionHeader, ...]:
        try:
            with self._lock:
                rows = (
                    self._shared()
                    .execute("SELECT session_id, header FROM agentx_sessions")
                    .fetchall()
                )
        except psycopg.Error as exc:
            raise failure(exc, self._secrets) from None
        found = [_parse_header(text.encode("utf-8"), str(sid)) for sid, text in rows]
        return tuple(sorted(found, key=lambda h: (h.created_at, h.session_id)))

    def delete(self, session_id: str) -> None:
        """Delete the session's row and (by cascade) its batches in one
        transaction, holding its writer lock."""
        conn = self._locked_connection(session_id)
        try:
            with conn.transaction():
                row = conn.execute(
                    "DELETE FROM agentx_sessions WHERE session_id = %s RETURNING 1", (session_id,)
                ).fetchone()
        except psycopg.Error as exc:
            raise failure(exc, self._secrets) from None
        finally:
            release(conn, session_id)
        if row is None:
            raise SessionNotFound(session_id)

    def close(self) -> None:
        with self._lock:
            for session_id, conn in self._held.items():
                release(conn, session_id)
            self._held.clear()
            self._conn.close()
