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
ever read back; a commit that fails is remembered, what it held is never
written later, and every later append and sync raises (DEC-STORE-6: the
results waiting for it are dropped and the session ends).

A connection lost (the server restarted, or terminated it) is opened again,
with bounded retries and one WARN line per retry (:data:`RECONNECT_ATTEMPTS`);
the advisory lock is taken again, and :class:`SessionTaken` says another
process took the session meanwhile (the lock is held elsewhere, or the
transcript grew): the session ends, exit 4 (DECISIONS section 8). The turn
whose append notices the loss fails, saying why; the next turn's append
reconnects. Batches already held when the loss is noticed are owed: their
turns' results wait behind the barrier, so the barrier reconnects and
commits them rather than dropping them (DEC-STORE-1: no acknowledged turn
lost). A commit whose connection broke under it is resolved the same way:
after reconnecting, a batch row with its ``seq`` and its lines means the
server committed it before the connection went; none means it commits now.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psycopg
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from agentx.diagnostics import logger
from agentx.sessions.store.base import SessionTaken
from agentx.sessions.store.errors import (
    SessionBusy,
    SessionError,
    SessionNotFound,
    TranscriptRefused,
)
from agentx.sessions.store.jsonl import Admit, encode_entries
from agentx.sessions.store.pg_base import StoreUnavailable, alive, failure, release

#: The barrier's one statement: the held batches as one row, and the
#: session's change mark for ``--continue``.
_COMMIT = (
    "WITH batch AS (INSERT INTO agentx_batches (session_id, seq, lines)"
    " VALUES (%(sid)s, %(seq)s, %(lines)s))"
    " UPDATE agentx_sessions SET changed = nextval('agentx_change')"
    " WHERE session_id = %(sid)s"
)
LOST = "the connection to the PostgreSQL session store was lost (did the server restart?)"
#: Connection attempts of one reconnection, and the first wait between them
#: (doubling, at most :data:`RECONNECT_MAX_WAIT_S`).
RECONNECT_ATTEMPTS = 4
RECONNECT_WAIT_S = 0.25
RECONNECT_MAX_WAIT_S = 2.0

#: Opens a new connection holding the session's advisory lock.
Relock = Callable[[], psycopg.Connection[Any]]


