"""Fixtures of the store tests: one real PostgreSQL cluster per pytest
session, a fresh database per test, and the store backends by name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store import pg_cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[pg_cluster.Cluster]:
    if not pg_cluster.available():
        pytest.skip(
            f"PostgreSQL server binaries are absent ({pg_cluster.PG_BIN}); "
            ".ci/run installs Debian's postgresql package"
        )
    started = pg_cluster.start_cluster()
    try:
        yield started
    finally:
        pg_cluster.remove(started)


@pytest.fixture
def pg_url(cluster: pg_cluster.Cluster) -> str:
    """The URL of a fresh, empty database (trust authentication)."""
    return cluster.url(cluster.new_database())
