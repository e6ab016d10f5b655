"""End-to-end: the PostgreSQL server restarts under a running session
(DEC-STORE-1, DECISIONS section 8).

The turn in flight fails with a result saying why; the next turn opens a
new connection (bounded retries, one WARN line per retry) and takes the
session's advisory lock again, or, when another process took the session
meanwhile, its turn fails and the session ends with exit 4. No acknowledged
turn is lost, and nothing of a failed turn is stored.

The outage may come between turns or while a turn is in flight: the
scripted provider's turn asks the host for a permission, which the test
answers only after the restart (or after the server terminated the
writer's connection), so the turn is held open with nothing committed.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agentx.messages.frozen import thaw
from agentx.sessions.store.pg_appender import RECONNECT_ATTEMPTS
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import (
    DEFAULT_TIMEOUT,
    DUPLEX,
    AgentxProcess,
    Record,
    agentx_command,
    allow,
    base_env,
    control,
    encode,
    is_can_use_tool,
    is_control_response,
    is_result,
    parse_line,
    user,
    write_auth,
    write_script,
)
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
    messages = [thaw(e) for e in entries if e["type"] == "message"]
    return [block["text"] for e in messages for block in e["content"]]


def _guarded_database(cluster: Cluster) -> tuple[str, str]:
    """A fresh database reached with a password (so redaction is tested
    too), by a role that is not a superuser (so a connection limit binds it);
    its name and URL."""
    database = cluster.new_database()
    cluster.psql(
        f"GRANT ALL ON DATABASE {database} TO guarded; ALTER DATABASE {database} OWNER TO guarded"
    )
    return database, cluster.url(database, user="guarded", password=PASSWORD)


def _guarded(cluster: Cluster) -> str:
    return _guarded_database(cluster)[1]


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


# -- the outage while a turn is in flight ------------------------------------------

REFUSED = "too many connections for database"


def _scripted(home: Path, turns: list[Record]) -> None:
    """One scripted profile (the same resume binding on every machine);
    past its last turn it echoes."""
    home.mkdir(exist_ok=True)
    script = write_script(home / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])


def _message_tokens(proc: AgentxProcess, request_id: str) -> int:
    """The ``Messages`` figure of ``get_context_usage``: what the process's
    history holds (restored by a resume, or kept by the writer)."""
    proc.send(control(request_id, "get_context_usage"))
    response = proc.until(is_control_response(request_id))[-1]["response"]["response"]
    (tokens,) = [c["tokens"] for c in response["categories"] if c["name"] == "Messages"]
    assert isinstance(tokens, int) and tokens > 0
    return tokens


def _drop_connections(cluster: Cluster, database: str, outage: str) -> None:
    if outage == "restart":
        cluster.stop()
        cluster.start()
        return
    # With a timeout, pg_terminate_backend returns once the backend is gone.
    terminated = cluster.psql(
        "SELECT count(*), bool_and(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
        f" WHERE datname = '{database}' AND usename = 'guarded'"
    )
    count, gone = terminated.strip().split("|")
    assert int(count) >= 1 and gone == "t", "the writer's connection was there to terminate"


def _refusals(cluster: Cluster, database: str) -> int:
    """The server's own count of the connections it refused to ``database``."""
    log = (cluster.base / "server.log").read_text(errors="replace")
    return log.count(f'{REFUSED} "{database}"')


