"""``--fork-session`` on both stores (DEC-CLI-5, DEC-STORE-1): the resumed
session is copied under a new id and continued; the original is unchanged
and not taken (so it may stay open in another process)."""

from __future__ import annotations

import uuid
from pathlib import Path

from agentx.messages.frozen import thaw
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, encode, is_result, records_of, run_once, user


def _texts(url: str, session_id: str) -> list[str]:
    store = open_store(url, Path("/nonexistent"))
    try:
        entries = store.read(session_id).entries
    finally:
        store.close()
    messages = [thaw(e) for e in entries if e["type"] == "message"]
    return [block["text"] for e in messages for block in e["content"]]


def _run(home: Path, url: str, prompt: str, *args: str) -> tuple[str, str]:
    proc = run_once((*DUPLEX, "--session-store", url, *args), encode(user(prompt)), home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    return records[0]["session_id"], next(r for r in records if is_result(r))["result"]


def test_fork_session_copies_and_continues(tmp_path: Path, url: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    original, _ = _run(home, url, "first")
    forked, result = _run(home, url, "second", "--resume", original, "--fork-session")
    assert forked != original and result == "second"
    assert _texts(url, original) == ["first", "first"]
    assert _texts(url, forked) == ["first", "first", "second", "second"]
    # The fork is a session of its own: resuming it goes on from the fork.
    again, _ = _run(home, url, "third", "--resume", forked)
    assert again == forked
    assert _texts(url, forked)[-2:] == ["third", "third"]
    assert _texts(url, original) == ["first", "first"]


def test_fork_session_takes_the_session_id_given(tmp_path: Path, url: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    original, _ = _run(home, url, "first")
    chosen = str(uuid.uuid4())
    forked, _ = _run(
        home, url, "second", "--resume", original, "--fork-session", "--session-id", chosen
    )
    assert forked == chosen
    assert _texts(url, chosen) == ["first", "first", "second", "second"]


def test_fork_session_needs_a_session_to_fork(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    proc = run_once((*DUPLEX, "--fork-session"), b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    assert "--fork-session requires --resume or --continue" in proc.stderr.decode()
