"""End-to-end: ``--continue`` (DEC-CLI-5) resumes the newest session started in
this cwd, ignores other directories' sessions, and starts a new session when
the cwd has none."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from tests.e2e.agentx_process import (
    DUPLEX,
    Record,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)

CONTINUE = (*DUPLEX, "--continue")


def _run(home: Path, cwd: Path, args: tuple[str, ...], prompt: str) -> list[Record]:
    done = run_once(args, encode(user(prompt)), home=home, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return records_of(done.stdout)


def _session(home: Path, cwd: Path, prompt: str) -> str:
    session = str(uuid.uuid4())
    _run(home, cwd, (*DUPLEX, "--session-id", session), prompt)
    return session


def test_continue_picks_the_newest_session_of_this_cwd(home: Path, tmp_path: Path) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    _session(home, here, "older")
    newest = _session(home, here, "newer")
    _session(home, elsewhere, "another directory, written last")
    records = _run(home, here, CONTINUE, "and now?")
    assert {r["session_id"] for r in records} == {newest}
    transcript = home / "sessions" / newest / "transcript.jsonl"
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    # newer + answer, and now? + answer, each turn followed by its ledger entry
    assert [e["type"] for e in entries] == ["message", "message", "turn"] * 2


def test_continue_after_resuming_an_older_session_picks_that_one(
    home: Path, tmp_path: Path
) -> None:
    older = _session(home, tmp_path, "older")
    _session(home, tmp_path, "newer")
    _run(home, tmp_path, (*DUPLEX, "--resume", older), "back to the older one")
    records = _run(home, tmp_path, CONTINUE, "continue")
    assert {r["session_id"] for r in records} == {older}


def test_continue_without_a_session_here_starts_a_new_one(home: Path, tmp_path: Path) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    other = _session(home, elsewhere, "not here")
    records = _run(home, here, CONTINUE, "fresh start")
    (session,) = {r["session_id"] for r in records}
    assert session != other
    assert [r["result"] for r in records if is_result(r)] == ["fresh start"]
    assert (home / "sessions" / session / "header.json").exists()


def test_continue_fails_closed_when_the_newest_session_has_another_provider(
    home: Path, tmp_path: Path
) -> None:
    _session(home, tmp_path, "on the built-in local provider")
    write_auth(home, [{"id": "other", "type": "scripted", "model": "m"}])
    done = run_once(CONTINUE, encode(user("hi")), home=home, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"--continue: the session is bound to another provider (its provider id differs)" in (
        done.stderr
    )
