"""The home's blob store opened at start and loaded at its first use
(DEC-HOME-1, DEC-CLI-3: :mod:`agentx.media.deferred`)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentx.media.blobs import BlobNotFound, BlobStore, StorageFull
from agentx.media.deferred import LazyBlobStore

OPEN_ONLY = """
import sys
from pathlib import Path
from agentx.media.deferred import LazyBlobStore
store = LazyBlobStore(Path(sys.argv[1]))
assert "agentx.media.blobs" not in sys.modules, "opened without loading the store"
blob = store.put_bytes(b"first")
assert "agentx.media.blobs" in sys.modules
print(blob.storage_id)
"""


def _dead_pid() -> str:
    done = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_opening_sweeps_and_makes_the_folder_before_any_use(tmp_path: Path) -> None:
    """Crash recovery stays at start: a gone writer's partial file is removed
    and the folder is 0700 when the store is opened, before its first use."""
    objects = tmp_path / "blobs" / "sha256"
    objects.mkdir(parents=True)
    stale = objects / f".partial-{_dead_pid()}-abc"
    stale.write_bytes(b"half a blob")
    live = objects / f".partial-{os.getpid()}-xyz"
    live.write_bytes(b"in progress")
    LazyBlobStore(tmp_path / "blobs")
    assert not stale.exists()
    assert live.exists()
    fresh = tmp_path / "new-home" / "blobs"
    LazyBlobStore(fresh)
    assert stat.S_IMODE((fresh / "sha256").stat().st_mode) == 0o700


def test_the_store_loads_at_the_first_use(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_ONLY, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "blob_sha256_" + hashlib.sha256(b"first").hexdigest()


def test_it_answers_as_the_store_does(tmp_path: Path) -> None:
    lazy = LazyBlobStore(tmp_path)
    assert lazy.max_bytes == 512 * 1024 * 1024  # WIRE-018's unique-bytes bound
    assert lazy.used_bytes == 0
    src = tmp_path / "upload.part"
    src.write_bytes(b"from a file")
    blob = lazy.put_bytes(b"hello")
    from_file = lazy.put_file(src)
    assert blob.storage_id in lazy
    assert "blob_sha256_" + "0" * 64 not in lazy
    assert lazy.read(from_file.storage_id) == b"from a file"
    assert lazy.used_bytes == len(b"hello") + len(b"from a file")
    with pytest.raises(BlobNotFound):
        lazy.read("blob_sha256_" + "0" * 64)
    reopened = BlobStore(tmp_path)
    assert reopened.read(blob.storage_id) == b"hello"
    assert reopened.used_bytes == lazy.used_bytes


def test_the_bound_holds_through_it(tmp_path: Path) -> None:
    """WIRE-018: at the bound a blob is stored, one byte past it is refused."""
    lazy = LazyBlobStore(tmp_path)
    store = lazy._opened()
    store.max_bytes = 10
    lazy.put_bytes(b"0123456789")
    with pytest.raises(StorageFull):
        lazy.put_bytes(b"x")
    assert lazy.used_bytes == 10


def test_threads_that_ask_first_share_one_store(tmp_path: Path) -> None:
    lazy = LazyBlobStore(tmp_path)
    barrier = threading.Barrier(8)
    seen: list[BlobStore] = []
    lock = threading.Lock()

    def first() -> None:
        barrier.wait(timeout=30)
        store = lazy._opened()
        with lock:
            seen.append(store)

    threads = [threading.Thread(target=first) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(seen) == 8
    assert all(store is seen[0] for store in seen)


VERDICT = """
import sys
from pathlib import Path
from agentx.media.deferred import RuntimeVerdict
verdict = RuntimeVerdict(Path(sys.argv[1]))
assert "agentx.media.runtime_check" not in sys.modules, "held without loading the check"
first = verdict.problem()
assert "agentx.media.runtime_check" in sys.modules
assert verdict.problem() == first  # decided once
print(repr(first))
"""


def test_the_runtime_verdict_runs_the_check_at_its_first_use(tmp_path: Path) -> None:
    """MOD-A14B: held from start, decided by the first call, once; a passing
    verdict is then remembered for the next start."""
    done = subprocess.run(
        [sys.executable, "-c", VERDICT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
    assert (tmp_path / "runtime-qualified").is_file()
