"""Attachment manifests, reason codes and prompt correlation.

Sans-IO: the committed manifest (WIRE-017/019), the bounded reason codes every
attachment acknowledgement uses (WIRE-019), and the WIRE-020 atomic prompt
correlation check over the committed manifests. The limits and the advertised
``input_capabilities`` object (WIRE-023) are :mod:`agentx.messages.attachment_limits`,
on the start path; this module loads with the first attachment (DEC-CLI-3).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from agentx.messages.attachment_limits import (
    MAX_AGGREGATE_BYTES,
    MAX_ATTACHMENTS_PER_MESSAGE,
    MAX_UPLOADS_PER_SESSION,
)
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_user import AttachmentRef

#: MIME claim -> manifest kind (MOD-083: the supported claims).
MEDIA_KINDS: FrozenDict = FrozenDict(
    {"image/png": "image", "image/jpeg": "image", "application/pdf": "document"}
)


class Reason(StrEnum):
    """The bounded reason vocabulary of ``attachment_import_result`` and
    ``attachment_import_rejected`` (WIRE-019) and of WIRE-020 input errors."""

    # capability (scenario 24)
    CAPABILITY_NOT_ADVERTISED = "capability_not_advertised"
    # begin admission (WIRE-018, MOD-083)
    UNSUPPORTED_MIME_TYPE = "unsupported_mime_type"
    INVALID_NAME = "invalid_name"
    INVALID_SIZE = "invalid_size"
    ATTACHMENT_TOO_LARGE = "attachment_too_large"
    TOO_MANY_ACTIVE_UPLOADS = "too_many_active_uploads"
    UPLOAD_LEDGER_FULL = "upload_ledger_full"
    MANIFEST_LIMIT_REACHED = "manifest_limit_reached"
    DUPLICATE_UPLOAD_ID = "duplicate_upload_id"
    DUPLICATE_ATTACHMENT_ID = "duplicate_attachment_id"
    # operations that cannot join an accepted lifecycle (WIRE-019)
    UNKNOWN_UPLOAD_ID = "unknown_upload_id"
    UPLOAD_NOT_ACTIVE = "upload_not_active"
    UPLOAD_COMMITTING = "upload_committing"
    # chunk failures (WIRE-018)
    CHUNK_OUT_OF_ORDER = "chunk_out_of_order"
    CHUNK_EMPTY = "chunk_empty"
    CHUNK_NOT_CANONICAL_BASE64 = "chunk_not_canonical_base64"
    CHUNK_TOO_LARGE = "chunk_too_large"
    SIZE_EXCEEDED = "size_exceeded"
    # commit failures (MOD-083..085, blob store)
    SIZE_MISMATCH = "size_mismatch"
    SHA256_MISMATCH = "sha256_mismatch"
    MAGIC_MISMATCH = "magic_mismatch"
    IMAGE_INVALID = "image_invalid"
    IMAGE_DIMENSIONS_EXCEEDED = "image_dimensions_exceeded"
    IMAGE_PIXELS_EXCEEDED = "image_pixels_exceeded"
    IMAGE_TOO_LARGE = "image_too_large"
    UNSUPPORTED_ANIMATION = "unsupported_animation"
    PDF_INVALID = "pdf_invalid"
    PDF_ENCRYPTED = "pdf_encrypted"
    PDF_TOO_MANY_PAGES = "pdf_too_many_pages"
    STORAGE_FULL = "storage_full"
    STORAGE_ERROR = "storage_error"
    # lifecycle endings that are not validation failures (WIRE-019)
    CLIENT_ABORT = "client_abort"
    UPLOAD_TIMEOUT = "upload_timeout"
    INPUT_CLOSED = "input_closed"
    HOST_SHUTDOWN = "host_shutdown"
    # WIRE-020 prompt correlation
    PROMPT_UUID_MISSING = "prompt_uuid_missing"
    TOO_MANY_ATTACHMENTS = "too_many_attachments"
    AGGREGATE_TOO_LARGE = "aggregate_too_large"
    ATTACHMENT_NOT_COMMITTED = "attachment_not_committed"
    ATTACHMENT_UPLOAD_PENDING = "attachment_upload_pending"
    DUPLICATE_ATTACHMENT_REF = "duplicate_attachment_ref"
    MANIFEST_MISMATCH = "manifest_mismatch"
    MIXED_PROMPT_UUIDS = "mixed_prompt_uuids"
    PROMPT_UUID_MISMATCH = "prompt_uuid_mismatch"
    ATTACHMENT_OMITTED = "attachment_omitted"


#: A committed attachment manifest (WIRE-017) is exactly the members an
#: ``attachment_ref`` block carries, with the normalized size and digest: the
#: same value type, so a reference matches its manifest by equality.
Manifest = AttachmentRef


class CommittedManifests:
    """The session's durable committed manifests, each correlated to the
    prompt UUID of its import (WIRE-018 ceiling, WIRE-020 correlation).

    The ceiling (``capacity``, 100,000 in version 1) counts manifests from every
    source (file and stream imports) and is independent of the upload
    lifecycle ledger (spec: "Reaching one ceiling does not consume or extend
    the other").
    """

    __slots__ = ("_by_id", "_by_prompt", "capacity")

    def __init__(self, *, capacity: int = MAX_UPLOADS_PER_SESSION) -> None:
        self.capacity = capacity
        self._by_id: dict[str, tuple[str, Manifest]] = {}
        self._by_prompt: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, attachment_id: object) -> bool:
        return attachment_id in self._by_id

    def get(self, attachment_id: str) -> Manifest | None:
        entry = self._by_id.get(attachment_id)
        return None if entry is None else entry[1]

    def for_prompt(self, prompt_uuid: str) -> tuple[Manifest, ...]:
        """Every manifest committed for ``prompt_uuid``, in commit order."""
        return tuple(self._by_id[a][1] for a in self._by_prompt.get(prompt_uuid, ()))

    def add(self, prompt_uuid: str, manifest: Manifest) -> Reason | None:
        """Record a commit; a reason when the ceiling is reached or the
        attachment ID is already committed (an ID names one attachment)."""
        if manifest.attachment_id in self._by_id:
            return Reason.DUPLICATE_ATTACHMENT_ID
        if len(self._by_id) >= self.capacity:
            return Reason.MANIFEST_LIMIT_REACHED
        self._by_id[manifest.attachment_id] = (prompt_uuid, manifest)
        self._by_prompt.setdefault(prompt_uuid, []).append(manifest.attachment_id)
        return None

    def check_user_refs(self, uuid: str | None, refs: Iterable[AttachmentRef]) -> Reason | None:
        """WIRE-020 atomic prompt correlation for one user record.

        ``None`` admits the record; otherwise the reason rejects it whole.
        A record with no attachment refs is still rejected when its UUID has
        committed attachments, since omitting any one is an error.
        """
        refs = tuple(refs)
        if refs and uuid is None:
            return Reason.PROMPT_UUID_MISSING
        if len(refs) > MAX_ATTACHMENTS_PER_MESSAGE:
            return Reason.TOO_MANY_ATTACHMENTS
        prompts: set[str] = set()
        seen: set[str] = set()
        total = 0
        for ref in refs:
            if ref.attachment_id in seen:
                return Reason.DUPLICATE_ATTACHMENT_REF
            seen.add(ref.attachment_id)
            entry = self._by_id.get(ref.attachment_id)
            if entry is None:
                return Reason.ATTACHMENT_NOT_COMMITTED
            prompt_uuid, manifest = entry
            if ref != manifest:
                return Reason.MANIFEST_MISMATCH
            prompts.add(prompt_uuid)
            total += manifest.size_bytes
        if len(prompts) > 1:
            return Reason.MIXED_PROMPT_UUIDS
        if prompts and prompts != {uuid}:
            return Reason.PROMPT_UUID_MISMATCH
        if total > MAX_AGGREGATE_BYTES:
            return Reason.AGGREGATE_TOO_LARGE
        if uuid is not None and not set(self._by_prompt.get(uuid, ())) <= seen:
            return Reason.ATTACHMENT_OMITTED
        return None
