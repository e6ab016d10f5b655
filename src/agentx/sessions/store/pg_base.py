"""PostgreSQL connections and schema of the session store (DEC-STORE-1).

Imported only when a ``postgresql://`` store is chosen. Tables (schema
version :data:`SCHEMA_VERSION`, recorded in ``agentx_schema``; created or
upgraded on first use under a transaction advisory lock; a newer version
than this one refuses to start, exit 2):

- ``agentx_sessions``: one row per session, the header document exactly as
  ``header.json`` holds it, the ``cwd`` (``--continue``) and ``changed``
  (a sequence value taken by every commit: which session changed last);
- ``agentx_batches``: one row per committed group of batches, its
  ``\\n``-terminated lines exactly as the file store writes them; read back
  in ``seq`` order and parsed by the same strict reader;
- ``agentx_blobs`` (version 2): the content-addressed attachment blobs, the
  bytes under the SHA-256 of the bytes;
- ``agentx_checkpoints`` and ``agentx_checkpoint_files`` (version 3): a
  session's file checkpoint entries and kept bytes
  (:mod:`agentx.checkpoints.pg_store`), deleted with the session.

Every connection has TCP keepalives (a dead peer is noticed on an idle
connection too), ``synchronous_commit`` on and a ``statement_timeout`` of at
most :data:`STATEMENT_TIMEOUT_MS`. Diagnostics never carry the
URL or its password (DEC-AUTH-3): :func:`redact` removes them from any
server or libpq message.
"""

from __future__ import annotations

import select
import uuid
from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from agentx.sessions.store.errors import SessionBusy, SessionError
from agentx.sessions.store.header import validate_session_id
from agentx.sessions.store.pg_secrets import connection_secrets

#: The schema this agentx reads and writes.
SCHEMA_VERSION = 3
#: The transaction advisory lock that serialises schema creation.
_SCHEMA_LOCK = 0x61676E7478  # "agntx"
CONNECT_TIMEOUT_S = 10
#: libpq TCP keepalives: probe after 30 s idle, every 10 s, give up after 3
#: unanswered probes (a peer that vanished is noticed within a minute).
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}

#: The longest any statement may run (a commit included) unless the server
#: sets a shorter ``statement_timeout`` (DECISIONS section 8).
STATEMENT_TIMEOUT_MS = 60_000

#: The statements that take the schema from version ``n - 1`` to ``n``.
_UPGRADES: dict[int, tuple[str, ...]] = {
    1: (
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
    ),
    2: ("CREATE TABLE agentx_blobs (sha256 text PRIMARY KEY, data bytea NOT NULL)",),
    3: (
        "CREATE TABLE agentx_checkpoints ("
        " session_id uuid NOT NULL REFERENCES agentx_sessions ON DELETE CASCADE,"
        " seq bigint NOT NULL,"
        " entry text NOT NULL,"
        " PRIMARY KEY (session_id, seq))",
        "CREATE TABLE agentx_checkpoint_files ("
        " session_id uuid NOT NULL REFERENCES agentx_sessions ON DELETE CASCADE,"
        " sha256 text NOT NULL,"
        " data bytea NOT NULL,"
        " PRIMARY KEY (session_id, sha256))",
    ),
}


class StoreUnavailable(SessionError):
    """The database cannot be reached or refused a statement; the message is
    credential-free."""


class SchemaTooNew(SessionError):
    """The database holds a schema newer than this agentx knows."""


def url_secrets(url: str) -> frozenset[str]:
    """The literals of ``url`` that are credentials (DEC-AUTH-3): the whole
    URL and every password form it carries (:mod:`pg_secrets`)."""
    return connection_secrets(url, {})


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


def failure(exc: psycopg.Error, secrets: frozenset[str]) -> StoreUnavailable:
    return StoreUnavailable(f"the PostgreSQL session store failed: {redact(str(exc), secrets)}")


