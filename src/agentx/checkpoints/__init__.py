"""File checkpoints: each file's state before a file tool changes it, and
``rewind_files`` (DEC-PROFILE-2). The decisions (what to keep, the bounds,
the rewind plan, the answer) are :mod:`agentx.messages.checkpoints` (sans-IO).

Concept map:

- ``keeper``: the session's checkpoints: message marks, prior states, rewinds.
- ``restore``: looking at and restoring one file the way Write opens it (no-follow).
- ``stores``: where the entries and kept bytes live: the session's folder or a temp folder.
- ``pg_store``: the same in the PostgreSQL session store.

Importing the package imports none of these modules; nothing here loads
unless checkpointing is on.
"""

__all__ = ["keeper", "pg_store", "restore", "stores"]
