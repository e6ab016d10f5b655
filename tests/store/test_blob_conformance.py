"""Blob store conformance (DEC-STORE-1, WIRE-018, WIRE-022): the same tests
on the home's blob files and on the PostgreSQL session store's blobs.

Each test opens blobs with :func:`agentx.sessions.store.select.open_blobs`, as agentx
does; a second store on the same URL stands for another process or machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentx.media.blobs import BlobNotFound, Blobs, StorageFull
from agentx.sessions.store.pg_blobs import PostgresBlobStore
from agentx.sessions.store.select import open_blobs
from tests.store.pg_cluster import Cluster

NOWHERE = Path("/nonexistent-agentx-home")

Opener = Callable[..., Blobs]


@pytest.fixture(params=["files", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "files":
        return f"file://{tmp_path}/sessions"
    pg_url: str = request.getfixturevalue("pg_url")
    return pg_url


@pytest.fixture
def opener(url: str) -> Iterator[Opener]:
    opened: list[Blobs] = []

    def make(max_bytes: int | None = None) -> Blobs:
        blobs = open_blobs(url, NOWHERE)
        if max_bytes is not None:
            # Both stores take the bound as an attribute (WIRE-018's 512 MiB by default).
            blobs.max_bytes = max_bytes  # type: ignore[misc]
        opened.append(blobs)
        return blobs

    yield make
    for blobs in opened:
        if isinstance(blobs, PostgresBlobStore):
            blobs.close()


def test_bytes_are_named_by_their_sha256_and_read_back(opener: Opener) -> None:
    blobs = opener()
    stored = blobs.put_bytes(b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    assert (stored.storage_id, stored.sha256, stored.size_bytes) == (
        f"blob_sha256_{digest}",
        digest,
        5,
    )
    assert blobs.read(stored.storage_id) == b"hello"
    assert stored.storage_id in blobs
    assert blobs.max_bytes == 512 * 1024 * 1024


def test_a_file_is_stored_as_its_bytes(opener: Opener, tmp_path: Path) -> None:
    src = tmp_path / "image.bin"
    src.write_bytes(bytes(range(256)) * 4096)
    stored = opener().put_file(src)
    assert opener().read(stored.storage_id) == src.read_bytes()


def test_another_process_reads_what_one_stored(opener: Opener) -> None:
    """A session resumed on another machine finds its attachments."""
    stored = opener().put_bytes(b"\x89PNG made elsewhere")
    elsewhere = opener()
    assert stored.storage_id in elsewhere
    assert elsewhere.read(stored.storage_id) == b"\x89PNG made elsewhere"


def test_the_same_bytes_are_stored_once(opener: Opener) -> None:
    blobs = opener(max_bytes=10)
    first = blobs.put_bytes(b"0123456789")
    assert blobs.put_bytes(b"0123456789") == first
    assert blobs.used_bytes == 10
    assert opener(max_bytes=10).put_bytes(b"0123456789") == first


def test_the_bound_holds_at_the_limit_and_refuses_one_past(opener: Opener) -> None:
    blobs = opener(max_bytes=10)
    blobs.put_bytes(b"12345")
    with pytest.raises(StorageFull):
        blobs.put_bytes(b"abcdef")
    assert blobs.used_bytes == 5
    refused = "blob_sha256_" + hashlib.sha256(b"abcdef").hexdigest()
    assert refused not in blobs
    blobs.put_bytes(b"abcde")
    assert blobs.used_bytes == 10


@pytest.mark.parametrize(
    "storage_id",
    [
        "blob_sha256_" + "0" * 64,
        "blob_sha256_" + "A" * 64,
        "blob_sha256_" + "0" * 63,
        "blob_sha256_../../etc/passwd",
        "sha256_" + "0" * 64,
        "",
    ],
    ids=["unknown", "upper-case", "short", "traversal", "no-prefix", "empty"],
)
def test_unknown_and_malformed_ids_are_not_found(opener: Opener, storage_id: str) -> None:
    blobs = opener()
    blobs.put_bytes(b"something")
    assert storage_id not in blobs
    with pytest.raises(BlobNotFound):
        blobs.read(storage_id)


# -- PostgreSQL only ------------------------------------------------------------------


def test_a_row_changed_behind_agentx_is_not_read_back(cluster: Cluster) -> None:
    database = cluster.new_database()
    blobs = PostgresBlobStore(cluster.url(database))
    try:
        stored = blobs.put_bytes(b"original bytes")
        cluster.psql("UPDATE agentx_blobs SET data = 'tampered'::bytea", database)
        with pytest.raises(BlobNotFound):
            blobs.read(stored.storage_id)
    finally:
        blobs.close()


def test_blobs_survive_a_server_restart(cluster: Cluster) -> None:
    """The connection a restart closed is opened again for the next blob."""
    blobs = PostgresBlobStore(cluster.url(cluster.new_database()))
    try:
        before = blobs.put_bytes(b"before the restart")
        cluster.stop()
        cluster.start()
        after = blobs.put_bytes(b"after the restart")
        assert blobs.read(before.storage_id) == b"before the restart"
        assert blobs.read(after.storage_id) == b"after the restart"
    finally:
        blobs.close()
