"""A commit the server refuses with the connection still up (DEC-STORE-6).

Disk full (SQLSTATE 53100, raised where the server raises it: at the
insert), a permission taken away, a statement timeout behind another
session's lock, a deferred constraint: the barrier fails, the results it
held are dropped and never written, and the session ends with exit 4 and one
ERROR line naming the store's error. Nothing of the refused turn is stored,
and the session resumes once the store is back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import psycopg
import pytest

from agentx.messages.frozen import thaw
from agentx.sessions.store import pg_base
from agentx.sessions.store.errors import SessionError
from agentx.sessions.store.pg_base import STATEMENT_TIMEOUT_MS, StoreUnavailable, connect
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, AgentxProcess, is_result, user
from tests.store.conformance import NOWHERE, SESSION_ID, seqs
from tests.store.pg_cluster import PASSWORD, Cluster
from tests.unit.sessions.test_sessions import header_for, seq_entry

_DISK_FULL = """
CREATE FUNCTION agentx_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'could not extend file "base/16384/16390": No space left on device'
    USING ERRCODE = 'disk_full';
END $$;
CREATE TRIGGER agentx_disk_full BEFORE INSERT ON agentx_batches
  FOR EACH ROW EXECUTE FUNCTION agentx_disk_full();
"""
_HEAL_DISK = "DROP TRIGGER agentx_disk_full ON agentx_batches"

_DEFERRED = """
CREATE FUNCTION agentx_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'refused at commit'; END $$;
CREATE CONSTRAINT TRIGGER agentx_refuse AFTER INSERT ON agentx_batches
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION agentx_refuse();
"""
_HEAL_DEFERRED = "DROP TRIGGER agentx_refuse ON agentx_batches"


#: A refusal installed while the session runs (cured on leaving).
Fault = Callable[[Cluster, str], AbstractContextManager[None]]


def _psql(install: str, heal: str) -> Fault:
    @contextmanager
    def fault(cluster: Cluster, database: str) -> Iterator[None]:
        cluster.psql(install, database)
        try:
            yield
        finally:
            cluster.psql(heal, database)

    return fault


@contextmanager
def _locked(cluster: Cluster, database: str) -> Iterator[None]:
    """Another session holds the transcript table's strongest lock, so the
    barrier's insert waits until the role's statement timeout cancels it."""
    with psycopg.connect(cluster.url(database)) as other:
        other.execute("LOCK TABLE agentx_batches IN ACCESS EXCLUSIVE MODE")
        yield


#: Each fault, and what the ERROR line must quote of the server's error.
FAULTS: dict[str, tuple[Fault, str]] = {
    "disk-full-53100": (_psql(_DISK_FULL, _HEAL_DISK), "No space left on device"),
    "permission-revoked": (
        _psql(
            "REVOKE INSERT ON agentx_batches FROM guarded",
            "GRANT INSERT ON agentx_batches TO guarded",
        ),
        "permission denied for table agentx_batches",
    ),
    "statement-timeout": (_locked, "canceling statement due to statement timeout"),
    "deferred-constraint": (_psql(_DEFERRED, _HEAL_DEFERRED), "refused at commit"),
}


def _guarded(cluster: Cluster) -> tuple[str, str]:
    """A fresh database owned by a role that is not a superuser (so a
    permission can be taken from it), reached with a password, whose
    statements time out after a second (a DBA's setting, applied to every
    connection of that role there); its name and URL."""
    database = cluster.new_database()
    cluster.psql(
        f"GRANT ALL ON DATABASE {database} TO guarded; ALTER DATABASE {database} OWNER TO guarded;"
        f" ALTER ROLE guarded IN DATABASE {database} SET statement_timeout = '1s'"
    )
    url = cluster.url(database, user="guarded", password=PASSWORD)
    open_store(url, NOWHERE).close()  # the schema, owned by guarded
    return database, url


def _texts(url: str, session_id: str) -> list[str]:
    store = open_store(url, NOWHERE)
    try:
        entries = store.read(session_id).entries
    finally:
        store.close()
    messages = [thaw(e) for e in entries if e["type"] == "message"]  # not the ledger
    return [block["text"] for m in messages for block in m["content"]]


@pytest.fixture
def processes() -> Iterator[list[AgentxProcess]]:
    started: list[AgentxProcess] = []
    yield started
    for proc in started:
        proc.kill()


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_refused_commit_drops_its_results_and_ends_the_session_with_4(
    name: str, cluster: Cluster, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    fault, says = FAULTS[name]
    database, url = _guarded(cluster)
    session = str(uuid.uuid4())
    writer = AgentxProcess(
        [*DUPLEX, "--session-store", url, "--session-id", session], home=tmp_path, cwd=tmp_path
    )
    processes.append(writer)
    writer.send(user("stored"))
    assert writer.until(is_result)[-1]["result"] == "stored"
    with fault(cluster, database):
        writer.send(user("refused"))
        rest = writer.rest()
        status = writer.wait()
    assert not [r for r in rest if is_result(r)], "a result the store refused left"
    assert "refused" not in str(rest)
    assert status == 4, writer.stderr
    errors = [line for line in writer.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, writer.stderr
    assert "session store:" in errors[0] and says in errors[0], errors
    assert PASSWORD not in writer.stderr and "Traceback" not in writer.stderr
    assert _texts(url, session) == ["stored", "stored"]
    # The store is back: the session resumes with what was stored.
    again = AgentxProcess(
        [*DUPLEX, "--session-store", url, "--resume", session], home=tmp_path, cwd=tmp_path
    )
    processes.append(again)
    again.send(user("after"))
    assert again.until(is_result)[-1]["result"] == "after"
    again.close_stdin()
    again.rest()
    assert again.wait() == 0, again.stderr
    assert _texts(url, session) == ["stored", "stored", "after", "after"]


def test_an_appender_whose_commit_was_refused_keeps_failing(
    cluster: Cluster,
) -> None:
    """The barrier raises the server's error; every later barrier and append
    raises again (DEC-STORE-6: a later barrier must not pass for success),
    nothing of it is stored, and closing only releases the session."""
    database, url = _guarded(cluster)
    store = open_store(url, NOWHERE)
    try:
        store.create(header_for())
        appender = store.appender(SESSION_ID)
        appender.append([seq_entry(0)])
        appender.sync()
        cluster.psql(_DISK_FULL, database)
        appender.append([seq_entry(1)])
        with pytest.raises(StoreUnavailable, match="No space left on device"):
            appender.sync()
        cluster.psql(_HEAL_DISK, database)
        with pytest.raises(SessionError, match="No space left on device"):
            appender.sync()
        with pytest.raises(SessionError, match="No space left on device"):
            appender.append([seq_entry(2)])
        appender.close()
        assert seqs(store) == [0]
        store.appender(SESSION_ID).close()  # the session was released
    finally:
        store.close()


@pytest.mark.parametrize(
    ("server", "expected"),
    [("0", "1min"), ("1h", "1min"), ("60001ms", "1min"), ("60s", "1min"), ("59999ms", "59999ms")],
)
def test_every_connection_has_a_statement_deadline_a_stricter_server_setting_stays(
    cluster: Cluster, server: str, expected: str
) -> None:
    """DECISIONS section 8: no statement waits without a deadline; at the
    store's own bound a stricter DBA setting is kept, a looser one is not."""
    database, url = _guarded(cluster)
    cluster.psql(f"ALTER ROLE guarded IN DATABASE {database} SET statement_timeout = '{server}'")
    assert STATEMENT_TIMEOUT_MS == 60_000
    conn = connect(url, frozenset())
    try:
        row = conn.execute("SHOW statement_timeout").fetchone()
    finally:
        conn.close()
    assert row is not None and row[0] == expected


def test_a_commit_blocked_past_the_stores_deadline_fails_its_barrier(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no server setting, the store's own deadline ends a commit that a
    lock holds (shortened here; 60 s in use): the barrier raises."""
    monkeypatch.setattr(pg_base, "STATEMENT_TIMEOUT_MS", 300)
    database, url = _guarded(cluster)
    cluster.psql(f"ALTER ROLE guarded IN DATABASE {database} RESET statement_timeout")
    store = open_store(url, NOWHERE)
    try:
        store.create(header_for())
        appender = store.appender(SESSION_ID)
        appender.append([seq_entry(0)])
        with (
            _locked(cluster, database),
            pytest.raises(StoreUnavailable, match="statement timeout"),
        ):
            appender.sync()
        appender.close()
        assert seqs(store) == []
    finally:
        store.close()