@pytest.mark.parametrize("outage", ["restart", "terminate"])
def test_an_outage_while_a_turn_is_in_flight_fails_that_turn_only(
    cluster: Cluster, tmp_path: Path, processes: list[AgentxProcess], outage: str
) -> None:
    """The server restarts (or terminates the writer's connection) while a
    turn waits on a permission answer, before anything of it is committed:
    that turn's result says why it failed, credential-free; the next turn
    reconnects, one WARN line per refused attempt, and succeeds; a
    ``--resume`` on another machine sees every acknowledged turn and
    nothing of the failed one."""
    database, url = _guarded_database(cluster)
    session = str(uuid.uuid4())
    home = tmp_path / "home"
    bash = {"tool_use": {"name": "Bash", "input": {"command": "echo in flight"}}}
    _scripted(
        home,
        [
            {"steps": [{"text": "first answer"}]},
            {"steps": [bash]},
            {"steps": [{"text": "the tool ran"}]},
        ],
    )
    writer = _start(url, home, processes, "--session-id", session)
    first = _turn(writer, "first")
    assert (first["is_error"], first["result"]) == (False, "first answer")

    writer.send(user("in flight"))
    asked = writer.until(is_can_use_tool)[-1]
    assert _texts(url, session) == ["first", "first answer"], "nothing of it is committed"
    _drop_connections(cluster, database, outage)
    writer.send(allow(asked))
    failed = dict(writer.until(is_result)[-1])
    assert failed["is_error"] is True
    assert failed["subtype"] == "error_during_execution"
    reported = json.dumps(failed)
    assert LOST in reported
    assert PASSWORD not in reported and url not in reported

    # The next turn's reconnection is refused by the server until the test
    # has seen the first WARN line; then the gate opens and a retry connects.
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database} CONNECTION LIMIT 0".encode())
        try:
            writer.send(user("after"))
            writer.until_stderr(WARN)
        finally:
            admin.execute(f"ALTER DATABASE {database} CONNECTION LIMIT -1".encode())
    after = writer.until(is_result)[-1]
    assert (after["is_error"], after["result"]) == (False, "after")
    kept = _message_tokens(writer, "usage-writer")
    writer.close_stdin()
    writer.rest()
    assert writer.wait() == 0
    warnings = [line for line in writer.stderr.splitlines() if WARN in line]
    assert 1 <= len(warnings) < RECONNECT_ATTEMPTS, writer.stderr
    assert len(warnings) == _refusals(cluster, database), "one WARN line per refused attempt"
    for number, line in enumerate(warnings, start=2):
        assert "WARN" in line and f"attempt {number} of {RECONNECT_ATTEMPTS}" in line
    assert PASSWORD not in writer.stderr and url not in writer.stderr
    acknowledged = ["first", "first answer", "after", "after"]
    assert _texts(url, session) == acknowledged

    other = tmp_path / "other-machine"
    _scripted(other, [])
    resumed = _start(url, other, processes, "--resume", session)
    assert _message_tokens(resumed, "usage-resumed") == kept, "the writer's history, exactly"
    assert _turn(resumed, "resumed")["result"] == "resumed"
    resumed.close_stdin()
    resumed.rest()
    assert resumed.wait() == 0
    assert _texts(url, session) == [*acknowledged, "resumed", "resumed"]


# -- the outage during a burst ---------------------------------------------------

#: Prompts in all; AHEAD are sent at once, then one more for each result, so
#: agentx always has prompts queued (within the prompt queue's bound of 128)
#: and its writer lags the turns. The connection is terminated once
#: OUTAGE_AT results are out.
BURST = 1500
AHEAD = 60
OUTAGE_AT = 300


def test_no_result_reported_as_success_is_lost_when_the_connection_goes_mid_burst(
    cluster: Cluster, tmp_path: Path
) -> None:
    """The server terminates the writer's connection mid-burst (and stays
    up, so the outcome does not hang on how long a restart takes). Batches
    are held (owed to results not yet written) when the loss shows, or a
    commit is in flight: every result reported as success is stored, whole;
    a turn that failed says why and is not stored."""
    database, url = _guarded_database(cluster)
    session = str(uuid.uuid4())
    home = tmp_path / "home"
    home.mkdir()
    writer = subprocess.Popen(
        [*agentx_command(), *DUPLEX, "--session-store", url, "--session-id", session],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=base_env(home),
        cwd=home,
    )
    assert writer.stdin is not None and writer.stdout is not None
    results: list[dict[str, object]] = []
    try:
        writer.stdin.write(b"".join(encode(user(f"burst {n}")) for n in range(AHEAD)))
        writer.stdin.flush()
        sent = AHEAD
        # An open connection of the test's: the signal goes out within the
        # burst (a psql process would start after the queued prompts ran).
        with psycopg.connect(cluster.url("postgres"), autocommit=True) as admin:
            while len(results) < BURST:
                line = writer.stdout.readline()
                assert line, "agentx closed stdout"
                record = parse_line(line)
                if not is_result(record):
                    continue
                results.append(record)
                if sent < BURST:
                    writer.stdin.write(encode(user(f"burst {sent}")))
                    writer.stdin.flush()
                    sent += 1
                if len(results) == OUTAGE_AT:
                    admin.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE datname = %s AND usename = 'guarded'",
                        (database,),
                    )
        writer.stdin.close()
        tail = [parse_line(line) for line in writer.stdout.read().splitlines(keepends=True)]
        assert not [r for r in tail if is_result(r)], "one result per prompt"
        assert writer.stderr is not None
        stderr = writer.stderr.read().decode()
        assert writer.wait(timeout=DEFAULT_TIMEOUT) == 0, stderr
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    succeeded = [str(r["result"]) for r in results if r["is_error"] is False]
    failed = [r for r in results if r["is_error"] is not False]
    stored = _texts(url, session)
    assert stored == [t for p in succeeded for t in (p, p)], "exactly the acknowledged turns"
    assert len(failed) <= 1, "at most the turn whose append saw the loss"
    for result in failed:
        assert LOST in json.dumps(result)
    assert PASSWORD not in stderr
