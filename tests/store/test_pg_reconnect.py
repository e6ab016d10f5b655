"""The PostgreSQL appender across a lost connection (DEC-STORE-1: no
acknowledged turn lost; DECISIONS section 8).

The server terminates the appender's connection (``pg_terminate_backend``
with a timeout returns once the backend is gone, its farewell on the
socket). Batches held when the loss shows are owed to turns whose results
wait behind the barrier: the barrier reconnects and commits them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from agentx.sessions.store.base import SessionStore, SessionTaken
from agentx.sessions.store.pg_appender import LOST
from agentx.sessions.store.pg_base import StoreUnavailable
from agentx.sessions.store.select import open_store
from tests.store.conformance import NOWHERE, SESSION_ID, seqs
from tests.unit.sessions.test_sessions import seq_entry


@pytest.fixture
def terminate(pg_url: str) -> Iterator[Callable[[], None]]:
    """Terminates every other connection to the test's database and waits
    until their backends are gone."""
    admin = psycopg.connect(pg_url, autocommit=True)

    def run() -> None:
        row = admin.execute(
            "SELECT count(*), bool_and(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
        assert row is not None and row[0] >= 1 and row[1] is True

    yield run
    admin.close()


def test_batches_held_when_the_loss_shows_are_committed_by_the_barrier(
    pg_store: SessionStore, terminate: Callable[[], None]
) -> None:
    appender = pg_store.appender(SESSION_ID)
    try:
        appender.append([seq_entry(0), seq_entry(1)])  # a turn whose result waits
        terminate()
        with pytest.raises(StoreUnavailable, match=LOST[:40]):
            appender.append([seq_entry(99)])  # the turn in flight fails
        appender.sync()  # the barrier before the first turn's result
        assert seqs(pg_store) == [0, 1]
        appender.append([seq_entry(2)])
        appender.sync()
    finally:
        appender.close()
    assert seqs(pg_store) == [0, 1, 2]


def test_a_commit_whose_connection_broke_is_made_on_a_new_one(
    pg_store: SessionStore, terminate: Callable[[], None]
) -> None:
    appender = pg_store.appender(SESSION_ID)
    try:
        appender.append([seq_entry(0)])
        appender.sync()
        appender.append([seq_entry(1), seq_entry(2)])
        terminate()
        appender.sync()  # the commit breaks, then is made again
        appender.append([seq_entry(3)])
        appender.sync()
    finally:
        appender.close()
    assert seqs(pg_store) == [0, 1, 2, 3]


def test_a_session_taken_before_the_barrier_reconnects_ends_it(
    pg_url: str, pg_store: SessionStore, terminate: Callable[[], None]
) -> None:
    """The owed batch cannot be written: the barrier says the session was
    taken, and every later append raises ``SessionTaken`` (exit 4)."""
    appender = pg_store.appender(SESSION_ID)
    other_store = open_store(pg_url, NOWHERE)
    try:
        appender.append([seq_entry(0)])
        terminate()
        other = other_store.appender(SESSION_ID)
        other.append([seq_entry(10)])
        other.sync()
        with pytest.raises(SessionTaken, match="another agentx process holds it now"):
            appender.sync()
        with pytest.raises(SessionTaken):
            appender.append([seq_entry(1)])
        other.close()
    finally:
        appender.close()
        other_store.close()
    assert seqs(pg_store) == [10]
