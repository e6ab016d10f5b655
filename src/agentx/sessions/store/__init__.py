"""Session stores: where a session's header and transcript live (DEC-STORE-1).

One interface, :class:`~agentx.sessions.store.base.SessionStore`, with two
backends: the local files under ``$AGENTX_HOME/sessions`` (the default) and
PostgreSQL through psycopg 3, imported only when chosen. The session's setup
(resume binding, history replay) is :mod:`agentx.sessions.setup`. Concept map:

The interface and what every backend shares
- ``base``: SessionStore and Appender: create, open (one writer), append, sync, read, list.
- ``errors``: the store's errors; every backend raises these.
- ``header``: a session's header, its WIRE-025 binding and its ``header.json`` document.
- ``jsonl``: transcript entries as bytes, one JSON object per line.
- ``select``: choosing the store (``--session-store``, ``AGENTX_SESSION_STORE``) and its blobs.
- ``command``: ``agentx sessions list|show|export|delete|copy``.
- ``options``: the ``sessions`` command line: options, help, the stores it opens.
- ``transfer``: ``sessions copy``, a session moved between stores and verified.
- ``views``: what ``sessions list|show|export`` print.

Local files
- ``files``: the local file store, the default backend (DEC-HOME-1 ``sessions/``).
- ``file_appender``: its appender, ``flock`` ownership and one ``fsync`` per barrier.

PostgreSQL
- ``postgres``: the PostgreSQL store, advisory-lock ownership, a commit per barrier.
- ``pg_appender``: appending one session's transcript to PostgreSQL.
- ``pg_base``: PostgreSQL connections and the store's schema.
- ``pg_blobs``: the attachment blobs in the same database (WIRE-022).
- ``pg_secrets``: every password form of a connection string, for the credential union.

Importing the package imports none of these modules.
"""

__all__ = [
    "base",
    "command",
    "errors",
    "file_appender",
    "files",
    "header",
    "jsonl",
    "options",
    "pg_appender",
    "pg_base",
    "pg_blobs",
    "pg_secrets",
    "postgres",
    "select",
    "transfer",
    "views",
]