def connect(url: str, secrets: frozenset[str]) -> psycopg.Connection[Any]:
    """An autocommit connection with keepalives and synchronous commit on."""
    try:
        conn = psycopg.connect(
            make_conninfo(url, connect_timeout=CONNECT_TIMEOUT_S, **KEEPALIVES),
            autocommit=True,
        )
        conn.execute("SET synchronous_commit = on")
        # DECISIONS section 8: no statement waits without a deadline (a lock
        # another session holds, a stalled disk); a stricter setting of the
        # server's stays (DEC-STORE-6: a timed-out commit fails its barrier).
        conn.execute(
            "SELECT set_config('statement_timeout', %(ms)s, false)"
            " WHERE current_setting('statement_timeout') IN ('0', '')"
            " OR (SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout')"
            " > %(limit)s",
            {"ms": f"{STATEMENT_TIMEOUT_MS}ms", "limit": STATEMENT_TIMEOUT_MS},
        )
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"cannot connect to the PostgreSQL session store: {redact(str(exc), secrets)}"
        ) from None
    return conn


def locked_connection(
    url: str, secrets: frozenset[str], session_id: str
) -> psycopg.Connection[Any]:
    """A new connection holding the session's advisory writer lock;
    :class:`~agentx.sessions.store.errors.SessionBusy` while another holds it."""
    validate_session_id(session_id)
    conn = connect(url, secrets)
    try:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(session_id),)).fetchone()
    except psycopg.Error as exc:
        conn.close()
        raise failure(exc, secrets) from None
    if row is None or not row[0]:
        conn.close()
        raise SessionBusy("the session is open in another agentx process")
    return conn


def release(conn: psycopg.Connection[Any], session_id: str) -> None:
    """Give up a connection holding the session's writer lock: unlock, then
    close (DEC-STORE-1, one writer per session).

    The server frees a closed connection's session-level locks only when its
    backend process ends, which a client's close does not wait for; the next
    writer of the session (a ``--resume`` right after the last agentx exited,
    the next ``append``) could then find it taken for a moment. The unlock is
    a round trip, so the session is free when this returns. On a connection
    that is gone there is nothing to unlock: its backend, and the lock with
    it, ends on its own.
    """
    try:
        if not conn.broken and alive(conn):
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(session_id),))
    except psycopg.Error:
        pass  # the connection failed under the unlock: its backend's end frees the lock
    finally:
        conn.close()


def alive(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection is still open, without a round trip: the
    server's farewell (a restart's termination notice, then end of file) is
    read if it is waiting on the socket."""
    if conn.closed:
        return False
    try:
        for _ in range(4):
            readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
            if not readable:
                return True
            conn.pgconn.consume_input()
    except (psycopg.Error, OSError, ValueError):
        return False
    return True


def ensure_schema(conn: psycopg.Connection[Any]) -> None:
    """Create or upgrade the schema to :data:`SCHEMA_VERSION`; raises
    :class:`SchemaTooNew` for a newer one."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS agentx_schema (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM agentx_schema").fetchone()
        version = (row[0] if row is not None else None) or 0
        if version > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"the PostgreSQL session store has schema version {version}; "
                f"this agentx knows version {SCHEMA_VERSION} (upgrade agentx)"
            )
        if version == SCHEMA_VERSION:
            return
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in _UPGRADES[step]:
                conn.execute(statement.encode())
        conn.execute("DELETE FROM agentx_schema")
        conn.execute("INSERT INTO agentx_schema (version) VALUES (%s)", (SCHEMA_VERSION,))


def open_connection(url: str, secrets: frozenset[str]) -> psycopg.Connection[Any]:
    """:func:`connect`, then :func:`ensure_schema`; closed again on failure."""
    conn = connect(url, secrets)
    try:
        ensure_schema(conn)
    except psycopg.Error as exc:
        conn.close()
        raise failure(exc, secrets) from None
    except BaseException:
        conn.close()
        raise
    return conn
