"""A writer that gives up a session frees it before it returns (DEC-STORE-1:
one writer per session, and only while it holds the session).

PostgreSQL frees a closed connection's advisory lock when the connection's
server process ends, which a client's close does not wait for: a writer that
only closed left the session taken for a moment after it returned, and the
next writer (a ``--resume`` right after the previous agentx exited, the next
``append``) could be told the session is open in another process.
:func:`~agentx.sessions.store.pg_base.release` unlocks first. The test keeps
the released connection's server process alive (its close only recorded),
so a release that left the unlock to the process's end fails at once.
"""

from __future__ import annotations

import uuid
from typing import Any

import psycopg
import pytest

from agentx.sessions.store.errors import SessionBusy
from agentx.sessions.store.pg_base import lock_key, locked_connection, release


class _KeptOpen(psycopg.Connection[Any]):
    """A real connection whose close is only recorded: its server process,
    and every lock it still holds, outlive the release."""

    closed_by_release = False

    def close(self) -> None:
        self.closed_by_release = True

    def really_close(self) -> None:
        super().close()


def _taken(url: str, session: str) -> _KeptOpen:
    conn = _KeptOpen.connect(url, autocommit=True)
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(session),)).fetchone()
    assert row == (True,)
    return conn


def test_a_released_session_is_free_while_the_old_connection_lingers(pg_url: str) -> None:
    session = str(uuid.uuid4())
    writer = _taken(pg_url, session)
    try:
        with pytest.raises(SessionBusy):
            locked_connection(pg_url, frozenset(), session)
        release(writer, session)
        assert writer.closed_by_release
        locked_connection(pg_url, frozenset(), session).close()
    finally:
        writer.really_close()


def test_a_release_of_a_connection_already_gone_only_closes_it(pg_url: str) -> None:
    session = str(uuid.uuid4())
    writer = _taken(pg_url, session)
    writer.really_close()
    release(writer, session)  # nothing to unlock: no error, nothing sent
    locked_connection(pg_url, frozenset(), session).close()
