"""The PostgreSQL session store, through psycopg 3 (DEC-STORE-1).

Imported only when a ``postgresql://`` store is chosen. Tables (schema
version :data:`SCHEMA_VERSION`, recorded in ``agentx_schema``; created on
first use under a transaction advisory lock, a newer version than this one
refuses to start):

- ``agentx_sessions``: one row per session, the header document exactly as
  ``header.json`` holds it, the ``cwd`` (``--continue``) and ``changed``
  (a sequence value taken by every append: which session changed last);
- ``agentx_batches``: one row per appended batch, the batch's
  ``\\n``-terminated lines exactly as the file store writes them; read back
  in ``seq`` order and parsed by the same strict reader.

One writer per session: the appender's own connection holds a session-level
advisory lock on the session id (:func:`lock_key`) for the session's life,
on any machine; losing the connection releases it. Appends run inside one
open transaction, each batch in a savepoint (a refused batch leaves the
earlier ones intact); :meth:`PostgresAppender.sync` commits with
``synchronous_commit`` on, so every batch appended since the last sync
shares one commit (group commit). A transaction commits whole, so nothing
half-written is ever read back.

Diagnostics never carry the URL or its password (DEC-AUTH-3):
:func:`redact` removes them from any server or libpq message.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import psycopg

from agentx.sessions.store.files import (
    Admit,
    SessionBusy,
    SessionCorrupt,
    SessionError,
    SessionExists,
    SessionHeader,
    SessionNotFound,
    Transcript,
    TranscriptRefused,
    _header_bytes,
    _parse_header,
    encode_entries,
    parse_transcript,
    validate_session_id,
)

#: The schema this agentx reads and writes.
SCHEMA_VERSION = 1
#: The transaction advisory lock that serialises schema creation.
_SCHEMA_LOCK = 0x61676E7478  # "agntx"
CONNECT_TIMEOUT_S = 10

_SCHEMA = (
    "CREATE TABLE agentx_sessions ("
    " session_id uuid PRIMARY KEY,"
    " header text NOT NULL,"
    " cwd text,"
    " changed bigint NOT NULL)",
    "CREATE INDEX agentx_sessions_cwd ON agentx_sessions (cwd, changed)",
    "CREATE TABLE agentx_batches ("
    " session_id uuid NOT NULL REFERENCES agentx_sessions ON DELETE CASCADE,"
    " seq bigint NOT NULL,"
    " lines text NOT NULL,"
    " PRIMARY KEY (session_id, seq))",
    "CREATE SEQUENCE agentx_change",
)


class StoreUnavailable(SessionError):
    """The database cannot be reached or refused a statement; the message is
    credential-free."""


class SchemaTooNew(SessionError):
    """The database holds a schema newer than this agentx knows."""


def url_secrets(url: str) -> frozenset[str]:
    """The literals of ``url`` that are credentials (DEC-AUTH-3): the whole
    URL and its password, raw and percent-decoded."""
    found = {url}
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        found |= {password, unquote(password)}
    return frozenset(literal for literal in found if literal)


def redact(message: str, secrets: Iterable[str]) -> str:
    """The first line of ``message`` with every secret replaced by ``***``."""
    line = message.strip().splitlines()[0] if message.strip() else "unknown error"
    for secret in sorted(secrets, key=len, reverse=True):
        line = line.replace(secret, "***")
    return line


def lock_key(session_id: str) -> int:
    """The advisory lock key of a session: its UUID folded to a signed 64-bit int."""
    value = uuid.UUID(session_id).int
    folded = (value >> 64) ^ (value & 0xFFFF_FFFF_FFFF_FFFF)
    return folded - (1 << 64) if folded >= 1 << 63 else folded


def _connect(url: str, secrets: frozenset[str]) -> psycopg.Connection[Any]:
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        conn.execute("SET synchronous_commit = on")
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"cannot connect to the PostgreSQL session store: {redact(str(exc), secrets)}"
        ) from None
    return conn


def _failure(exc: psycopg.Error, secrets: frozenset[str]) -> StoreUnavailable:
    return StoreUnavailable(f"the PostgreSQL session store failed: {redact(str(exc), secrets)}")


def _ensure_schema(conn: psycopg.Connection[Any]) -> None:
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS agentx_schema (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM agentx_schema").fetchone()
        version = row[0] if row is not None else None
        if version is None:
            for statement in _SCHEMA:
                conn.execute(statement.encode())
            conn.execute("INSERT INTO agentx_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        elif version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"the PostgreSQL session store has schema version {version}; "
                f"this agentx knows version {SCHEMA_VERSION} (upgrade agentx)"
            )


def _transcript(session_id: str, header_text: str, batches: Iterable[str]) -> Transcript:
    header = _parse_header(header_text.encode("utf-8"), session_id)
    data = "".join(batches).encode("utf-8")
    entries, intact = parse_transcript(data)
    if intact is not None:
        raise SessionCorrupt(f"session {session_id}: a stored batch is not whole lines")
    return Transcript(header=header, entries=entries, torn=False)


class PostgresStore:
    """Sessions in the PostgreSQL database of ``url`` (a ``SessionStore``)."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._secrets = url_secrets(url)
        self._conn = _connect(url, self._secrets)
        #: Writer connections taken by :meth:`open`, handed to :meth:`appender`.
        self._held: dict[str, psycopg.Connection[Any]] = {}
        self._lock = threading.Lock()
        try:
            _ensure_schema(self._conn)
        except psycopg.Error as exc:
            self._conn.close()
            raise _failure(exc, self._secrets) from None
        except BaseException:
            self._conn.close()
            raise

    @property
    def location(self) -> str:
        return "the PostgreSQL session store"

    @property
    def secrets(self) -> frozenset[str]:
        return self._secrets

    def create(self, header: SessionHeader) -> None:
        validate_session_id(header.session_id)
        try:
            row = self._conn.execute(
                "INSERT INTO agentx_sessions (session_id, header, cwd, changed)"
                " VALUES (%s, %s, %s, nextval('agentx_change'))"
                " ON CONFLICT (session_id) DO NOTHING RETURNING 1",
                (header.session_id, _header_bytes(header).decode("utf-8"), header.cwd),
            ).fetchone()
        except psycopg.Error as exc:
            raise _failure(exc, self._secrets) from None
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
                    "SELECT lines FROM agentx_batches WHERE session_id = %s ORDER BY seq",
                    (session_id,),
                )
                return _transcript(session_id, row[0], (batch for (batch,) in cursor))
        except psycopg.Error as exc:
            raise _failure(exc, self._secrets) from None

    def read(self, session_id: str) -> Transcript:
        with self._lock:
            return self._read(self._conn, session_id)

    def _locked_connection(self, session_id: str) -> psycopg.Connection[Any]:
        validate_session_id(session_id)
        conn = _connect(self._url, self._secrets)
        try:
            row = conn.execute(
                "SELECT pg_try_advisory_lock(%s)", (lock_key(session_id),)
            ).fetchone()
        except psycopg.Error as exc:
            conn.close()
            raise _failure(exc, self._secrets) from None
        if row is None or not row[0]:
            conn.close()
            raise SessionBusy("the session is open in another agentx process")
        return conn

    def open(self, session_id: str) -> Transcript:
        """Take the session's writer lock and read it; the locked connection
        is kept for :meth:`appender`, so no other writer can come between."""
        with self._lock:
            conn = self._held.pop(session_id, None) or self._locked_connection(session_id)
            try:
                transcript = self._read(conn, session_id)
            except BaseException:
                conn.close()
                raise
            self._held[session_id] = conn
            return transcript

    def appender(self, session_id: str, *, admit: Admit | None = None) -> PostgresAppender:
        with self._lock:
            conn = self._held.pop(session_id, None) or self._locked_connection(session_id)
        try:
            return PostgresAppender(conn, session_id, admit=admit, secrets=self._secrets)
        except BaseException:
            conn.close()
            raise

    def append(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        if not entries:
            validate_session_id(session_id)
            return
        appender = self.appender(session_id)
        try:
            appender.append(entries)
            appender.sync()
        finally:
            appender.close()

    def newest(self, cwd: str) -> str | None:
        try:
            with self._lock:
                row = self._conn.execute(
                    "SELECT session_id FROM agentx_sessions WHERE cwd = %s"
                    " ORDER BY changed DESC LIMIT 1",
                    (cwd,),
                ).fetchone()
        except psycopg.Error as exc:
            raise _failure(exc, self._secrets) from None
        return None if row is None else str(row[0])

    def headers(self) -> tuple[SessionHeader, ...]:
        try:
            with self._lock:
                rows = self._conn.execute(
                    "SELECT session_id, header FROM agentx_sessions"
                ).fetchall()
        except psycopg.Error as exc:
            raise _failure(exc, self._secrets) from None
        found = [_parse_header(text.encode("utf-8"), str(sid)) for sid, text in rows]
        return tuple(sorted(found, key=lambda h: (h.created_at, h.session_id)))

    def close(self) -> None:
        with self._lock:
            for conn in self._held.values():
                conn.close()
            self._held.clear()
            self._conn.close()


class PostgresAppender:
    """One session's batches, appended on a connection holding its advisory lock.

    :meth:`append` writes a batch in a savepoint of the open transaction
    (under the appender's lock: a sync never commits half a batch);
    :meth:`sync` commits every batch since the last, one commit for all.
    A failed commit or a lost connection is remembered: every later append
    raises :class:`SessionError` (DEC-STORE-1: a failed sync fails the next
    turn), and the advisory lock went with the connection.
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
        self._in_transaction = False
        self._closed = False
        self._failed: str | None = None
        try:
            exists = conn.execute(
                "SELECT 1 FROM agentx_sessions WHERE session_id = %s", (session_id,)
            ).fetchone()
            row = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM agentx_batches WHERE session_id = %s",
                (session_id,),
            ).fetchone()
        except psycopg.Error as exc:
            raise _failure(exc, secrets) from None
        if exists is None:
            raise SessionNotFound(session_id)
        self._seq: int = row[0] if row is not None else 0

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        payload = encode_entries(entries)
        if not entries:
            return
        if self._admit is not None and not self._admit(payload):
            raise TranscriptRefused("an entry holds a configured credential")
        lines = payload.decode("utf-8")
        with self._lock:
            if self._closed:
                raise SessionError("transcript closed")
            if self._failed is not None:
                raise SessionError(self._failed)
            try:
                if not self._in_transaction:
                    self._conn.execute("BEGIN")
                    self._in_transaction = True
                self._conn.execute("SAVEPOINT batch")
            except psycopg.Error as exc:
                raise self._fail(exc) from None
            try:
                self._conn.execute(
                    "WITH batch AS (INSERT INTO agentx_batches (session_id, seq, lines)"
                    " VALUES (%s, %s, %s))"
                    " UPDATE agentx_sessions SET changed = nextval('agentx_change')"
                    " WHERE session_id = %s",
                    (self._session_id, self._seq + 1, lines, self._session_id),
                )
                self._conn.execute("RELEASE SAVEPOINT batch")
            except psycopg.Error as exc:
                self._undo(exc)
            self._seq += 1

    def _undo(self, exc: psycopg.Error) -> None:
        """Take back a batch that failed: earlier batches stay, or the whole
        session fails if the connection is gone."""
        if not self._conn.broken:
            try:
                self._conn.execute("ROLLBACK TO SAVEPOINT batch")
            except psycopg.Error as again:
                raise self._fail(again) from None
            raise _failure(exc, self._secrets) from None
        raise self._fail(exc) from None

    def _fail(self, exc: psycopg.Error) -> StoreUnavailable:
        failure = _failure(exc, self._secrets)
        self._failed = f"{failure}; the session's writes stopped"
        return failure

    def sync(self) -> None:
        with self._lock:
            if self._closed or not self._in_transaction:
                return
            self._in_transaction = False
            if self._failed is not None:
                raise SessionError(self._failed)
            try:
                self._conn.execute("COMMIT")
            except psycopg.Error as exc:
                raise self._fail(exc) from None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._in_transaction and self._failed is None:
                    self._conn.execute("COMMIT")
            except psycopg.Error as exc:
                raise self._fail(exc) from None
            finally:
                self._conn.close()
