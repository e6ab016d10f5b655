"""Attachments: media admission, the blob store and ``--attach`` files.

Concept map:

- ``admission``: media admission (MOD-083), image normalization (MOD-084),
  PDF validation (MOD-085) and runtime qualification (MOD-A14B); DECISIONS
  section 7. Imports Pillow and pypdf.
- ``blobs``: the content-addressed blob store (DEC-HOME-1 ``blobs/``,
  WIRE-018, WIRE-022).
- ``initial_attachments``: ``-p PROMPT --attach PATH...`` (DEC-CLI-1), the
  same admission as a stream import.
- ``runtime_check``: MOD-A14B at start-up, remembered per installed runtime
  so that a start on a runtime that passed before loads neither Pillow nor
  pypdf.

The upload lifecycle is :mod:`agentx.messages.uploads`, driven by the upload
manager actor. Importing the package imports none of these modules.
"""

__all__ = ["admission", "blobs", "initial_attachments", "runtime_check"]
