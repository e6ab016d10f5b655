"""Session stores: where a session's header and transcript live (DEC-STORE-1).

Concept map:

- :class:`SessionStore` / :class:`Appender` (``base``): the interface. Create
  a session, open it for resuming (exclusive: one writer per session), append
  with a durability barrier (``Appender.sync``, group commit), read it, find
  the newest session of a working directory (``--continue``), list headers.
- What every backend shares: the errors (``errors``), the header and its
  ``header.json`` document (``header``: WIRE-025 binding, canonical ids), the
  transcript entries as JSON lines (``jsonl``).
- :class:`FileStore` (:mod:`agentx.sessions.store.files`): the local files under
  ``$AGENTX_HOME/sessions``, the default; ``flock`` ownership, ``fsync`` by
  its appender (``file_appender``).
- ``postgres.PostgresStore``: PostgreSQL through psycopg 3, imported only
  when chosen; advisory-lock ownership, a commit per barrier.
- ``pg_blobs.PostgresBlobStore``: the attachment blobs in the same database,
  so a session resumes with its attachments on another machine;
- :func:`open_store` / :func:`open_blobs` / :func:`store_url` / :func:`store_secrets` (``select``):
  ``--session-store URL`` or ``AGENTX_SESSION_STORE``, and the URL's
  credential literals for the output guard (DEC-AUTH-3).

The session's setup (resume binding, history replay) is
:mod:`agentx.sessions.setup`; the turn engine writes through
:class:`agentx.sessions.setup.StoredTranscript`, whatever the store.
"""

from agentx.sessions.store.base import Appender, SessionStore
from agentx.sessions.store.files import SessionStore as FileStore
from agentx.sessions.store.select import (
    ENV_VAR,
    StoreUrlError,
    open_blobs,
    open_store,
    store_secrets,
    store_url,
)

__all__ = [
    "ENV_VAR",
    "Appender",
    "FileStore",
    "SessionStore",
    "StoreUrlError",
    "open_blobs",
    "open_store",
    "store_secrets",
    "store_url",
]