def _warn(state: RetryCallState) -> None:
    """One WARN line per retry (the reason is credential-free already)."""
    error = state.outcome.exception() if state.outcome is not None else None
    wait = state.next_action.sleep if state.next_action is not None else 0.0
    logger.warning(
        "session store: reconnecting failed ({}); attempt {} of {} in {:.2f} s",
        error,
        state.attempt_number + 1,
        RECONNECT_ATTEMPTS,
        wait,
    )


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
        relock: Relock,
    ) -> None:
        self._conn = conn
        self._relock = relock
        #: The connection was lost: the next append, or the barrier when
        #: batches are held, reconnects.
        self._lost = False
        self._session_id = session_id
        self._admit = admit
        self._secrets = secrets
        self._lock = threading.Lock()
        self._io = threading.Lock()
        self._held: list[str] = []
        self._closed = False
        self._failed: str | None = None
        #: The failure is :class:`SessionTaken` (the session ends, exit 4).
        self._was_taken = False
        #: A barrier failed (DEC-STORE-6): every later barrier fails too.
        self._barrier_failed = False
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
        batch = encode_entries(entries)
        if not entries:
            return
        if self._admit is not None and not self._admit(batch.pieces()):
            raise TranscriptRefused("an entry holds a configured credential")
        # The row's text column takes the batch whole (one copy of it).
        payload = b"".join(batch.pieces())
        with self._lock:
            self._check()
            # A commit in flight will tell; otherwise look at the socket.
            if self._io.acquire(blocking=False):
                try:
                    self._ensure_connected()
                finally:
                    self._io.release()
            self._held.append(payload.decode("utf-8"))

    def _ensure_connected(self) -> None:
        """Under both locks: reconnect after a loss, or notice one now (this
        append fails; what is held stays held, for the barrier)."""
        if self._lost:
            self._reconnect()
        elif not alive(self._conn):
            self._conn.close()
            self._lost = True
            raise StoreUnavailable(LOST)

    def _reconnect(self, pending: tuple[int, str] | None = None) -> None:
        """Under ``_io``: a new connection holding the session's lock, whose
        transcript ends at :attr:`_seq`, or at ``pending``'s batch (its
        ``seq`` and lines) when a commit broke under it."""
        retrying = Retrying(
            stop=stop_after_attempt(RECONNECT_ATTEMPTS),
            wait=wait_exponential(multiplier=RECONNECT_WAIT_S, max=RECONNECT_MAX_WAIT_S),
            retry=retry_if_exception_type(StoreUnavailable),
            before_sleep=_warn,
            reraise=True,
        )
        try:
            conn = retrying(self._relock)
        except SessionBusy:
            raise self._taken("another agentx process holds it now") from None
        try:
            row = conn.execute(
                "SELECT seq, lines FROM agentx_batches WHERE session_id = %s"
                " ORDER BY seq DESC LIMIT 1",
                (self._session_id,),
            ).fetchone()
        except psycopg.Error as exc:
            release(conn, self._session_id)
            raise failure(exc, self._secrets) from None
        last = (0, None) if row is None else (row[0], row[1])
        if last[0] != self._seq and (pending is None or last != pending):
            release(conn, self._session_id)
            raise self._taken("another agentx process wrote to it meanwhile")
        self._conn = conn
        self._lost = False

    def _taken(self, why: str) -> SessionTaken:
        # Under ``_io`` (an append holds ``_lock`` too): two assignments that
        # an append's ``_check`` reads whole.
        self._was_taken = True
        self._failed = f"the session was taken while its store connection was lost: {why}"
        return SessionTaken(self._failed)

    def _check(self) -> None:
        if self._closed:
            raise SessionError("transcript closed")
        if self._failed is not None:
            raise (SessionTaken if self._was_taken else SessionError)(self._failed)

    def sync(self) -> None:
        with self._io:
            with self._lock:
                if self._failed is not None:
                    # DEC-STORE-6: after a failed barrier, or with batches
                    # owed that can no longer be stored, the barrier fails;
                    # an append's failure alone only failed that append.
                    owed = bool(self._held)
                    self._held.clear()
                    if owed or self._barrier_failed:
                        self._check()
                    return
                if self._closed or not self._held:
                    return
                lines = "".join(self._held)
                self._held.clear()
                seq = self._seq + 1
            try:
                self._commit(seq, lines)
            except SessionTaken:
                self._barrier_failed = True
                raise
            except SessionError as found:
                with self._lock:
                    self._held.clear()
                    self._failed = f"{found}; the session's writes stopped"
                    self._barrier_failed = True
                raise
            with self._lock:
                self._seq = seq

    def _commit(self, seq: int, lines: str) -> None:
        """Under ``_io``: commit one group. The held batches are owed (their
        results wait behind this barrier): a lost connection is opened again
        (:meth:`_reconnect`) and the group committed there, unless the broken
        commit had reached the server (then its row is there)."""
        if self._lost:
            self._reconnect()
        try:
            self._execute(seq, lines)
            return
        except psycopg.Error as exc:
            if not self._conn.closed:
                raise failure(exc, self._secrets) from None
        self._conn.close()
        self._lost = True
        self._reconnect(pending=(seq, lines))
        if self._last_seq() == seq:
            return  # the broken commit had committed
        try:
            self._execute(seq, lines)
        except psycopg.Error as exc:
            if self._conn.closed:
                self._lost = True
            raise failure(exc, self._secrets) from None

    def _execute(self, seq: int, lines: str) -> None:
        self._conn.execute(
            _COMMIT, {"sid": self._session_id, "seq": seq, "lines": lines}, prepare=True
        )

    def _last_seq(self) -> int:
        try:
            row = self._conn.execute(
                "SELECT coalesce(max(seq), 0) FROM agentx_batches WHERE session_id = %s",
                (self._session_id,),
            ).fetchone()
        except psycopg.Error as exc:
            raise failure(exc, self._secrets) from None
        return 0 if row is None else int(row[0])

    def close(self) -> None:
        """Write what is held, then release the session (its connection);
        a failed appender only releases it."""
        try:
            if self._failed is None:
                self.sync()
        finally:
            with self._io, self._lock:
                if not self._closed:
                    self._closed = True
                    release(self._conn, self._session_id)
