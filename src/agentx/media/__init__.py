"""Attachments: media admission, the blob store and ``--attach`` files.

Concept map:

- ``admission``: media admission, image normalization, PDF validation (MOD-083..085).
- ``blobs``: the content-addressed blob store (DEC-HOME-1 ``blobs/``, WIRE-018, WIRE-022).
- ``initial_attachments``: ``-p PROMPT --attach PATH...`` (DEC-CLI-1), admitted as an import.
- ``lazy_blobs``: the blob store opened at start (crash recovery), loaded at its first use.
- ``runtime_check``: MOD-A14B at start-up, remembered per installed runtime.

``admission`` imports Pillow and pypdf; a start on a runtime that passed the
MOD-A14B check before loads neither. The upload lifecycle is
:mod:`agentx.messages.uploads`, driven by the upload manager actor. Importing
the package imports none of these modules.
"""

__all__ = ["admission", "blobs", "initial_attachments", "lazy_blobs", "runtime_check"]
