"""End-to-end: the file store's sync barrier fails (DEC-STORE-6).

A real disk that fails under the session: an ext4 file system on a loop
device whose backing file lies on a small tmpfs, like a thin-provisioned
volume. Once the tmpfs is full, a transcript append still succeeds (it only
reaches the page cache) and the barrier's ``fsync`` gets the device's I/O
error. The results that waited for it are dropped, never written; the
session ends with exit 4 and one ERROR line naming the store's error; the
turn acknowledged before stays resumable once the disk is back.
"""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.agentx_process import DUPLEX, AgentxProcess, encode, is_result, run_once, user

#: The backing tmpfs, and the file system the loop device shows (larger:
#: the volume is overcommitted, as thin provisioning is).
BACKING_BYTES = 4 * 1024 * 1024
VOLUME_BYTES = 64 * 1024 * 1024


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False, timeout=60)


class Volume:
    """An ext4 file system on a loop device over a file on a small tmpfs."""

    def __init__(self, base: Path) -> None:
        self.backing = base / "backing"
        self.image = self.backing / "volume.img"
        self.mount = base / "volume"
        self.backing.mkdir()
        self.mount.mkdir()

    def start(self) -> None:
        size = f"size={BACKING_BYTES}"
        done = _run("mount", "-t", "tmpfs", "-o", size, "tmpfs", str(self.backing))
        if done.returncode != 0:
            pytest.skip(f"a failing disk needs root to mount a tmpfs ({done.stderr.strip()})")
        with self.image.open("wb") as image:
            image.truncate(VOLUME_BYTES)
        assert _run("mkfs.ext4", "-q", "-F", str(self.image)).returncode == 0
        self.attach()

    def attach(self) -> None:
        done = _run("mount", "-o", "loop,errors=continue", str(self.image), str(self.mount))
        if done.returncode != 0:
            pytest.skip(f"a failing disk needs a loop device ({done.stderr.strip()})")

    def fill_backing(self) -> Path:
        """Fill the tmpfs under the volume: its next write-back fails."""
        filler = self.backing / "filler"
        try:
            with filler.open("wb") as out:
                while True:
                    out.write(b"\0" * 65536)
                    out.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        return filler

    def stop(self) -> None:
        _run("umount", str(self.mount))
        _run("umount", "-l", str(self.backing))


@pytest.fixture
def volume(tmp_path: Path) -> Iterator[Volume]:
    made = Volume(tmp_path)
    try:
        made.start()
        yield made
    finally:
        made.stop()


def test_a_failed_fsync_at_the_barrier_drops_its_result_and_ends_with_4(
    volume: Volume, tmp_path: Path
) -> None:
    home = volume.mount / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    proc = AgentxProcess(DUPLEX, home=home, cwd=work)
    try:
        proc.send(user("stored"))
        first = proc.until(is_result)[-1]
        assert first["result"] == "stored"
        filler = volume.fill_backing()
        proc.send(user("never acknowledged"))
        rest = proc.rest()
        status = proc.wait()
    finally:
        proc.kill()
    assert not [r for r in rest if is_result(r)], rest
    assert "never acknowledged" not in str(rest)
    assert status == 4, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, proc.stderr
    assert "session store: the transcript could not be made durable" in errors[0]
    assert "transcript.jsonl: Input/output error (EIO)" in errors[0], errors
    assert "Traceback" not in proc.stderr
    # The disk is back (space freed, the volume mounted again): the
    # acknowledged turn resumes.
    _run("umount", str(volume.mount))
    filler.unlink()
    volume.attach()
    session = str(first["session_id"])
    resumed = run_once([*DUPLEX, "--resume", session], encode(user("again")), home=home, cwd=work)
    assert resumed.returncode == 0, resumed.stderr
    transcript = (home / "sessions" / session / "transcript.jsonl").read_text()
    assert "stored" in transcript and "again" in transcript
