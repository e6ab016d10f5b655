"""Inbound record types and their closed schemas (spec "Input records", WIRE-017/018/021).

Every record carries ``line``, the 1-based physical line number it came from.
The ``parse_*`` functions take an already decoded, frozen, duplicate-free JSON
object and either build the typed record or raise :class:`SchemaViolation`
with a bounded reason that names only protocol member names, never input
content. :func:`agentx.messages.decode.decode_line` decides what a violation
means for each record type (DECISIONS section 1). The member tables and
grammars are public: :mod:`agentx.messages.schema_inbound` builds the
published inbound schema from them (WIRE-021).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict, FrozenJSON

Priority = Literal["now", "next", "later"]
AttachmentKind = Literal["image", "document"]
ImportOperation = Literal["begin", "chunk", "commit", "abort"]


class SchemaViolation(Exception):
    """A record broke its closed schema; ``reason`` is bounded and content-free."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- user records (WIRE-017, WIRE-021, DEC-ALIAS-1, DEC-COMPAT-2) ----------


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """A ``text`` block (``input_text`` is its compatibility spelling, WIRE-017)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentRef:
    """An ``attachment_ref`` block: exactly the WIRE-017 manifest members."""

    attachment_id: str
    kind: AttachmentKind
    name: str
    mime_type: str
    size_bytes: int
    sha256: str
    storage_id: str

    def to_wire(self) -> FrozenDict:
        """The canonical block for replay (WIRE-017: the complete manifest, WIRE-022)."""
        return FrozenDict(
            type="attachment_ref",
            attachment_id=self.attachment_id,
            kind=self.kind,
            name=self.name,
            mime_type=self.mime_type,
            size_bytes=self.size_bytes,
            sha256=self.sha256,
            storage_id=self.storage_id,
        )


ContentPart = TextPart | AttachmentRef


class UserRecord(NamedTuple):
    """A valid ``user`` record, normalized.

    A ``NamedTuple``, not a frozen dataclass: one is built per prompt, and a
    frozen dataclass sets its 13 fields one ``object.__setattr__`` at a time
    (about 1.5 us here, a sixth of the pure layer's per-record budget, issue
    2). Just as immutable; build it with keywords.

    ``content`` is the message in block order whatever legacy form it came in;
    ``content_version`` is 1 for the versioned form, else None. ``priority``
    None means absent (queued as ``later``, DEC-TURN-1). ``warnings`` names
    every alias dropped because its canonical member was present
    (DEC-ALIAS-1); the shell logs each. ``raw_size`` is the line's byte count
    for queue accounting (WIRE-020).
    """

    line: int
    raw_size: int
    content: tuple[ContentPart, ...]
    content_version: int | None
    parent_tool_use_id: str | None
    uuid: str | None
    session_id: str | None
    priority: Priority | None
    is_synthetic: bool | None
    timestamp: str | None
    is_replay: bool
    tool_use_result: FrozenJSON
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidUserRecord:
    """A semantically invalid ``user`` record: one input-error result, the
    stream goes on (WIRE-021, DECISIONS section 1)."""

    line: int
    uuid: str | None
    reason: str


USER_MEMBERS = frozenset(
    {
        "type",
        "message",
        "parent_tool_use_id",
        "uuid",
        "session_id",
        "priority",
        "isSynthetic",
        "timestamp",
        "isReplay",
        "tool_use_result",
    }
)
USER_REQUIRED = frozenset({"message", "parent_tool_use_id"})
#: DEC-ALIAS-1: alias -> canonical member name.
USER_ALIASES: Mapping[str, str] = FrozenDict(
    sessionId="session_id",
    parentToolUseId="parent_tool_use_id",
    is_replay="isReplay",
    is_synthetic="isSynthetic",
)
USER_OPTIONAL_TYPES: tuple[tuple[str, type[Any]], ...] = (
    ("uuid", str),
    ("session_id", str),
    ("timestamp", str),
    ("isSynthetic", bool),
    ("isReplay", bool),
)
PRIORITIES = frozenset({"now", "next", "later"})
MESSAGE_REQUIRED = frozenset({"content"})
MESSAGE_MEMBERS = frozenset({"role", "content", "content_version"})
TEXT_BLOCK_MEMBERS = frozenset({"type", "text"})
TEXT_BLOCK_TYPES = frozenset({"text", "input_text"})
ATTACHMENT_REF_MEMBERS = frozenset(
    {
        "type",
        "attachment_id",
        "kind",
        "name",
        "mime_type",
        "size_bytes",
        "sha256",
        "storage_id",
    }
)
ATTACHMENT_KINDS = frozenset({"image", "document"})
ATTACHMENT_ID = re.compile(r"att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
UPLOAD_ID = re.compile(r"upl_[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
SHA256 = re.compile(r"[0-9a-f]{64}")
STORAGE_ID = re.compile(r"blob_sha256_[0-9a-f]{64}")
#: Canonical RFC 4122 text, versions 1-5, variant 10xx.
RFC4122 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def parse_user(obj: FrozenDict, *, line: int, raw_size: int) -> UserRecord:
    """Closed decoding of a ``user`` envelope (WIRE-017, WIRE-021).

    An optional member that is JSON null counts as absent. A closed envelope
    with the required members holds no alias (no alias is a member name), so
    it skips DEC-ALIAS-1 renaming; anything else is renamed, then checked.
    """
    names = obj.keys()
    if names <= USER_MEMBERS and names >= USER_REQUIRED:
        members: Mapping[str, Any] = obj
        warnings: tuple[str, ...] = ()
    else:
        members, warnings = _apply_aliases(obj)
        _require_closed(members, USER_REQUIRED, USER_MEMBERS, "user record")
    uuid = members.get("uuid")
    session_id = members.get("session_id")
    timestamp = members.get("timestamp")
    is_synthetic = members.get("isSynthetic")
    is_replay = members.get("isReplay")
    if not (
        (uuid is None or type(uuid) is str)
        and (session_id is None or type(session_id) is str)
        and (timestamp is None or type(timestamp) is str)
        and (is_synthetic is None or type(is_synthetic) is bool)
        and (is_replay is None or type(is_replay) is bool)
    ):
        raise SchemaViolation(_wrong_optional_type(members))
    content, content_version = _message(members["message"])
    if is_replay is True and (uuid is None or session_id is None):
        raise SchemaViolation("user record: isReplay requires uuid and session_id")
    priority = members.get("priority")
    if priority is not None and priority not in PRIORITIES:
        raise SchemaViolation("user record: priority must be now, next or later")
    parent = members["parent_tool_use_id"]
    if parent is not None and type(parent) is not str:
        raise SchemaViolation("user record: parent_tool_use_id must be a string or null")
    return UserRecord(
        line=line,
        raw_size=raw_size,
        content=content,
        content_version=content_version,
        parent_tool_use_id=parent,
        uuid=uuid,
        session_id=session_id,
        priority=priority,
        is_synthetic=is_synthetic,
        timestamp=timestamp,
        is_replay=is_replay is True,
        tool_use_result=members.get("tool_use_result"),
        warnings=warnings,
    )


def _wrong_optional_type(members: Mapping[str, Any]) -> str:
    """The reason naming the first optional member, in table order, whose
    non-null value has the wrong type (the caller knows there is one)."""
    return next(
        f"user record: {name} must be a {kind.__name__}"
        for name, kind in USER_OPTIONAL_TYPES
        if members.get(name) is not None and type(members[name]) is not kind
    )


def _apply_aliases(obj: FrozenDict) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """DEC-ALIAS-1: rename aliases before validation; the canonical member wins."""
    if USER_ALIASES.keys().isdisjoint(obj):
        return obj, ()
    members = {name: value for name, value in obj.items() if name not in USER_ALIASES}
    warnings: list[str] = []
    for alias, canonical in USER_ALIASES.items():
        if alias not in obj:
            continue
        if canonical in obj:
            warnings.append(f"user record: alias {alias} dropped, {canonical} present")
        else:
            members[canonical] = obj[alias]
    return members, tuple(warnings)


def _message(value: Any) -> tuple[tuple[ContentPart, ...], int | None]:
    """The WIRE-017 union: a string, ``{role?, content: string}``, legacy text
    blocks, or ``{role?, content_version: 1, content: [text|attachment_ref]}``."""
    if type(value) is str:
        return (TextPart(text=value),), None
    if type(value) is not FrozenDict:
        raise SchemaViolation("message must be a string or an object")
    _require_closed(value, MESSAGE_REQUIRED, MESSAGE_MEMBERS, "message")
    if value.get("role", "user") != "user":
        raise SchemaViolation("message role must be user")
    content = value["content"]
    if "content_version" in value:
        version = value["content_version"]
        if type(version) is not int or version != 1:
            raise SchemaViolation("message content_version must be 1")
        if type(content) is not tuple or not content:
            raise SchemaViolation("content_version 1 requires a nonempty content array")
        return tuple([_block(block, versioned=True) for block in content]), 1
    if type(content) is str:
        return (TextPart(text=content),), None
    if type(content) is not tuple or not content:
        raise SchemaViolation("message content must be a string or a nonempty array")
    return tuple([_block(block, versioned=False) for block in content]), None


def _block(block: Any, *, versioned: bool) -> ContentPart:
    if type(block) is not FrozenDict:
        raise SchemaViolation("content block must be an object")
    kind = block.get("type")
    if kind in TEXT_BLOCK_TYPES:
        text = block.get("text")
        if type(text) is str and len(block) == 2:  # exactly type and text
            return TextPart(text=text)
        _require_closed(block, TEXT_BLOCK_MEMBERS, TEXT_BLOCK_MEMBERS, "text block")
        raise SchemaViolation("text block: text must be a string")
    if kind != "attachment_ref":
        raise SchemaViolation("content block type must be text, input_text or attachment_ref")
    if not versioned:
        raise SchemaViolation("attachment_ref requires content_version 1")
    what = "attachment_ref"
    _require_closed(block, ATTACHMENT_REF_MEMBERS, ATTACHMENT_REF_MEMBERS, what)
    attachment_kind = block["kind"]
    if attachment_kind not in ATTACHMENT_KINDS:
        raise SchemaViolation("attachment_ref: kind must be image or document")
    return AttachmentRef(
        attachment_id=_matching(block, "attachment_id", ATTACHMENT_ID, what),
        kind=attachment_kind,
        name=_string(block, "name", what),
        mime_type=_string(block, "mime_type", what),
        size_bytes=_positive_int(block, "size_bytes", what),
        sha256=_matching(block, "sha256", SHA256, what),
        storage_id=_matching(block, "storage_id", STORAGE_ID, what),
    )


# --- control records (WIRE-009, WIRE-PERM-040, DECISIONS section 1) --------


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlRequest:
    """An inbound ``control_request``; ``payload`` is ``request`` minus ``subtype``."""

    line: int
    request_id: str
    subtype: str
    payload: FrozenDict


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidControlRequest:
    """A ``control_request`` whose ``request_id`` is recoverable but whose
    request is not: answered with a correlated error, the stream goes on."""

    line: int
    request_id: str
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ControlResponse:
    """An inbound ``control_response`` (WIRE-PERM-040). Only the outer union is
    checked here; the waiter validates ``response`` with its own schema
    (WIRE-009). ``raw`` is the whole record."""

    line: int
    request_id: str
    subtype: Literal["success", "error"]
    response: FrozenDict | None
    error: str | None
    pending_permission_requests: tuple[FrozenDict, ...] | None
    raw: FrozenDict


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidControlResponse:
    """A ``control_response`` for ``request_id`` that breaks the closed outer
    union: the waiter resolves as an error (fail closed, WIRE-PERM-044)."""

    line: int
    request_id: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UncorrelatableControl:
    """A control record with no string ``request_id``: one diagnostic, the
    record is dropped, the stream goes on (DECISIONS section 1)."""

    line: int
    reason: str


#: The payload of a request whose only member is ``subtype``.
_NO_FIELDS = FrozenDict()
SUCCESS_REQUIRED = frozenset({"subtype"})
SUCCESS_MEMBERS = frozenset({"subtype", "request_id", "response"})
ERROR_REQUIRED = frozenset({"subtype", "error"})
ERROR_MEMBERS = frozenset({"subtype", "request_id", "error", "pending_permission_requests"})


def parse_control_request(obj: FrozenDict, *, line: int, request_id: str) -> ControlRequest:
    """The ``request`` object must be an object with a string ``subtype``."""
    request = obj.get("request")
    if type(request) is not FrozenDict:
        raise SchemaViolation("control_request: request must be an object")
    subtype = request.get("subtype")
    if type(subtype) is not str:
        raise SchemaViolation("control_request: request has no string subtype")
    if len(request) == 1:  # the common fieldless request: no copy
        payload = _NO_FIELDS
    else:
        payload = FrozenDict({name: value for name, value in request.items() if name != "subtype"})
    return ControlRequest(line=line, request_id=request_id, subtype=subtype, payload=payload)


def parse_control_response(
    obj: FrozenDict, response: FrozenDict, *, line: int, request_id: str
) -> ControlResponse:
    """The closed outer union of WIRE-PERM-040 (``response`` is the envelope's
    ``response`` object, already known to carry a string ``request_id``)."""
    subtype = response.get("subtype")
    if subtype == "success":
        _require_closed(response, SUCCESS_REQUIRED, SUCCESS_MEMBERS, "control_response")
        payload = response.get("response")
        if payload is not None and type(payload) is not FrozenDict:
            raise SchemaViolation("control_response: success response must be an object")
        return ControlResponse(
            line=line,
            request_id=request_id,
            subtype="success",
            response=payload,
            error=None,
            pending_permission_requests=None,
            raw=obj,
        )
    if subtype != "error":
        raise SchemaViolation("control_response: subtype must be success or error")
    _require_closed(response, ERROR_REQUIRED, ERROR_MEMBERS, "control_response")
    error = _string(response, "error", "control_response")
    pending = response.get("pending_permission_requests")
    if pending is not None and (
        type(pending) is not tuple or any(type(item) is not FrozenDict for item in pending)
    ):
        raise SchemaViolation("control_response: pending_permission_requests must be objects")
    return ControlResponse(
        line=line,
        request_id=request_id,
        subtype="error",
        response=None,
        error=error,
        pending_permission_requests=pending,
        raw=obj,
    )


# --- keep_alive, environment updates, prior context, unknown ---------------


@dataclass(frozen=True, slots=True, kw_only=True)
class KeepAlive:
    """``keep_alive``: ignored semantically."""

    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateEnvironmentVariables:
    """``update_environment_variables``: a string-to-string map."""

    line: int
    variables: FrozenDict


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidEnvUpdate:
    """An environment update that is not a valid map: an input error."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PriorContextRecord:
    """A replayed ``assistant``/``system`` record from a compatible transport:
    prior context only, never executed (spec "Input records")."""

    line: int
    type: str
    raw: FrozenDict


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownRecord:
    """A record of an unknown top-level ``type``: warned and ignored (WIRE-002)."""

    line: int
    type: str


