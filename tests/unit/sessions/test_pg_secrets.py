"""Every password form of a libpq connection joins the union (DEC-STORE-1, DEC-AUTH-3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx.sessions.store.pg_secrets import MAX_PASSFILE_BYTES, connection_secrets


@pytest.mark.parametrize(
    ("conninfo", "expected"),
    [
        pytest.param("postgresql://u@h/db", set(), id="no-password"),
        pytest.param("postgresql://u:p%40ss@h/db", {"p%40ss", "p@ss"}, id="user-info"),
        pytest.param("postgresql://u@h/db?password=q%2Bq", {"q%2Bq", "q+q"}, id="query"),
        pytest.param(
            "postgresql://u@h/db?host=/s&sslpassword=k3y&password=pw",
            {"k3y", "pw"},
            id="sslpassword-and-password",
        ),
        pytest.param("host=h user=u password='a b'", {"a b"}, id="key-value"),
        pytest.param("host=h password=", set(), id="key-value-empty"),
    ],
)
def test_password_forms(conninfo: str, expected: set[str]) -> None:
    assert connection_secrets(conninfo, {}) == expected | {conninfo}


def test_pgpassword_joins(tmp_path: Path) -> None:
    url = "postgresql://u@h/db"
    assert connection_secrets(url, {"PGPASSWORD": "envpw"}) == {url, "envpw"}


@pytest.mark.parametrize("where", ["parameter", "PGPASSFILE", "HOME"])
def test_every_password_of_the_passfile_joins(tmp_path: Path, where: str) -> None:
    passfile = tmp_path / ".pgpass"
    passfile.write_text("# a:b:c:d:commented\nh:5432:db:u:one\n*:*:*:*:t\\:w\\\\o\nshort:line\n")
    url = "postgresql://u@h/db"
    environ: dict[str, str] = {}
    if where == "parameter":
        url += f"?passfile={passfile}"
    elif where == "PGPASSFILE":
        environ["PGPASSFILE"] = str(passfile)
    else:
        environ["HOME"] = str(tmp_path)
    assert connection_secrets(url, environ) == {url, "one", "t:w\\o"}


def test_a_passfile_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    url = "postgresql://u@h/db"
    assert connection_secrets(url, {"PGPASSFILE": "/dev/zero"}) == {url}
    assert connection_secrets(url, {"PGPASSFILE": str(tmp_path / "absent")}) == {url}


def test_the_passfile_is_read_up_to_its_bound(tmp_path: Path) -> None:
    passfile = tmp_path / "pgpass"
    line = "h:1:d:u:inside\n"
    padding = "#" * (MAX_PASSFILE_BYTES - len(line) - 1) + "\n"
    passfile.write_text(padding + line + "h:1:d:u:beyond\n")
    found = connection_secrets("postgresql://h", {"PGPASSFILE": str(passfile)})
    assert "inside" in found and "beyond" not in found
