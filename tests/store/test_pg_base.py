"""PostgreSQL connections and schema of the session store (DEC-STORE-1):
keepalives on every connection, the schema upgraded in place."""

from __future__ import annotations

from pathlib import Path

import psycopg

from agentx.sessions.store.header import _header_bytes
from agentx.sessions.store.pg_base import (
    _UPGRADES,
    KEEPALIVES,
    SCHEMA_VERSION,
    alive,
    connect,
    url_secrets,
)
from agentx.sessions.store.select import open_store
from tests.store.pg_cluster import Cluster
from tests.unit.sessions.test_sessions import header_for, seq_entry


def test_every_connection_has_tcp_keepalives(pg_url: str) -> None:
    conn = connect(pg_url, url_secrets(pg_url))
    try:
        parameters = conn.info.get_parameters()
        assert {name: parameters.get(name) for name in KEEPALIVES} == {
            name: str(value) for name, value in KEEPALIVES.items()
        }
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
    finally:
        conn.close()


def test_a_closed_connection_is_not_alive(pg_url: str) -> None:
    conn = connect(pg_url, url_secrets(pg_url))
    assert alive(conn)
    conn.close()
    assert not alive(conn)


def test_a_version_1_schema_is_upgraded_in_place(cluster: Cluster) -> None:
    """A session stored under version 1 reads back after the upgrade, and
    the blobs table of version 2 exists."""
    database = cluster.new_database()
    url = cluster.url(database)
    header = header_for()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE agentx_schema (version integer NOT NULL)")
        for statement in _UPGRADES[1]:
            conn.execute(statement.encode())
        conn.execute("INSERT INTO agentx_schema VALUES (1)")
        conn.execute(
            "INSERT INTO agentx_sessions VALUES (%s, %s, %s, nextval('agentx_change'))",
            (header.session_id, _header_bytes(header).decode(), header.cwd),
        )
    store = open_store(url, Path("/nonexistent"))
    try:
        store.append(header.session_id, [seq_entry(0)])
        assert store.read(header.session_id).header == header
        assert len(store.read(header.session_id).entries) == 1
    finally:
        store.close()
    assert cluster.psql("SELECT version FROM agentx_schema", database).split() == [
        str(SCHEMA_VERSION)
    ]
    assert cluster.psql("SELECT count(*) FROM agentx_blobs", database).strip() == "0"
