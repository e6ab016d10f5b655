"""End-to-end: file-system faults over the real process (DECISIONS section 8,
DEC-STORE-1, DEC-HOME-1).

Before the protocol starts any file-system failure is exit 2 with one stderr
line naming the path and the OS error and nothing on stdout. During a
session a failed transcript append fails that turn with a result saying
why and one ERROR line, and that turn is never persisted afterwards, so a
resume never sends it to the model.

The faults are real: a full tmpfs (mounted when the test runs as root, as
here and in CI), the per-process file size limit (``RLIMIT_FSIZE``, any
user), a regular file where a directory must be, a directory where a file
must be.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import stat
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    agentx_command,
    base_env,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)
from tests.fakes.provider_server import ProviderServer, Reply, openai_text_stream

TMPFS_BYTES = 1024 * 1024


def _tmpfs(where: Path) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(
            "a full disk needs a small tmpfs, and mounting one needs root or "
            f"CAP_SYS_ADMIN ({mounted.stderr.strip() or 'mount failed'}); "
            "the RLIMIT_FSIZE tests cover the same paths"
        )
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB file system of its own."""
    yield from _tmpfs(tmp_path / "tmpfs")


def _fill(directory: Path) -> Path:
    """Write a file until the file system is full; returns it."""
    filler = directory / "filler"
    with filler.open("wb") as out:
        block = b"\0" * 65536
        try:
            while True:
                out.write(block)
                out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    # Whatever buffered tail is left did not fit either.
    return filler


def _one_line(stderr: bytes) -> str:
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


def _limited(fsize: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.RLIM_INFINITY))

    return limit


# --- before the protocol: exit 2, one line --------------------------------------------


