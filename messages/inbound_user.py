"""The ``user`` record and its closed schema (WIRE-017, WIRE-021, DEC-ALIAS-1,
DEC-COMPAT-2): the legacy and versioned message forms, text and
``attachment_ref`` blocks, aliases renamed before validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, FrozenJSON
from agentx.messages.inbound import (
    ATTACHMENT_ID,
    SHA256,
    STORAGE_ID,
    SchemaViolation,
    matching_member,
    positive_int_member,
    require_closed,
    string_member,
)
from agentx.messages.prompt_queue import Priority

AttachmentKind = Literal["image", "document"]


class TextPart(Struct, frozen=True, kw_only=True):
    """A ``text`` block (``input_text`` is its compatibility spelling, WIRE-017)."""

    text: str


class AttachmentRef(Struct, frozen=True, kw_only=True):
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


class UserRecord(Struct, frozen=True, kw_only=True):
    """A valid ``user`` record, normalized.

    A frozen ``msgspec.Struct``, not a frozen dataclass: one is built per
    prompt, and a frozen dataclass sets its 13 fields one
    ``object.__setattr__`` at a time (about 1.5 us here, a sixth of the pure
    layer's per-record budget); nor a ``NamedTuple``, whose class costs five
    times as much to define before the ``initialize`` response (DEC-CLI-3).
    Just as immutable; built with keywords.

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
    #: DEC-PROFILE-2 (``sdk`` profile only): the client composed the text as
    #: it is to be sent; no ``@file`` mention is expanded.
    client_composed: bool = False


class InvalidUserRecord(Struct, frozen=True, kw_only=True):
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
#: DEC-PROFILE-2: the ``sdk`` profile's user record also takes ``client_composed``
#: (the Agent SDKs' ``verbatim_prompts``); the standalone record stays closed (WIRE-017).
SDK_USER_MEMBERS = USER_MEMBERS | {"client_composed"}
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


def parse_user(obj: FrozenDict, *, line: int, raw_size: int, sdk: bool = False) -> UserRecord:
    """Closed decoding of a ``user`` envelope (WIRE-017, WIRE-021).

    An optional member that is JSON null counts as absent. A closed envelope
    with the required members holds no alias (no alias is a member name), so
    it skips DEC-ALIAS-1 renaming; anything else is renamed, then checked.
    ``sdk`` (DEC-PROFILE-2) also admits a boolean ``client_composed``.
    """
    allowed = SDK_USER_MEMBERS if sdk else USER_MEMBERS
    names = obj.keys()
    if names <= allowed and names >= USER_REQUIRED:
        members: Mapping[str, Any] = obj
        warnings: tuple[str, ...] = ()
    else:
        members, warnings = _apply_aliases(obj)
        require_closed(members, USER_REQUIRED, allowed, "user record")
    composed = members.get("client_composed")
    if composed is not None and type(composed) is not bool:
        raise SchemaViolation("user record: client_composed must be a bool")
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
        client_composed=composed is True,
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
    require_closed(value, MESSAGE_REQUIRED, MESSAGE_MEMBERS, "message")
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
        require_closed(block, TEXT_BLOCK_MEMBERS, TEXT_BLOCK_MEMBERS, "text block")
        raise SchemaViolation("text block: text must be a string")
    if kind != "attachment_ref":
        raise SchemaViolation("content block type must be text, input_text or attachment_ref")
    if not versioned:
        raise SchemaViolation("attachment_ref requires content_version 1")
    what = "attachment_ref"
    require_closed(block, ATTACHMENT_REF_MEMBERS, ATTACHMENT_REF_MEMBERS, what)
    attachment_kind = block["kind"]
    if attachment_kind not in ATTACHMENT_KINDS:
        raise SchemaViolation("attachment_ref: kind must be image or document")
    return AttachmentRef(
        attachment_id=matching_member(block, "attachment_id", ATTACHMENT_ID, what),
        kind=attachment_kind,
        name=string_member(block, "name", what),
        mime_type=string_member(block, "mime_type", what),
        size_bytes=positive_int_member(block, "size_bytes", what),
        sha256=matching_member(block, "sha256", SHA256, what),
        storage_id=matching_member(block, "storage_id", STORAGE_ID, what),
    )
