"""The ``attachment_import`` record: four closed request forms (WIRE-018).

The upload lifecycle that consumes them is :mod:`agentx.messages.uploads`.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec import Struct

from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound import (
    ATTACHMENT_ID,
    RFC4122,
    SHA256,
    UPLOAD_ID,
    SchemaViolation,
    matching_member,
    positive_int_member,
    require_closed,
    string_member,
)


class AttachmentBegin(Struct, frozen=True, kw_only=True):
    line: int
    upload_id: str
    attachment_id: str
    prompt_uuid: str
    name: str
    size_bytes: int
    mime_type: str
    sha256: str


class AttachmentChunk(Struct, frozen=True, kw_only=True):
    """``data`` is only known to be a string; the upload core checks base64."""

    line: int
    upload_id: str
    sequence: int
    data: str


class AttachmentCommit(Struct, frozen=True, kw_only=True):
    line: int
    upload_id: str


class AttachmentAbort(Struct, frozen=True, kw_only=True):
    line: int
    upload_id: str


AttachmentImport = AttachmentBegin | AttachmentChunk | AttachmentCommit | AttachmentAbort

_IMPORT_COMMON = frozenset({"type", "version", "operation", "upload_id"})
IMPORT_FORMS: Mapping[str, frozenset[str]] = FrozenDict(
    begin=_IMPORT_COMMON
    | {"prompt_uuid", "attachment_id", "name", "size_bytes", "mime_type", "sha256"},
    chunk=_IMPORT_COMMON | {"sequence", "data"},
    commit=_IMPORT_COMMON,
    abort=_IMPORT_COMMON,
)


def parse_attachment_import(obj: FrozenDict, *, line: int) -> AttachmentImport:
    """The four closed WIRE-018 request forms; every shown member is required."""
    what = "attachment_import"
    operation = obj.get("operation")
    form = IMPORT_FORMS.get(operation) if type(operation) is str else None
    if form is None:
        raise SchemaViolation("attachment_import: operation must be begin, chunk, commit or abort")
    require_closed(obj, form, form, what)
    version = obj["version"]
    if type(version) is not int or version != 1:
        raise SchemaViolation("attachment_import: version must be 1")
    upload_id = matching_member(obj, "upload_id", UPLOAD_ID, what)
    if operation == "begin":
        return AttachmentBegin(
            line=line,
            upload_id=upload_id,
            attachment_id=matching_member(obj, "attachment_id", ATTACHMENT_ID, what),
            prompt_uuid=matching_member(obj, "prompt_uuid", RFC4122, what),
            name=string_member(obj, "name", what),
            size_bytes=positive_int_member(obj, "size_bytes", what),
            mime_type=string_member(obj, "mime_type", what),
            sha256=matching_member(obj, "sha256", SHA256, what),
        )
    if operation == "chunk":
        sequence = obj["sequence"]
        if type(sequence) is not int or sequence < 0:
            raise SchemaViolation("attachment_import: sequence must be a non-negative integer")
        return AttachmentChunk(
            line=line, upload_id=upload_id, sequence=sequence, data=string_member(obj, "data", what)
        )
    if operation == "commit":
        return AttachmentCommit(line=line, upload_id=upload_id)
    return AttachmentAbort(line=line, upload_id=upload_id)
