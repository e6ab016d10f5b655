"""File checkpoints in both session stores (DEC-PROFILE-2, DEC-STORE-1): kept
where the session is, read back by a ``--resume`` (another process) to
rewind, and deleted with the session."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.agentx_process import AgentxProcess, agentx_command, base_env
from tests.e2e.test_rewind_files import (
    AFTER_FIRST,
    AFTER_SECOND,
    ON,
    ORIGINAL,
    SDK,
    TWO_MESSAGES,
    disk,
    finish,
    prompt,
    rewind,
    start,
)
from tests.store.pg_cluster import Cluster


@pytest.fixture
def processes() -> Iterator[list[AgentxProcess]]:
    started: list[AgentxProcess] = []
    yield started
    for proc in started:
        proc.kill()


def _rows(cluster: Cluster, url: str, table: str) -> int:
    database = urlsplit(url).path.lstrip("/")
    return int(cluster.psql(f"SELECT count(*) FROM {table}", database).strip())


def test_rewind_after_resume_in_each_store(
    tmp_path: Path, url: str, processes: list[AgentxProcess], request: pytest.FixtureRequest
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    for name, text in ORIGINAL.items():
        (work / name).write_text(text)
    proc = start(home, work, TWO_MESSAGES, processes, "--session-store", url)
    first = prompt(proc, "change things")
    second = prompt(proc, "change more")
    assert disk(work) == AFTER_SECOND
    finish(proc)
    session = next(r for r in proc.seen if r.get("subtype") == "init")["session_id"]
    postgres = url.startswith("postgresql")
    if postgres:
        cluster: Cluster = request.getfixturevalue("cluster")
        assert _rows(cluster, url, "agentx_checkpoints") > 0
        assert _rows(cluster, url, "agentx_checkpoint_files") > 0
    else:
        assert (Path(url.removeprefix("file://")) / session / "checkpoints").is_dir()

    resumed = AgentxProcess(
        (*SDK, "--session-store", url, "--resume", session), home=home, cwd=work, env=ON
    )
    processes.append(resumed)
    dry = rewind(resumed, "d", first, dry_run=True)["response"]
    assert dry["canRewind"] is True and len(dry["filesChanged"]) == 4
    assert disk(work) == AFTER_SECOND
    assert rewind(resumed, "r", first)["response"]["canRewind"] is True
    assert disk(work) == ORIGINAL
    assert rewind(resumed, "f", second)["response"]["canRewind"] is True
    assert disk(work) == AFTER_FIRST
    finish(resumed)

    deleted = subprocess.run(
        [*agentx_command(), "sessions", "delete", session, "--store", url],
        capture_output=True,
        text=True,
        env=base_env(home),
        cwd=home,
        timeout=60,
        check=False,
    )
    assert deleted.returncode == 0, deleted.stderr
    if postgres:
        assert _rows(cluster, url, "agentx_checkpoints") == 0
        assert _rows(cluster, url, "agentx_checkpoint_files") == 0
    else:
        assert not (Path(url.removeprefix("file://")) / session).exists()
