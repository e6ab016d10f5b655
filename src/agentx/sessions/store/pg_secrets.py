"""The secrets of a PostgreSQL connection (DEC-STORE-1, DEC-AUTH-3).

Every password form libpq accepts joins the credential union, so no tool,
hook or model can print it: the whole connection string, the user-info
password of a URL (raw and percent-decoded), the ``password`` and
``sslpassword`` parameters (``?password=`` in a URL, ``password=`` in a
key=value string; raw and decoded), ``PGPASSWORD``, and every password in
the password file libpq would read (``passfile``, else ``PGPASSFILE``, else
``~/.pgpass``). Pure but for the one bounded read of that file; psycopg is
imported only to parse a key=value string.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

#: libpq connection parameters whose values are secrets.
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
#: The password file is read up to this many bytes (it is a small table).
MAX_PASSFILE_BYTES = 1_048_576


def connection_secrets(conninfo: str, environ: Mapping[str, str]) -> frozenset[str]:
    """The credential literals of ``conninfo`` (a URL or a key=value string)
    and of the libpq environment ``environ`` (DEC-AUTH-3)."""
    found = {conninfo}
    parameters = _url_parameters(conninfo, found) if "://" in conninfo else _keywords(conninfo)
    found.update(value for name, value in parameters.items() if name in SECRET_PARAMETERS)
    found.add(environ.get("PGPASSWORD", ""))
    found.update(_passfile_passwords(_passfile(parameters, environ)))
    return frozenset(literal for literal in found if literal)


def _url_parameters(url: str, found: set[str]) -> dict[str, str]:
    """The query parameters of a URL; its user-info password and the raw
    spellings of its secret parameters go into ``found``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return {}
    if password:
        found |= {password, unquote(password)}
    for pair in parts.query.split("&"):
        name, _, raw = pair.partition("=")
        if unquote(name) in SECRET_PARAMETERS:
            found.add(raw)
    return {name: value for name, value in parse_qsl(parts.query)}


def _keywords(conninfo: str) -> dict[str, str]:
    """The parameters of a key=value connection string, as libpq reads them."""
    from psycopg import ProgrammingError  # noqa: PLC0415 - psycopg only when a store is chosen
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415

    try:
        parsed = conninfo_to_dict(conninfo)
    except ProgrammingError:
        return {}
    return {name: str(value) for name, value in parsed.items() if value is not None}


def _passfile(parameters: Mapping[str, str], environ: Mapping[str, str]) -> Path | None:
    named = parameters.get("passfile") or environ.get("PGPASSFILE")
    if named:
        return Path(named)
    home = environ.get("HOME")
    return Path(home) / ".pgpass" if home else None


def _passfile_passwords(path: Path | None) -> Iterator[str]:
    """Every password of a libpq password file (``host:port:db:user:password``
    lines, ``\\:`` and ``\\\\`` escaped); nothing when it is not a readable
    regular file."""
    if path is None:
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return
        text = handle.read(MAX_PASSFILE_BYTES).decode("utf-8", "replace")
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        fields = _fields(line)
        if len(fields) >= 5:
            yield ":".join(fields[4:])


def _fields(line: str) -> list[str]:
    fields = [""]
    escaped = False
    for char in line:
        if escaped:
            fields[-1] += char
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":":
            fields.append("")
        else:
            fields[-1] += char
    return fields