def parse_environment_update(obj: FrozenDict, *, line: int) -> UpdateEnvironmentVariables:
    """Names are nonempty without ``=`` or NUL; values are strings without NUL."""
    variables = obj.get("variables")
    if type(variables) is not FrozenDict:
        raise SchemaViolation("update_environment_variables: variables must be an object")
    for name, value in variables.items():
        if not name or "=" in name or "\0" in name:
            raise SchemaViolation("update_environment_variables: invalid variable name")
        if type(value) is not str or "\0" in value:
            raise SchemaViolation("update_environment_variables: values must be strings")
    return UpdateEnvironmentVariables(line=line, variables=variables)


# --- attachment_import (WIRE-018) -----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentBegin:
    line: int
    upload_id: str
    attachment_id: str
    prompt_uuid: str
    name: str
    size_bytes: int
    mime_type: str
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentChunk:
    """``data`` is only known to be a string; the upload core checks base64."""

    line: int
    upload_id: str
    sequence: int
    data: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentCommit:
    line: int
    upload_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentAbort:
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
    _require_closed(obj, form, form, what)
    version = obj["version"]
    if type(version) is not int or version != 1:
        raise SchemaViolation("attachment_import: version must be 1")
    upload_id = _matching(obj, "upload_id", UPLOAD_ID, what)
    if operation == "begin":
        return AttachmentBegin(
            line=line,
            upload_id=upload_id,
            attachment_id=_matching(obj, "attachment_id", ATTACHMENT_ID, what),
            prompt_uuid=_matching(obj, "prompt_uuid", RFC4122, what),
            name=_string(obj, "name", what),
            size_bytes=_positive_int(obj, "size_bytes", what),
            mime_type=_string(obj, "mime_type", what),
            sha256=_matching(obj, "sha256", SHA256, what),
        )
    if operation == "chunk":
        sequence = obj["sequence"]
        if type(sequence) is not int or sequence < 0:
            raise SchemaViolation("attachment_import: sequence must be a non-negative integer")
        return AttachmentChunk(
            line=line, upload_id=upload_id, sequence=sequence, data=_string(obj, "data", what)
        )
    if operation == "commit":
        return AttachmentCommit(line=line, upload_id=upload_id)
    return AttachmentAbort(line=line, upload_id=upload_id)


# --- closed-schema helpers (WIRE-021) --------------------------------------


def _require_closed(
    obj: Mapping[str, Any], required: frozenset[str], allowed: frozenset[str], what: str
) -> None:
    """The WIRE-021 violation when ``obj`` fails its closed schema."""
    breach = closed_breach(obj, allowed, required)
    if breach is None:
        return
    if breach.missing:
        raise SchemaViolation(f"{what}: missing member {min(breach.missing)}")
    raise SchemaViolation(f"{what}: unknown member")


def _string(obj: Mapping[str, Any], name: str, what: str) -> str:
    value = obj[name]
    if type(value) is not str:
        raise SchemaViolation(f"{what}: {name} must be a string")
    return value


def _matching(obj: Mapping[str, Any], name: str, grammar: re.Pattern[str], what: str) -> str:
    value = obj[name]
    if type(value) is not str or grammar.fullmatch(value) is None:
        raise SchemaViolation(f"{what}: {name} is malformed")
    return value


def _positive_int(obj: Mapping[str, Any], name: str, what: str) -> int:
    value = obj[name]
    if type(value) is not int or value < 1:
        raise SchemaViolation(f"{what}: {name} must be a positive integer")
    return value
