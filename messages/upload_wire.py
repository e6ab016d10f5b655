"""What an upload looks like on the wire (WIRE-018, WIRE-019, MOD-083): the
display-name and chunk-payload checks, and the two records an upload
lifecycle answers with.
"""

from __future__ import annotations

import base64
import binascii
import unicodedata
from typing import Final, Literal

from agentx.messages.attachment_limits import (
    MAX_CHUNK_DECODED_BYTES,
    MAX_CHUNK_ENCODED_BYTES,
    MAX_DISPLAY_NAME_BYTES,
    MAX_ITEM_BYTES,
)
from agentx.messages.attachments import MEDIA_KINDS, Manifest, Reason
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_import import AttachmentBegin
from agentx.messages.upload_lifecycle import Lifecycle, Status

#: Characters that reorder or break displayed text: the bidi embeddings,
#: overrides, isolates and marks, and the line and paragraph separators.
_SPOOFING: Final = frozenset(
    "\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def valid_display_name(name: str) -> bool:
    """MOD-083: 1..255 UTF-8 bytes, no ``/``, ``\\``, NUL or control characters.

    Nor, against display spoofing, a bidi control (U+202A..U+202E,
    U+2066..U+2069, U+200E, U+200F, U+061C) or U+2028/U+2029, and not ``.``
    or ``..`` (rejected as ``invalid_name``).
    """
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    if not 1 <= len(encoded) <= MAX_DISPLAY_NAME_BYTES or name in (".", ".."):
        return False
    return not any(c in "/\\" or c in _SPOOFING or unicodedata.category(c) == "Cc" for c in name)


def decode_chunk(data: str) -> bytes | Reason:
    """WIRE-018 chunk payload: nonempty, at most 349,528 encoded characters,
    canonical padded standard base64 (decode then encode round-trips), at
    most 262,144 decoded bytes."""
    if not data:
        return Reason.CHUNK_EMPTY
    if len(data) > MAX_CHUNK_ENCODED_BYTES:
        return Reason.CHUNK_TOO_LARGE
    if not data.isascii():
        return Reason.CHUNK_NOT_CANONICAL_BASE64
    encoded = data.encode("ascii")
    try:
        decoded = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        return Reason.CHUNK_NOT_CANONICAL_BASE64
    if base64.b64encode(decoded) != encoded:
        return Reason.CHUNK_NOT_CANONICAL_BASE64
    if len(decoded) > MAX_CHUNK_DECODED_BYTES:
        return Reason.CHUNK_TOO_LARGE
    return decoded


def begin_shape_rejection(op: AttachmentBegin) -> Reason | None:
    """What a ``begin`` says of itself that refuses it (MOD-083): its media
    type, display name and declared size."""
    if op.mime_type not in MEDIA_KINDS:
        return Reason.UNSUPPORTED_MIME_TYPE
    if not valid_display_name(op.name):
        return Reason.INVALID_NAME
    if op.size_bytes <= 0:
        return Reason.INVALID_SIZE
    if op.size_bytes > MAX_ITEM_BYTES:
        return Reason.ATTACHMENT_TOO_LARGE
    return None


def import_result(
    lifecycle: Lifecycle,
    status: Literal["accepted"] | Status,
    reason: Reason | None,
    manifest: Manifest | None,
    *,
    uuid: str,
    session_id: str,
) -> FrozenDict:
    """``attachment_import_result`` of ``lifecycle`` (WIRE-019)."""
    record: dict[str, object] = {
        "type": "attachment_import_result",
        "version": 1,
        "upload_id": lifecycle.upload_id,
        "attachment_id": lifecycle.attachment_id,
        "status": status,
        "terminal": status != "accepted",
        "prompt_uuid": lifecycle.prompt_uuid,
    }
    if reason is not None:
        record["reason"] = reason.value
    if manifest is not None:
        record["attachment"] = manifest.to_wire()
    record["uuid"] = uuid
    record["session_id"] = session_id
    return FrozenDict(record)


def import_rejected(
    upload_id: str,
    operation: str,
    reason: Reason,
    begin: AttachmentBegin | None,
    *,
    uuid: str,
    session_id: str,
) -> FrozenDict:
    """``attachment_import_rejected``: never terminal, never a lifecycle
    change (WIRE-019); a rejected ``begin`` names its attachment and prompt."""
    record: dict[str, object] = {
        "type": "attachment_import_rejected",
        "version": 1,
        "operation": operation,
        "upload_id": upload_id,
    }
    if begin is not None:
        record["attachment_id"] = begin.attachment_id
        record["prompt_uuid"] = begin.prompt_uuid
    record |= {
        "status": "rejected",
        "terminal": False,
        "reason": reason.value,
        "uuid": uuid,
        "session_id": session_id,
    }
    return FrozenDict(record)
