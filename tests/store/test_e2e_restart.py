"""End-to-end: the PostgreSQL server restarts under a running session
(DEC-STORE-1, DECISIONS section 8).

The turn in flight fails with a result saying why; the next turn opens a
new connection (bounded retries, one WARN line per retry) and takes the
session's advisory lock again, or, when another process took the session
meanwhile, its turn fails and the session ends with exit 4. No acknowledged
turn is lost, and nothing of a failed turn is stored.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentx.messages.frozen import thaw
from agentx.sessions.store.pg_appender import RECONNECT_ATTEMPTS
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, AgentxProcess, is_result, user
from tests.store.pg_cluster import PASSWORD, Cluster

LOST = "the connection to the PostgreSQL session store was lost"
WARN = "session store: reconnecting failed"


@pytest.fixture
def processes() -> Iterator[list[AgentxProcess]]:
    started: list[AgentxProcess] = []
    yield started
    for proc in started:
        proc.kill()


def _start(url: str, home: Path, processes: list[AgentxProcess], *args: str) -> AgentxProcess:
    home.mkdir(exist_ok=True)
    proc = AgentxProcess([*DUPLEX, "--session-store", url, *args], home=home, cwd=home)
    processes.append(proc)
    return proc


def _turn(proc: AgentxProcess, text: str) -> dict[str, object]:
    proc.send(user(text))
    return dict(proc.until(is_result)[-1])


def _texts(url: str, session_id: str) -> list[str]:
    store = open_store(url, Path("/nonexistent"))
    try:
        entries = store.read(session_id).entries
    finally:
        store.close()
    return [block["text"] for e in entries for block in thaw(e)["content"]]


def _guarded(cluster: Cluster) -> str:
    """A fresh database reached with a password (so redaction is tested too)."""
    database = cluster.new_database()
    cluster.psql(
        f"GRANT ALL ON DATABASE {database} TO guarded; ALTER DATABASE {database} OWNER TO guarded"
    )
    return cluster.url(database, user="guarded", password=PASSWORD)


def test_the_turn_in_flight_fails_and_the_next_one_reconnects(
    cluster: Cluster, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    url = _guarded(cluster)
    session = str(uuid.uuid4())
    writer = _start(url, tmp_path / "home", processes, "--session-id", session)
    assert _turn(writer, "before the restart")["result"] == "before the restart"
    cluster.stop()
    cluster.start()
    failed = _turn(writer, "during the restart")
    assert failed["is_error"] is True
    assert LOST in json.dumps(failed)
    assert _turn(writer, "after the restart")["is_error"] is False
    writer.close_stdin()
    writer.rest()
    assert writer.wait() == 0
    assert WARN not in writer.stderr, "the server was back: the first attempt connected"
    assert PASSWORD not in writer.stderr
    prompts = ["before the restart", "after the restart"]
    assert _texts(url, session) == [t for p in prompts for t in (p, p)]


def test_each_failed_reconnection_attempt_is_one_warn_line(
    cluster: Cluster, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """While the server is down the next turn retries a bounded number of
    times and fails; once it is back, the turn after reconnects."""
    url = _guarded(cluster)
    session = str(uuid.uuid4())
    writer = _start(url, tmp_path / "home", processes, "--session-id", session)
    assert _turn(writer, "first")["is_error"] is False
    cluster.stop()
    try:
        assert LOST in json.dumps(_turn(writer, "lost"))
        down = _turn(writer, "still down")
    finally:
        cluster.start()
    assert down["is_error"] is True
    assert "cannot connect to the PostgreSQL session store" in json.dumps(down)
    assert _turn(writer, "back")["is_error"] is False
    writer.close_stdin()
    writer.rest()
    assert writer.wait() == 0
    warnings = [line for line in writer.stderr.splitlines() if WARN in line]
    assert len(warnings) == RECONNECT_ATTEMPTS - 1, writer.stderr
    assert all("WARN" in line for line in warnings)
    assert PASSWORD not in writer.stderr
    assert _texts(url, session) == ["first", "first", "back", "back"]


def test_a_session_taken_during_the_outage_ends_with_exit_4(
    cluster: Cluster, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    url = _guarded(cluster)
    session = str(uuid.uuid4())
    writer = _start(url, tmp_path / "a", processes, "--session-id", session)
    assert _turn(writer, "from a")["is_error"] is False
    cluster.stop()
    cluster.start()
    # The restart released the writer's lock: another machine resumes the session.
    other = _start(url, tmp_path / "b", processes, "--resume", session)
    assert _turn(other, "from b")["is_error"] is False
    assert LOST in json.dumps(_turn(writer, "lost"))
    taken = _turn(writer, "taken")
    assert taken["is_error"] is True
    assert "another agentx process holds it now" in json.dumps(taken)
    writer.rest()
    assert writer.wait() == 4
    errors = [line for line in writer.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 2, "one line for each failed turn"
    assert LOST in errors[0] and "another agentx process holds it now" in errors[1]
    other.close_stdin()
    other.rest()
    assert other.wait() == 0
    assert _texts(url, session) == ["from a", "from a", "from b", "from b"]


def test_a_session_written_by_another_process_during_the_outage_ends_with_exit_4(
    cluster: Cluster, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """The other process came and went: the lock is free again, but the
    transcript grew, so this process's history is no longer the session's."""
    url = _guarded(cluster)
    session = str(uuid.uuid4())
    writer = _start(url, tmp_path / "a", processes, "--session-id", session)
    assert _turn(writer, "from a")["is_error"] is False
    cluster.stop()
    cluster.start()
    other = _start(url, tmp_path / "b", processes, "--resume", session)
    assert _turn(other, "from b")["is_error"] is False
    other.close_stdin()
    other.rest()
    assert other.wait() == 0
    assert LOST in json.dumps(_turn(writer, "lost"))
    taken = _turn(writer, "taken")
    assert "another agentx process wrote to it meanwhile" in json.dumps(taken)
    writer.rest()
    assert writer.wait() == 4
    assert _texts(url, session) == ["from a", "from a", "from b", "from b"]
