"""End-to-end: a working directory whose name is not valid UTF-8 starts a
session, with and without persistence; ``system/init`` and the stored
header name it with the bytes escaped (``\\xff``), and ``--continue`` finds
the session again from the same directory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    agentx_command,
    base_env,
    encode,
    is_result,
    records_of,
    user,
)


def _run(
    home: Path, cwd: bytes, *extra: str, prompt: str = "hello"
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*agentx_command(), *DUPLEX, *extra],
        input=encode(user(prompt)),
        capture_output=True,
        env=base_env(home),
        cwd=cwd,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("persist", [True, False], ids=["persisted", "no-persistence"])
def test_a_non_utf8_working_directory_works(home: Path, tmp_path: Path, persist: bool) -> None:
    work = os.fsencode(tmp_path) + b"/bad\xff dir"
    os.mkdir(work)
    extra = () if persist else ("--no-session-persistence",)
    done = _run(home, work, *extra)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stderr
    records = records_of(done.stdout)
    assert records[0]["subtype"] == "init"
    assert records[0]["cwd"] == f"{tmp_path}/bad\\xff dir"
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]
    if persist:
        again = _run(home, work, "--continue", prompt="again")
        assert again.returncode == 0, again.stderr.decode("utf-8", "replace")
        assert records_of(again.stdout)[0]["session_id"] == records[0]["session_id"]


def test_continue_never_takes_a_session_of_the_directory_its_escape_spells(
    home: Path, tmp_path: Path
) -> None:
    """DEC-CLI-5 ``--continue``: ``bad\\xff dir`` (a backslash, then ``xff``)
    is not the directory whose name has the byte 0xff, though both display
    as the same text; each continues its own session only."""
    byte_dir = os.fsencode(tmp_path) + b"/bad\xff dir"
    spelled_dir = os.fsencode(tmp_path) + b"/bad\\xff dir"
    os.mkdir(byte_dir)
    os.mkdir(spelled_dir)
    first = _run(home, byte_dir)
    assert first.returncode == 0, first.stderr.decode("utf-8", "replace")
    session = records_of(first.stdout)[0]["session_id"]
    other = _run(home, spelled_dir, "--continue", prompt="again")
    assert other.returncode == 0, other.stderr.decode("utf-8", "replace")
    assert records_of(other.stdout)[0]["session_id"] != session
    again = _run(home, byte_dir, "--continue", prompt="again")
    assert records_of(again.stdout)[0]["session_id"] == session
