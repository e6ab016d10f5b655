"""End-to-end: real ``agentx`` processes on a real PostgreSQL session store
(DEC-STORE-1, DEC-AUTH-3, DECISIONS section 8).

The offline ``local`` provider echoes each prompt, so a result's text names
the turn it belongs to.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentx.messages.frozen import thaw
from agentx.sessions.store.pg_base import SCHEMA_VERSION
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    agentx_command,
    base_env,
    encode,
    is_result,
    parse_line,
    records_of,
    run_once,
    user,
)
from tests.store.pg_cluster import PASSWORD, Cluster

BUSY = "the session is open in another agentx process"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def processes() -> Iterator[list[AgentxProcess]]:
    started: list[AgentxProcess] = []
    yield started
    for proc in started:
        proc.kill()


def _texts(url: str, session_id: str) -> list[str]:
    """The text of every stored message of the session, in order."""
    store = open_store(url, Path("/nonexistent"))
    try:
        entries = store.read(session_id).entries
    finally:
        store.close()
    messages = [thaw(e) for e in entries if e["type"] == "message"]
    return [block["text"] for e in messages for block in e["content"]]


def _start(url: str, home: Path, processes: list[AgentxProcess], *args: str) -> AgentxProcess:
    proc = AgentxProcess([*DUPLEX, "--session-store", url, *args], home=home, cwd=home)
    processes.append(proc)
    return proc


def test_a_second_resume_is_refused_until_the_writer_exits(
    pg_url: str, home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    session = str(uuid.uuid4())
    writer = _start(pg_url, home, processes, "--session-id", session)
    for n in range(3):
        writer.send(user(f"turn {n}"))
        assert writer.until(is_result)[-1]["result"] == f"turn {n}"

    other_home = tmp_path / "other-machine"
    other_home.mkdir()
    refused = run_once(
        [*DUPLEX, "--session-store", pg_url, "--resume", session],
        encode(user("too early")),
        home=other_home,
    )
    assert refused.returncode == 2
    assert refused.stdout == b""
    assert BUSY.encode() in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1

    writer.close_stdin()
    writer.rest()
    assert writer.wait() == 0
    resumed = run_once(
        [*DUPLEX, "--session-store", pg_url, "--resume", session],
        encode(user("on another machine")),
        home=other_home,
    )
    assert resumed.returncode == 0, resumed.stderr
    records = records_of(resumed.stdout)
    assert {r["session_id"] for r in records} == {session}
    assert [r["result"] for r in records if is_result(r)] == ["on another machine"]
    prompts = ["turn 0", "turn 1", "turn 2", "on another machine"]
    assert _texts(pg_url, session) == [t for p in prompts for t in (p, p)]
    assert not (other_home / "sessions" / session).exists(), "nothing on the local disk"


def test_every_result_on_stdout_survives_a_sigkill_mid_burst(pg_url: str, home: Path) -> None:
    """A burst of prompts (within the prompt queue's bound), SIGKILL after 40
    results: every result that reached stdout, read before or after the kill,
    has its turn in the store, and no turn is stored in part."""
    session = str(uuid.uuid4())
    writer = subprocess.Popen(
        [*agentx_command(), *DUPLEX, "--session-store", pg_url, "--session-id", session],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=base_env(home),
        cwd=home,
    )
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write(b"".join(encode(user(f"burst {n}")) for n in range(100)))
    writer.stdin.flush()
    acknowledged: list[str] = []

    def take(line: bytes) -> None:
        record = parse_line(line)
        if is_result(record):
            assert not record["is_error"], record
            acknowledged.append(record["result"])

    while len(acknowledged) < 40:
        take(writer.stdout.readline())
    writer.kill()
    writer.wait(timeout=30)
    for line in writer.stdout.read().splitlines(keepends=True):
        if line.endswith(b"\n"):  # a line cut by the kill never reached the reader whole
            take(line)
    writer.stdout.close()
    writer.stdin.close()
    stored = _texts(pg_url, session)
    assert stored[: 2 * len(acknowledged)] == [t for p in acknowledged for t in (p, p)]
    assert len(stored) % 2 == 0, "a turn is stored whole or not at all"


def test_continue_and_clear_work_on_the_store(pg_url: str, home: Path, tmp_path: Path) -> None:
    first = str(uuid.uuid4())
    done = run_once(
        [*DUPLEX, "--session-store", pg_url, "--session-id", first],
        encode(user("before clear")) + encode(user("/clear")) + encode(user("after clear")),
        home=home,
    )
    assert done.returncode == 0, done.stderr
    cleared = {r["session_id"] for r in records_of(done.stdout)} - {first}
    assert len(cleared) == 1
    (second,) = cleared
    assert _texts(pg_url, first) == ["before clear", "before clear"]
    assert _texts(pg_url, second) == ["after clear", "after clear"]

    again = run_once(
        [*DUPLEX, "--session-store", pg_url, "--continue"],
        encode(user("continued")),
        home=home,
    )
    assert again.returncode == 0, again.stderr
    assert {r["session_id"] for r in records_of(again.stdout)} == {second}
    assert _texts(pg_url, second)[-1] == "continued"


def test_an_unreachable_store_exits_2_with_a_credential_free_line(
    home: Path, tmp_path: Path
) -> None:
    url = f"postgresql://guarded:{PASSWORD}@/agentx?host={tmp_path}/no-server-here"
    done = run_once([*DUPLEX, "--session-store", url], encode(user("hello")), home=home)
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "cannot connect to the PostgreSQL session store" in lines[0]
    assert PASSWORD not in lines[0]
    assert url not in lines[0]


def test_a_wrong_password_is_never_echoed(cluster: Cluster, home: Path) -> None:
    database = cluster.new_database()
    wrong = cluster.url(database, user="guarded", password=PASSWORD + "-wrong")
    done = run_once([*DUPLEX, "--session-store", wrong], encode(user("x")), home=home)
    assert done.returncode == 2
    assert b"password authentication failed" in done.stderr
    assert PASSWORD.encode() not in done.stderr


def test_the_store_password_is_a_credential_of_the_output_guard(
    cluster: Cluster, home: Path
) -> None:
    """DEC-AUTH-3: the echo of the password latches the guard (exit 3), and
    the refused turn is never persisted (DEC-AUTH-6)."""
    database = cluster.new_database()
    cluster.psql(
        f"GRANT ALL ON SCHEMA public TO guarded; ALTER DATABASE {database} OWNER TO guarded"
    )
    url = cluster.url(database, user="guarded", password=PASSWORD)
    session = str(uuid.uuid4())
    done = run_once(
        [*DUPLEX, "--session-store", url, "--session-id", session],
        encode(user("fine")) + encode(user(f"the password is {PASSWORD}")),
        home=home,
    )
    assert done.returncode == 3, done.stderr
    assert PASSWORD.encode() not in done.stdout
    assert PASSWORD.encode() not in done.stderr
    assert _texts(url, session) == ["fine", "fine"]


def test_a_newer_schema_exits_2(cluster: Cluster, home: Path) -> None:
    database = cluster.new_database()
    url = cluster.url(database)
    open_store(url, Path("/nonexistent")).close()
    newer = SCHEMA_VERSION + 1
    cluster.psql(f"INSERT INTO agentx_schema (version) VALUES ({newer})", database)
    done = run_once([*DUPLEX, "--session-store", url], encode(user("x")), home=home)
    assert done.returncode == 2
    assert f"schema version {newer}".encode() in done.stderr
    assert done.stdout == b""


def test_no_session_persistence_never_connects(home: Path, tmp_path: Path) -> None:
    url = f"postgresql://agentx@/agentx?host={tmp_path}/no-server-here"
    done = run_once(
        [*DUPLEX, "--session-store", url, "--no-session-persistence"],
        encode(user("ephemeral")),
        home=home,
    )
    assert done.returncode == 0, done.stderr
    assert [r["result"] for r in records_of(done.stdout) if is_result(r)] == ["ephemeral"]
