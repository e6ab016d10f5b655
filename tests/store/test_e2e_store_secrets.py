"""End-to-end: every password form of the store's connection is a credential
(DEC-STORE-1, DEC-AUTH-3): ``?password=`` in the URL, ``PGPASSWORD`` and the
password file's entries. Their echo latches the output guard (exit 3) and
never reaches stdout or stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.agentx_process import DUPLEX, encode, run_once, user
from tests.store.pg_cluster import PASSWORD, Cluster


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def _guarded(cluster: Cluster) -> str:
    database = cluster.new_database()
    cluster.psql(
        f"GRANT ALL ON SCHEMA public TO guarded; ALTER DATABASE {database} OWNER TO guarded"
    )
    return database


@pytest.mark.parametrize("form", ["query", "pgpassword", "passfile"])
def test_a_store_password_in_any_form_is_guarded(
    cluster: Cluster, home: Path, tmp_path: Path, form: str
) -> None:
    database = _guarded(cluster)
    url = cluster.url(database, user="guarded")
    env: dict[str, str] = {}
    if form == "query":
        url += f"&password={PASSWORD}"
    elif form == "pgpassword":
        env["PGPASSWORD"] = PASSWORD
    else:
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"# comment\n*:*:*:guarded:{PASSWORD}\n")
        passfile.chmod(0o600)
        env["PGPASSFILE"] = str(passfile)
    done = run_once(
        [*DUPLEX, "--session-store", url],
        encode(user("fine")) + encode(user(f"the password is {PASSWORD}")),
        home=home,
        env=env,
    )
    assert done.returncode == 3, done.stderr
    assert b'"fine"' in done.stdout  # the store worked: the first turn was answered
    assert PASSWORD.encode() not in done.stdout
    assert PASSWORD.encode() not in done.stderr
