"""Fixtures of the store tests: one real PostgreSQL cluster per pytest
session, a fresh database per test, and the store backends by name (the
conformance suite's ``url``, ``opener`` and ``store``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.select import open_store
from tests.store import pg_cluster
from tests.store.conformance import NOWHERE, Opener
from tests.unit.sessions.test_sessions import header_for


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


@pytest.fixture(params=["files", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "files":
        return f"file://{tmp_path}/sessions"
    pg_url: str = request.getfixturevalue("pg_url")
    return pg_url


@pytest.fixture
def opener(url: str) -> Iterator[Opener]:
    opened: list[SessionStore] = []

    def make() -> SessionStore:
        store = open_store(url, NOWHERE)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> SessionStore:
    created = opener()
    created.create(header_for())
    return created


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[SessionStore]:
    """A PostgreSQL store holding one session (``header_for()``)."""
    store = open_store(pg_url, NOWHERE)
    store.create(header_for())
    yield store
    store.close()
