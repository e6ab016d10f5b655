"""The content-addressed blob store: dedup, the unique-bytes bound, crash safety."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentx.config.home import sweep_stale
from agentx.media.blobs import BlobNotFound, BlobStore, StorageFull


def storage_id(data: bytes) -> str:
    return "blob_sha256_" + hashlib.sha256(data).hexdigest()


def test_put_bytes_is_content_addressed(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    blob = store.put_bytes(b"hello")
    assert blob.storage_id == storage_id(b"hello")
    assert blob.sha256 == hashlib.sha256(b"hello").hexdigest()
    assert blob.size_bytes == 5
    assert store.read(blob.storage_id) == b"hello"
    assert blob.storage_id in store
    assert str(tmp_path) not in repr(blob), "no path in what a manifest sees"


def test_put_file_streams_a_copy_and_leaves_the_source(tmp_path: Path) -> None:
    src = tmp_path / "upload.part"
    payload = os.urandom(3 * 1024 * 1024 + 17)
    src.write_bytes(payload)
    store = BlobStore(tmp_path / "blobs")
    blob = store.put_file(src)
    assert blob.storage_id == storage_id(payload)
    assert store.read(blob.storage_id) == payload
    assert src.read_bytes() == payload


def test_identical_bytes_are_stored_and_counted_once(tmp_path: Path) -> None:
    store = BlobStore(tmp_path, max_bytes=10)
    first = store.put_bytes(b"0123456789")
    src = tmp_path / "same"
    src.write_bytes(b"0123456789")
    assert store.put_file(src) == first
    assert store.put_bytes(b"0123456789") == first
    assert store.used_bytes == 10
    assert len(list((tmp_path / "sha256").iterdir())) == 1


@pytest.mark.parametrize(
    ("sizes", "full_at"),
    [((6, 4), None), ((6, 5), 1), ((11,), 0), ((10,), None)],
    ids=["fills-exactly", "one-past", "single-one-past", "single-at-limit"],
)
def test_unique_bytes_bound_at_the_limit_and_one_past(
    tmp_path: Path, sizes: tuple[int, ...], full_at: int | None
) -> None:
    store = BlobStore(tmp_path, max_bytes=10)
    for index, size in enumerate(sizes):
        data = bytes([index + 1]) * size
        if index == full_at:
            with pytest.raises(StorageFull):
                store.put_bytes(data)
            assert storage_id(data) not in store
        else:
            store.put_bytes(data)
    names = [p.name for p in (tmp_path / "sha256").iterdir()]
    assert not any(n.startswith(".partial-") for n in names), "nothing written when full"
    assert store.used_bytes == sum(s for i, s in enumerate(sizes) if i != full_at)


def test_bound_applies_to_put_file_before_writing(tmp_path: Path) -> None:
    src = tmp_path / "big"
    src.write_bytes(b"x" * 11)
    store = BlobStore(tmp_path / "blobs", max_bytes=10)
    with pytest.raises(StorageFull):
        store.put_file(src)
    assert list((tmp_path / "blobs" / "sha256").iterdir()) == []


def test_default_bound_is_512_mib(tmp_path: Path) -> None:
    assert BlobStore(tmp_path).max_bytes == 512 * 1024 * 1024


def test_reopen_counts_existing_blobs(tmp_path: Path) -> None:
    BlobStore(tmp_path, max_bytes=10).put_bytes(b"abcdef")
    reopened = BlobStore(tmp_path, max_bytes=10)
    assert reopened.used_bytes == 6
    assert reopened.read(storage_id(b"abcdef")) == b"abcdef"
    with pytest.raises(StorageFull):
        reopened.put_bytes(b"12345")


@pytest.mark.parametrize(
    "bad_id",
    [
        storage_id(b"never stored"),
        "blob_sha256_" + "G" * 64,
        "blob_sha256_../../etc/passwd",
        "sha256_" + "0" * 64,
        "",
    ],
    ids=["absent", "not-hex", "traversal", "wrong-prefix", "empty"],
)
def test_read_unknown_or_malformed_id(tmp_path: Path, bad_id: str) -> None:
    store = BlobStore(tmp_path)
    with pytest.raises(BlobNotFound):
        store.read(bad_id)
    assert bad_id not in store


def test_leftover_temp_files_of_dead_writers_are_removed_at_open(tmp_path: Path) -> None:
    """A crash between write and rename leaves a ``.partial-<pid>-`` file;
    it is invisible as a blob and removed at the next open. A live
    writer's file (this process) is kept."""
    objects = tmp_path / "sha256"
    objects.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = objects / f".partial-{dead.stdout.strip()}-abc"
    stale.write_bytes(b"half a blob")
    junk = objects / ".partial-notapid-x"
    junk.write_bytes(b"?")
    live = objects / f".partial-{os.getpid()}-xyz"
    live.write_bytes(b"in progress")
    store = BlobStore(tmp_path)
    assert not stale.exists()
    assert not junk.exists()
    assert live.exists()
    assert store.used_bytes == 0


def test_sweep_stale_removes_dead_directories(tmp_path: Path) -> None:
    gone = tmp_path / "upl-999999999-a"
    gone.mkdir()
    (gone / "x.part").write_bytes(b"x")
    mine = tmp_path / f"upl-{os.getpid()}-b"
    mine.mkdir()
    assert sweep_stale(tmp_path, "upl-") == 1
    assert not gone.exists()
    assert mine.exists()


_WRITER = """
import os, sys
from pathlib import Path
from agentx.media.blobs import BlobStore
store = BlobStore(Path(sys.argv[1]))
n = 0
while True:
    blob = store.put_bytes(os.urandom(64 * 1024) + n.to_bytes(8, "big"))
    n += 1
    if n == 3:
        print("ready", flush=True)
"""


def test_a_killed_writer_leaves_only_whole_blobs(tmp_path: Path) -> None:
    """SIGKILL a real process in the middle of its write loop: every visible
    blob's bytes hash to its name, and reopening cleans the partial files."""
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    writer.kill()
    writer.wait(timeout=30)
    store = BlobStore(tmp_path)
    entries = list((tmp_path / "sha256").iterdir())
    assert len(entries) >= 3
    for entry in entries:
        assert hashlib.sha256(entry.read_bytes()).hexdigest() == entry.name
    assert store.used_bytes == sum(e.stat().st_size for e in entries)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=64), max_size=12))
def test_used_bytes_is_the_sum_of_distinct_blobs(tmp_path: Path, blobs: list[bytes]) -> None:
    root = tmp_path / hashlib.sha256(repr(blobs).encode()).hexdigest()
    store = BlobStore(root)
    for data in blobs:
        assert store.read(store.put_bytes(data).storage_id) == data
    assert store.used_bytes == sum(len(d) for d in set(blobs))


def test_the_size_index_is_read_on_first_use_not_at_open(tmp_path: Path) -> None:
    """DEC-CLI-3: opening the store stats no blob (a text session never
    lists it); the first question about sizes or ids reads them all."""
    objects = tmp_path / "sha256"
    objects.mkdir()
    name = "ab" * 32
    (objects / name).write_bytes(b"x" * 10)
    store = BlobStore(tmp_path)
    (objects / name).write_bytes(b"x" * 25)  # changed after the open
    assert store.used_bytes == 25
    assert f"blob_sha256_{name}" in store
