"""A throwaway PostgreSQL 15 cluster for the store tests (DEC-STORE-1).

Started once per pytest session in a temporary folder (``initdb``,
``pg_ctl``, a unix socket in that folder, no TCP); run as the ``postgres``
user when the tests run as root (the server refuses root). Autovacuum is
off: no background transaction takes an xid while ``test_group_commit``
counts the store's commits on the server's xid counter. Role ``agentx``
connects with trust; role ``guarded`` only with its password
(:data:`PASSWORD`), so redaction can be tested with a real secret.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PASSWORD = "pg-s3cret-Zq8v"
_PG_TIMEOUT_S = 120


def available() -> bool:
    return (PG_BIN / "initdb").exists() and (PG_BIN / "pg_ctl").exists()


def _as_server_user() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _run(*args: str) -> None:
    subprocess.run(
        [*_as_server_user(), *args], check=True, capture_output=True, timeout=_PG_TIMEOUT_S
    )


@dataclass
class Cluster:
    base: Path
    _names: itertools.count[int] = field(default_factory=itertools.count)

    @property
    def data(self) -> Path:
        return self.base / "data"

    def url(self, database: str, *, user: str = "agentx", password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{user}{secret}@/{database}?host={self.base}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        result = subprocess.run(
            [
                str(PG_BIN / "psql"),
                "-X",
                "-q",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
                self.url(database),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=_PG_TIMEOUT_S,
        )
        return result.stdout

    def new_database(self) -> str:
        """A fresh empty database; its name."""
        name = f"t{next(self._names)}"
        self.psql(f"CREATE DATABASE {name} OWNER agentx")
        return name

    def pg_ctl(self, action: str, *extra: str) -> None:
        _run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", *extra, action)

    def start(self) -> None:
        options = f"-k {self.base} -c listen_addresses='' -c max_connections=200 -c autovacuum=off"
        self.pg_ctl("start", "-l", str(self.base / "server.log"), "-o", options)

    def stop(self) -> None:
        self.pg_ctl("stop", "-m", "fast")


def start_cluster() -> Cluster:
    base = Path(tempfile.mkdtemp(prefix="agentx-pg-"))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    cluster = Cluster(base)
    _run(
        str(PG_BIN / "initdb"),
        "-D",
        str(cluster.data),
        "-U",
        "agentx",
        "--auth-local=trust",
        "--no-sync",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
    )
    hba = cluster.data / "pg_hba.conf"
    rules = "local all guarded scram-sha-256\nlocal all all trust\n"
    subprocess.run(
        [*_as_server_user(), "sh", "-c", f"printf '%s' '{rules}' > {hba}"],
        check=True,
        timeout=_PG_TIMEOUT_S,
    )
    cluster.start()
    cluster.psql(f"CREATE ROLE guarded LOGIN PASSWORD '{PASSWORD}'")
    return cluster


def remove(cluster: Cluster) -> None:
    try:
        cluster.stop()
    finally:
        shutil.rmtree(cluster.base, ignore_errors=True)
