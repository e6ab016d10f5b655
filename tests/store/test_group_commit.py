"""Group commit on PostgreSQL, observed on the real server (DEC-STORE-1:
"turns that finish together share one commit").

The server's transaction-id counter counts the write transactions: every
transaction that writes a row is given the next xid when it commits or
aborts, read-only statements get none. The throwaway cluster runs without
autovacuum (``pg_cluster``), so nothing else takes an xid while a test
looks; the observer's own reads take none. ``pg_snapshot_xmax`` of a fresh
snapshot is the next xid once nothing is in flight, which holds here: every
barrier has returned before the observer reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from agentx.sessions.store.base import SessionStore
from tests.store.conformance import SESSION_ID, seqs
from tests.unit.sessions.test_sessions import seq_entry

TURNS = 5


class Observer:
    """A connection of the test's own that reads the server's xid counter
    and the xmin (the inserting transaction) of the store's rows."""

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)

    def next_xid(self) -> int:
        row = self._conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").fetchone()
        assert row is not None
        return int(row[0])

    def batch_xmins(self) -> list[int]:
        rows = self._conn.execute(
            "SELECT xmin::text FROM agentx_batches WHERE session_id = %s ORDER BY seq",
            (SESSION_ID,),
        ).fetchall()
        return [int(xmin) for (xmin,) in rows]

    def session_xmin(self) -> int:
        row = self._conn.execute(
            "SELECT xmin::text FROM agentx_sessions WHERE session_id = %s", (SESSION_ID,)
        ).fetchone()
        assert row is not None
        return int(row[0])

    def read_only(self) -> Any:
        return self._conn.execute("SHOW autovacuum").fetchone()

    def close(self) -> None:
        self._conn.close()


@pytest.fixture
def observer(pg_url: str) -> Iterator[Observer]:
    watching = Observer(pg_url)
    assert watching.read_only() == ("off",), "the test cluster runs without autovacuum"
    yield watching
    watching.close()


def test_turns_handed_to_one_barrier_share_one_commit(
    pg_store: SessionStore, observer: Observer
) -> None:
    """Five turns' appends, then one sync: one transaction on the server,
    holding every entry and the session's change mark."""
    appender = pg_store.appender(SESSION_ID)
    try:
        before = observer.next_xid()
        assert observer.next_xid() == before, "reading the counter takes no xid"
        for turn in range(TURNS):
            appender.append([seq_entry(2 * turn), seq_entry(2 * turn + 1)])
        assert observer.next_xid() == before, "an append holds its batch: no round trip"
        appender.sync()
        after = observer.next_xid()
    finally:
        appender.close()
    assert after - before == 1, f"{after - before} transactions for one barrier"
    (xmin,) = observer.batch_xmins()
    assert xmin == before, "the one transaction wrote the batch"
    assert observer.session_xmin() == xmin, "and the change mark, in the same commit"
    assert seqs(pg_store) == list(range(2 * TURNS))


def test_turns_with_a_barrier_each_commit_separately(
    pg_store: SessionStore, observer: Observer
) -> None:
    """The control: a barrier after every turn is one commit per turn."""
    appender = pg_store.appender(SESSION_ID)
    try:
        before = observer.next_xid()
        for turn in range(TURNS):
            appender.append([seq_entry(2 * turn), seq_entry(2 * turn + 1)])
            appender.sync()
        after = observer.next_xid()
    finally:
        appender.close()
    assert after - before == TURNS
    xmins = observer.batch_xmins()
    assert xmins == list(range(before, after)), "one transaction per barrier, in order"
    assert observer.session_xmin() == xmins[-1]
    assert seqs(pg_store) == list(range(2 * TURNS))


def test_an_empty_barrier_commits_nothing(pg_store: SessionStore, observer: Observer) -> None:
    appender = pg_store.appender(SESSION_ID)
    try:
        appender.append([seq_entry(0)])
        appender.sync()
        before = observer.next_xid()
        appender.sync()
        appender.sync()
        assert observer.next_xid() == before
    finally:
        appender.close()
    assert seqs(pg_store) == [0]
