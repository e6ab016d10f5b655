"""``--session-mirror`` on both stores (DEC-STORE-1, DEC-PROFILE-2): every
transcript entry agentx stores is mirrored once, in order, as
``transcript_mirror`` frames the Agent SDKs read for ``session_store``,
under the ``filePath`` the SDKs derive their key from; and the stock Python
SDK's ``session_store`` receives exactly the stored entries."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import thaw
from agentx.messages.transcript_mirror import project_key
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, encode, records_of, run_once, user


def _stored(url: str, session_id: str) -> list[dict[str, Any]]:
    store = open_store(url, Path("/nonexistent"))
    try:
        return [thaw(e) for e in store.read(session_id).entries]
    finally:
        store.close()


def test_every_stored_entry_is_mirrored_once(tmp_path: Path, url: str) -> None:
    home, work, config = tmp_path / "home", tmp_path / "work", tmp_path / "cc"
    home.mkdir()
    work.mkdir()
    stdin = encode(user("one")) + encode(user("two"))
    proc = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror"),
        stdin,
        home=home,
        cwd=work,
        env={"CLAUDE_CONFIG_DIR": str(config)},
    )
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    session_id = records[0]["session_id"]
    frames = [r for r in records if r["type"] == "transcript_mirror"]
    expected_path = (
        config / "projects" / project_key(os.path.realpath(work)) / f"{session_id}.jsonl"
    )
    assert {f["filePath"] for f in frames} == {str(expected_path)}
    mirrored = [e for f in frames for e in f["entries"]]
    assert mirrored[0]["type"] == "session_header" and mirrored[0]["session_id"] == session_id
    assert mirrored[1:] == _stored(url, session_id)
    # Each turn's entries leave before its result.
    kinds = [r["type"] for r in records if r["type"] in ("transcript_mirror", "result")]
    assert kinds == [
        "transcript_mirror",
        "transcript_mirror",
        "result",
        "transcript_mirror",
        "result",
    ]


def test_a_resume_mirrors_only_what_it_adds(tmp_path: Path, url: str) -> None:
    home, config = tmp_path / "home", tmp_path / "cc"
    home.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    first = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror"),
        encode(user("one")),
        home=home,
        env=env,
    )
    session_id = records_of(first.stdout)[0]["session_id"]
    before = len(_stored(url, session_id))
    again = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror", "--resume", session_id),
        encode(user("two")),
        home=home,
        env=env,
    )
    assert again.returncode == 0, again.stderr
    frames = [r for r in records_of(again.stdout) if r["type"] == "transcript_mirror"]
    assert [e for f in frames for e in f["entries"]] == _stored(url, session_id)[before:]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("-p", "hi", "--session-mirror"), "--session-mirror requires --output-format stream-json"),
        (
            (*DUPLEX, "--session-mirror", "--no-session-persistence"),
            "--session-mirror cannot be combined with --no-session-persistence",
        ),
    ],
    ids=["text-output", "no-persistence"],
)
def test_usage_errors(tmp_path: Path, args: tuple[str, ...], problem: str) -> None:
    proc = run_once(args, b"", home=tmp_path)
    assert proc.returncode == 2 and problem in proc.stderr.decode()


def test_the_python_sdk_session_store_receives_the_entries(tmp_path: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    import anyio

    home, work, config = tmp_path / "home", tmp_path / "work", tmp_path / "cc"
    home.mkdir()
    work.mkdir()
    store = sdk.InMemorySessionStore()

    async def run() -> tuple[Any, list[Any]]:
        opts = sdk.ClaudeAgentOptions(
            cli_path=str(Path(sys.executable).with_name("agentx")),
            cwd=str(work),
            env={"AGENTX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(config)},
            session_store=store,
        )
        messages = [m async for m in sdk.query(prompt="hello", options=opts)]
        result = next(m for m in messages if type(m).__name__ == "ResultMessage")
        key = {"project_key": project_key(os.path.realpath(work)), "session_id": result.session_id}
        return result, list(await store.load(key) or [])

    result, entries = anyio.run(run)
    assert result.result == "hello"
    assert entries[0]["type"] == "session_header"
    stored = _stored(f"file://{home}/sessions", result.session_id)
    assert entries[1:] == stored and stored
    assert not any(e.get("type") == "transcript_mirror" for e in entries)
