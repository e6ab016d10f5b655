"""Choosing the session store (DEC-STORE-1).

``--session-store URL`` wins over ``AGENTX_SESSION_STORE``; with neither
the local files under ``$AGENTX_HOME/sessions`` are the store. A URL is
``postgresql://...`` (or ``postgres://...``), or ``file:///path`` for a
sessions directory (what ``agentx sessions copy`` names). The URL is never
echoed: its literals join the output guard's credential union
(:func:`store_secrets`, DEC-AUTH-3).

Attachment blobs follow the sessions (:func:`open_blobs`): the database's
``agentx_blobs`` for PostgreSQL, else the ``blobs`` folder beside the
sessions folder (``$AGENTX_HOME/blobs`` for the home's files).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from agentx.media.deferred import LazyBlobStore
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionError
from agentx.sessions.store.files import SESSIONS_DIR_NAME
from agentx.sessions.store.files import SessionStore as FileStore

if TYPE_CHECKING:
    from agentx.media.blobs import Blobs

ENV_VAR = "AGENTX_SESSION_STORE"
_POSTGRES_SCHEMES = ("postgresql", "postgres")
#: DEC-HOME-1: the blobs folder beside the sessions folder.
BLOBS_DIR_NAME = "blobs"


class StoreUrlError(SessionError):
    """The store URL names no store agentx knows (the URL is not repeated)."""


def store_url(flag: str | None, environ: Mapping[str, str]) -> str | None:
    """The chosen store URL: the flag, else the environment, else ``None``."""
    if flag is not None:
        return flag
    return environ.get(ENV_VAR) or None


def _scheme(url: str) -> str:
    return url.partition("://")[0].lower() if "://" in url else ""


def store_secrets(url: str | None, environ: Mapping[str, str]) -> frozenset[str]:
    """The credential literals of a PostgreSQL store: the URL and every
    password form libpq would use (DEC-STORE-1, DEC-AUTH-3)."""
    if url is None or _scheme(url) not in _POSTGRES_SCHEMES:
        return frozenset()
    from agentx.sessions.store.pg_secrets import connection_secrets  # noqa: PLC0415

    return connection_secrets(url, environ)


def _sessions_dir(url: str) -> Path:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost") or not parts.path:
        raise StoreUrlError("a file:// session store URL names an absolute local path")
    return Path(unquote(parts.path))


def open_blobs(url: str | None, home: Path) -> Blobs:
    """The attachment blobs of the store ``url`` names (DEC-STORE-1).

    Raises :class:`~agentx.sessions.store.errors.SessionError` (credential-free) or
    ``OSError`` for the files.
    """
    if url is None:
        return LazyBlobStore(home / BLOBS_DIR_NAME)
    scheme = _scheme(url)
    if scheme in _POSTGRES_SCHEMES:
        from agentx.sessions.store.pg_blobs import PostgresBlobStore  # noqa: PLC0415 - psycopg only when chosen

        return PostgresBlobStore(url)
    if scheme == "file":
        return LazyBlobStore(_sessions_dir(url).parent / BLOBS_DIR_NAME)
    raise StoreUrlError("the session store URL is neither postgresql:// nor file://")


def sessions_root(url: str | None, home: Path) -> Path | None:
    """The sessions folder of the file store ``url`` names (the home's for
    ``None``); None for PostgreSQL."""
    if url is None:
        return home / SESSIONS_DIR_NAME
    if _scheme(url) == "file":
        return _sessions_dir(url)
    return None


def existing_store(url: str | None, home: Path) -> SessionStore | None:
    """The store ``url`` names for reading only: nothing is created. None for
    the home's files when the home has no sessions yet; a ``file://`` URL
    must name an existing sessions folder, and naming an AgentX home instead
    says which folder to name (DEC-STORE-5)."""
    if url is None:
        root = home / SESSIONS_DIR_NAME
        return FileStore(root, create=False) if root.is_dir() else None
    if _scheme(url) != "file":
        return open_store(url, home)
    root = _sessions_dir(url)
    if not root.is_dir():
        raise StoreUrlError(f"{root} is not a sessions folder (it does not exist)")
    if (root / SESSIONS_DIR_NAME).is_dir():
        raise StoreUrlError(
            f"{root} is an AgentX home, not its sessions folder: "
            f"name file://{root / SESSIONS_DIR_NAME}"
        )
    return FileStore(root, create=False)


def open_store(url: str | None, home: Path) -> SessionStore:
    """The store ``url`` names (the home's files for ``None``).

    PostgreSQL (and psycopg) is imported only here, when it is chosen.
    Raises :class:`~agentx.sessions.store.errors.SessionError` (credential-free) or
    ``OSError`` for the files.
    """
    if url is None:
        return FileStore(home / SESSIONS_DIR_NAME)
    scheme = _scheme(url)
    if scheme in _POSTGRES_SCHEMES:
        from agentx.sessions.store.postgres import PostgresStore  # noqa: PLC0415 - psycopg only when chosen

        return PostgresStore(url)
    if scheme == "file":
        return FileStore(_sessions_dir(url))
    raise StoreUrlError("the session store URL is neither postgresql:// nor file://")