def test_a_home_that_cannot_be_created_is_one_line_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    home = blocker / "home"
    proc = run_once(DUPLEX, encode(user("hi")), home=home, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == b""
    line = _one_line(proc.stderr)
    assert str(home) in line and "Not a directory" in line


def test_a_sessions_folder_replaced_by_a_file_is_one_line_and_exit_2(home: Path) -> None:
    (home / "sessions").write_text("in the way")
    proc = run_once(DUPLEX, encode(user("hi")), home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    line = _one_line(proc.stderr)
    assert str(home / "sessions") in line and "Not a directory" in line


def _stored_session(home: Path) -> tuple[str, Path]:
    proc = run_once(DUPLEX, encode(user("remember me")), home=home)
    assert proc.returncode == 0, proc.stderr
    session_id = records_of(proc.stdout)[0]["session_id"]
    return session_id, home / "sessions" / session_id


def test_resume_of_a_transcript_that_is_a_directory_is_one_line_and_exit_2(home: Path) -> None:
    session_id, directory = _stored_session(home)
    transcript = directory / "transcript.jsonl"
    transcript.unlink()
    transcript.mkdir()
    proc = run_once([*DUPLEX, "--resume", session_id], encode(user("again")), home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    line = _one_line(proc.stderr)
    assert str(transcript) in line and "Is a directory (EISDIR)" in line


@pytest.mark.parametrize(
    ("name", "damage", "problem"),
    [
        ("header.json", b"{not json", "session header"),
        ("transcript.jsonl", b"{broken\n{}\n", "transcript line 1"),
    ],
    ids=["header", "transcript"],
)
def test_resume_of_a_corrupt_session_names_the_file(
    home: Path, name: str, damage: bytes, problem: str
) -> None:
    session_id, directory = _stored_session(home)
    (directory / name).write_bytes(damage)
    proc = run_once([*DUPLEX, "--resume", session_id], encode(user("again")), home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    line = _one_line(proc.stderr)
    assert str(directory / name) in line and problem in line


def test_a_file_size_limit_at_start_is_one_line_and_exit_2(home: Path) -> None:
    """RLIMIT_FSIZE 0: the session header cannot be written (EFBIG)."""
    proc = subprocess.run(
        [*agentx_command(), *DUPLEX],
        input=encode(user("hi")),
        capture_output=True,
        env=base_env(home),
        cwd=home,
        timeout=30,
        check=False,
        preexec_fn=_limited(0),
    )
    assert proc.returncode == 2 and proc.stdout == b""
    line = _one_line(proc.stderr)
    assert "header.json" in line and "File too large (EFBIG)" in line
    assert not [p for p in (home / "sessions").iterdir() if not p.name.startswith(".")]


def test_a_full_disk_at_start_is_one_line_and_exit_2(tmpfs: Path) -> None:
    home = tmpfs / "home"
    home.mkdir()
    _fill(tmpfs)
    proc = run_once(DUPLEX, encode(user("hi")), home=home, cwd=tmpfs.parent)
    assert proc.returncode == 2 and proc.stdout == b""
    line = _one_line(proc.stderr)
    assert str(home) in line and "No space left on device (ENOSPC)" in line


# --- during a session: the failed turn fails, and stays failed --------------------------


def _auth(home: Path, url: str) -> None:
    write_auth(
        home,
        [
            {
                "id": "remote",
                "type": "openai",
                "model": "m",
                "endpoint": url + "/v1",
                "api_key": "sk-io-faults-key",
            }
        ],
    )


def _disk_full_mid_session(
    home: Path, work: Path, break_disk: Callable[[int], None], mend_disk: Callable[[int], None]
) -> None:
    """Turn 1 is saved, turn 2 meets the fault, turn 3 runs after it is
    mended; then a resumed session's model request holds turns 1 and 3 only."""
    with ProviderServer([Reply(chunks=openai_text_stream("noted"))]) as server:
        _auth(home, server.url)
        proc = AgentxProcess(DUPLEX, home=home, cwd=work)
        try:
            proc.send(user("first prompt"))
            first = proc.until(is_result)[-1]
            break_disk(proc.proc.pid)
            # Longer than a page: it cannot fit in the slack of the
            # transcript's last allocated block.
            proc.send(user("doomed prompt " + "x" * 8192))
            doomed = proc.until(is_result)[-1]
            mend_disk(proc.proc.pid)
            proc.send(user("third prompt"))
            third = proc.until(is_result)[-1]
            proc.close_stdin()
            proc.rest()
            assert proc.wait() == 0
        finally:
            proc.kill()
        stderr = proc.stderr
        session_id = first["session_id"]
        resumed = run_once(
            [*DUPLEX, "--resume", session_id], encode(user("fourth prompt")), home=home, cwd=work
        )
        assert resumed.returncode == 0, resumed.stderr
        last_request = json.dumps(server.requests[-1].body)
    assert first["subtype"] == "success" and third["subtype"] == "success"
    assert doomed["subtype"] == "error_during_execution"
    assert any(e.startswith("transcript write failed: ") for e in doomed["errors"]), doomed
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "the turn is not saved" in errors[0], stderr
    transcript = (home / "sessions" / session_id / "transcript.jsonl").read_text()
    assert "first prompt" in transcript and "third prompt" in transcript
    assert "doomed prompt" not in transcript
    assert "first prompt" in last_request and "third prompt" in last_request
    assert "doomed prompt" not in last_request


def test_a_file_size_limit_mid_session_fails_that_turn_only(home: Path, tmp_path: Path) -> None:
    """RLIMIT_FSIZE set on the running process just past the transcript's
    size: the next append gets a short write then EFBIG."""
    work = tmp_path / "work"
    work.mkdir()

    def transcript_size() -> int:
        (directory,) = (home / "sessions").iterdir()
        return (directory / "transcript.jsonl").stat().st_size

    def limit(pid: int) -> None:
        resource.prlimit(
            pid, resource.RLIMIT_FSIZE, (transcript_size() + 8, resource.RLIM_INFINITY)
        )

    def lift(pid: int) -> None:
        resource.prlimit(
            pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        )

    _disk_full_mid_session(home, work, limit, lift)


def test_a_full_disk_mid_session_fails_that_turn_only(tmpfs: Path, tmp_path: Path) -> None:
    home = tmpfs / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    fillers: list[Path] = []
    _disk_full_mid_session(
        home,
        work,
        lambda pid: fillers.append(_fill(tmpfs)),
        lambda pid: fillers.pop().unlink(),
    )


# --- DEC-HOME-1: private folders --------------------------------------------------


def _run_masked(args: list[str], home: Path, work: Path, mask: int) -> None:
    proc = subprocess.run(
        [*agentx_command(), *DUPLEX, *args],
        input=encode(user("hi")),
        capture_output=True,
        env=base_env(home),
        cwd=work,
        timeout=30,
        check=False,
        preexec_fn=lambda: _set_umask(mask),
    )
    assert proc.returncode == 0, proc.stderr


def _set_umask(mask: int) -> None:
    os.umask(mask)


def _folders(home: Path) -> dict[str, Path]:
    return {str(p.relative_to(home)): p for p in home.rglob("*") if p.is_dir()}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


MASKS = pytest.mark.parametrize("mask", [0o000, 0o022], ids=["umask-000", "umask-022"])


@MASKS
def test_a_fresh_home_and_every_folder_in_it_are_0700(tmp_path: Path, mask: int) -> None:
    """DEC-HOME-1 under a permissive umask: the home (and the missing parent
    agentx made for it), sessions/, blobs/, blobs/sha256, blobs/tmp and the
    session folder."""
    home = tmp_path / "fresh" / "home"
    work = tmp_path / "work"
    work.mkdir()
    session_id = str(uuid.uuid4())
    _run_masked(["--session-id", session_id], home, work, mask)
    folders = _folders(home)
    expected = {"sessions", "blobs", "blobs/sha256", "blobs/tmp", f"sessions/{session_id}"}
    assert expected <= set(folders)
    for folder in (home.parent, home, *folders.values()):
        assert _mode(folder) == 0o700, folder


@MASKS
def test_the_background_task_folder_is_0700(home: Path, tmp_path: Path, mask: int) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bash = {"command": "true", "run_in_background": True}
    turns = [
        {"steps": [{"tool_use": {"name": "Bash", "input": bash}}]},
        {"steps": [{"text": "ok"}]},
    ]
    script = write_script(tmp_path / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    session_id = str(uuid.uuid4())
    args = ["--session-id", session_id, "--permission-mode", "bypassPermissions"]
    _run_masked(args, home, work, mask)
    folders = _folders(home)
    assert f"sessions/{session_id}/tasks" in folders
    for folder in folders.values():
        assert _mode(folder) == 0o700, folder
