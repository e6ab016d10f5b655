"""Attachments: media admission, the blob store and ``--attach`` files.

Concept map:

- ``admission``: media admission, image normalization, PDF validation (MOD-083..085).
- ``blobs``: the content-addressed blob store (DEC-HOME-1 ``blobs/``, WIRE-018, WIRE-022).
- ``deferred``: the blob store and the MOD-A14B verdict, loaded at first use.
- ``initial_attachments``: ``-p PROMPT --attach PATH...`` (DEC-CLI-1), admitted as an import.
- ``runtime_check``: the MOD-A14B check, remembered per installed runtime.

``admission`` imports Pillow and pypdf; a start on a runtime that passed the
MOD-A14B check before loads neither. The upload lifecycle is
:mod:`agentx.messages.uploads`, driven by the upload manager actor. Importing
the package imports none of these modules.
"""

__all__ = ["admission", "blobs", "deferred", "initial_attachments", "runtime_check"]
