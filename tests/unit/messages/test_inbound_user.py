"""The closed ``user`` record through decode_line (WIRE-017, WIRE-021,
DEC-ALIAS-1, DEC-COMPAT-2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agentx.messages.decode import InboundRecord, decode_line
from agentx.messages.framing import Line
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_user import AttachmentRef, InvalidUserRecord, TextPart, UserRecord

UUID = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
SHA = "0123456789abcdef" * 4
REF: dict[str, Any] = {
    "type": "attachment_ref",
    "attachment_id": "att_image1",
    "kind": "image",
    "name": "screen.png",
    "mime_type": "image/png",
    "size_bytes": 12345,
    "sha256": SHA,
    "storage_id": "blob_sha256_" + SHA,
}
PARSED_REF = AttachmentRef(
    attachment_id="att_image1",
    kind="image",
    name="screen.png",
    mime_type="image/png",
    size_bytes=12345,
    sha256=SHA,
    storage_id="blob_sha256_" + SHA,
)


def decode(record: dict[str, Any] | bytes) -> InboundRecord:
    data = record if isinstance(record, bytes) else json.dumps(record).encode()
    return decode_line(Line(number=4, data=data))


def user(**members: Any) -> dict[str, Any]:
    return {"type": "user", "message": "hi", "parent_tool_use_id": None, **members}


# --- user: the WIRE-017 content union ----------------------------------------


@pytest.mark.parametrize(
    ("message", "content", "version"),
    [
        pytest.param("hello", (TextPart(text="hello"),), None, id="string"),
        pytest.param({"content": "hi"}, (TextPart(text="hi"),), None, id="object-string"),
        pytest.param(
            {"role": "user", "content": "hi"}, (TextPart(text="hi"),), None, id="role-user"
        ),
        pytest.param(
            {"content": [{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}]},
            (TextPart(text="a"), TextPart(text="b")),
            None,
            id="legacy-blocks",
        ),
        pytest.param(
            {"role": "user", "content_version": 1, "content": [REF, {"type": "text", "text": "x"}]},
            (PARSED_REF, TextPart(text="x")),
            1,
            id="versioned-mixed-order",
        ),
        pytest.param(
            {"content_version": 1, "content": [REF]}, (PARSED_REF,), 1, id="attachments-only"
        ),
        pytest.param(
            {"content_version": 1, "content": [{"type": "input_text", "text": "t"}]},
            (TextPart(text="t"),),
            1,
            id="versioned-text-only",
        ),
    ],
)
def test_user_content_union(message: Any, content: tuple[Any, ...], version: int | None) -> None:
    record = decode(user(message=message))
    assert isinstance(record, UserRecord)
    assert record.content == content
    assert record.content_version == version


def test_user_record_keeps_every_member() -> None:
    data = json.dumps(
        user(
            uuid=UUID,
            session_id="default",
            parent_tool_use_id="toolu_1",
            priority="now",
            isSynthetic=True,
            timestamp="2025-01-01T00:00:00Z",
            isReplay=True,
            tool_use_result={"stdout": ["a"]},
        )
    ).encode()
    assert decode(data) == UserRecord(
        line=4,
        raw_size=len(data),
        content=(TextPart(text="hi"),),
        content_version=None,
        parent_tool_use_id="toolu_1",
        uuid=UUID,
        session_id="default",
        priority="now",
        is_synthetic=True,
        timestamp="2025-01-01T00:00:00Z",
        is_replay=True,
        tool_use_result=FrozenDict(stdout=("a",)),
        warnings=(),
    )


@pytest.mark.parametrize("session_id", ["", "default", "not-a-uuid"])
def test_dec_compat_2_any_session_id_and_no_uuid(session_id: str) -> None:
    record = decode(user(session_id=session_id))
    assert isinstance(record, UserRecord)
    assert record.session_id == session_id
    assert record.uuid is None
    assert record.priority is None
    assert record.is_replay is False


@pytest.mark.parametrize(
    ("members", "expected", "warnings"),
    [
        pytest.param(
            {"sessionId": "s", "parentToolUseId": "p", "is_replay": False, "is_synthetic": True},
            {
                "session_id": "s",
                "parent_tool_use_id": "p",
                "is_replay": False,
                "is_synthetic": True,
            },
            (),
            id="aliases-only",
        ),
        pytest.param(
            {"session_id": "canon", "sessionId": "alias"},
            {"session_id": "canon"},
            ("user record: alias sessionId dropped, session_id present",),
            id="canonical-wins",
        ),
        pytest.param(
            {"parent_tool_use_id": None, "parentToolUseId": "alias"},
            {"parent_tool_use_id": None},
            ("user record: alias parentToolUseId dropped, parent_tool_use_id present",),
            id="canonical-null-still-wins",
        ),
        pytest.param(
            {"isSynthetic": False, "is_synthetic": True, "isReplay": False, "is_replay": True},
            {"is_synthetic": False, "is_replay": False},
            (
                "user record: alias is_replay dropped, isReplay present",
                "user record: alias is_synthetic dropped, isSynthetic present",
            ),
            id="two-pairs",
        ),
    ],
)
def test_dec_alias_1(
    members: dict[str, Any], expected: dict[str, Any], warnings: tuple[str, ...]
) -> None:
    if "parentToolUseId" not in members:
        members = {"parent_tool_use_id": None, **members}
    record = decode({"type": "user", "message": "hi", **members})
    assert isinstance(record, UserRecord)
    assert {name: getattr(record, name) for name in expected} == expected
    assert record.warnings == warnings


def test_alias_without_canonical_parent_satisfies_the_requirement() -> None:
    record = decode({"type": "user", "message": "hi", "parentToolUseId": None})
    assert isinstance(record, UserRecord)


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        pytest.param(
            {"type": "user", "message": "x"}, "missing member parent_tool_use_id", id="no-parent"
        ),
        pytest.param(
            {"type": "user", "parent_tool_use_id": None}, "missing member message", id="no-message"
        ),
        pytest.param(user(extra=1), "unknown member", id="unknown-member"),
        pytest.param(user(message=7), "message must be a string or an object", id="message-int"),
        pytest.param(user(message=None), "message must be a string or an object", id="null"),
        pytest.param(
            user(message={"role": "assistant", "content": "x"}), "role must be user", id="role"
        ),
        pytest.param(
            user(message={"role": None, "content": "x"}), "role must be user", id="role-null"
        ),
        pytest.param(
            user(message={"content": "x", "model": "m"}), "message: unknown member", id="msg-extra"
        ),
        pytest.param(
            user(message={"role": "user"}), "message: missing member content", id="no-content"
        ),
        pytest.param(user(message={"content": []}), "nonempty array", id="empty-legacy"),
        pytest.param(user(message={"content": 5}), "nonempty array", id="content-int"),
        pytest.param(
            user(message={"content": [{"type": "image", "source": {}}]}),
            "content block type",
            id="image-block",
        ),
        pytest.param(
            user(message={"content": [{"type": "text", "text": "a", "cache_control": {}}]}),
            "text block: unknown member",
            id="text-extra-member",
        ),
        pytest.param(
            user(message={"content": [{"type": "text"}]}),
            "text block: missing member text",
            id="text-missing",
        ),
        pytest.param(
            user(message={"content": [{"type": "text", "text": 1}]}),
            "text must be a string",
            id="text-int",
        ),
        pytest.param(user(message={"content": ["a"]}), "block must be an object", id="bare-str"),
        pytest.param(
            user(message={"content": [REF]}), "requires content_version 1", id="ref-unversioned"
        ),
        pytest.param(
            user(message={"content_version": 2, "content": [REF]}),
            "content_version must be 1",
            id="version-2",
        ),
        pytest.param(
            user(message={"content_version": True, "content": [REF]}),
            "content_version must be 1",
            id="version-true",
        ),
        pytest.param(
            user(message={"content_version": 1, "content": "text"}),
            "nonempty content array",
            id="versioned-string",
        ),
        pytest.param(
            user(message={"content_version": 1, "content": []}),
            "nonempty content array",
            id="versioned-empty",
        ),
        pytest.param(user(priority="soon"), "priority", id="priority"),
        pytest.param(user(parent_tool_use_id=3), "parent_tool_use_id", id="parent-int"),
        pytest.param(user(uuid=5), "uuid must be a str", id="uuid-int"),
        pytest.param(user(session_id=5), "session_id must be a str", id="session-int"),
        pytest.param(user(isSynthetic="yes"), "isSynthetic must be a bool", id="synthetic-str"),
        pytest.param(user(isReplay=1), "isReplay must be a bool", id="replay-int"),
        pytest.param(user(timestamp=1), "timestamp must be a str", id="timestamp-int"),
        pytest.param(user(isReplay=True, uuid=UUID), "requires uuid and session_id", id="replay-1"),
        pytest.param(user(isReplay=True, session_id="s"), "requires uuid and session_id", id="r-2"),
    ],
)
def test_invalid_user_record_is_an_input_error(record: dict[str, Any], reason: str) -> None:
    result = decode(record)
    assert isinstance(result, InvalidUserRecord)
    assert reason in result.reason
    assert len(result.reason) <= 80


def test_invalid_user_record_keeps_a_string_uuid() -> None:
    assert decode(user(uuid="u-7", priority=1)) == InvalidUserRecord(
        line=4, uuid="u-7", reason="user record: priority must be now, next or later"
    )
    result = decode(user(uuid=["u"], priority=1))
    assert isinstance(result, InvalidUserRecord)
    assert result.uuid is None


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        pytest.param({"uuid": 5, "isReplay": 1}, "uuid must be a str", id="uuid-first"),
        pytest.param({"timestamp": 1, "session_id": 5}, "session_id must", id="session-2nd"),
        pytest.param({"isReplay": 1, "timestamp": 1}, "timestamp must", id="timestamp-3rd"),
        pytest.param({"isReplay": 1, "isSynthetic": 0}, "isSynthetic must", id="synthetic-4th"),
        pytest.param({"sessionId": 5}, "session_id must be a str", id="alias-renamed-first"),
        pytest.param({"isReplay": 1, "message": 7}, "isReplay must", id="types-before-message"),
        pytest.param({"uuid": 5, "extra": 1}, "unknown member", id="closed-before-types"),
    ],
)
def test_user_diagnostic_precedence(members: dict[str, Any], reason: str) -> None:
    """One reason per record (WIRE-021): closed schema, then optional member
    types in a fixed order (uuid, session_id, timestamp, isSynthetic,
    isReplay), then the message."""
    result = decode(user(**members))
    assert isinstance(result, InvalidUserRecord)
    assert reason in result.reason


USER_MEMBERS = {
    "uuid": UUID,
    "session_id": "s",
    "priority": "next",
    "isSynthetic": False,
    "timestamp": "t",
    "isReplay": False,
    "tool_use_result": None,
}
USER_ALIASES = {
    "session_id": "sessionId",
    "parent_tool_use_id": "parentToolUseId",
    "isSynthetic": "is_synthetic",
    "isReplay": "is_replay",
}


@given(
    present=st.lists(st.sampled_from(sorted(USER_MEMBERS)), unique=True),
    aliased=st.sets(st.sampled_from(sorted(USER_ALIASES))),
    order=st.randoms(use_true_random=False),
)
def test_member_order_and_aliases_do_not_change_the_record(
    present: list[str], aliased: set[str], order: Any
) -> None:
    """A closed envelope (no alias) and the same envelope spelled with
    DEC-ALIAS-1 aliases, in any member order, decode to the same record."""
    members = [("type", "user"), ("message", "hi"), ("parent_tool_use_id", None)]
    members += [(name, USER_MEMBERS[name]) for name in present]
    spelled = [(USER_ALIASES[n] if n in aliased else n, value) for n, value in members]
    order.shuffle(spelled)
    canonical = decode(json.dumps(dict(members)).encode())
    assert isinstance(canonical, UserRecord)
    assert canonical.warnings == ()
    data = json.dumps(dict(spelled)).encode()
    assert decode(data) == replace(canonical, raw_size=len(data))


@pytest.mark.parametrize(
    ("member", "value"),
    [
        pytest.param("attachment_id", "att_", id="attachment-id-empty-tail"),
        pytest.param("attachment_id", "upl_image1", id="attachment-id-prefix"),
        pytest.param("attachment_id", "att_" + "a" * 64, id="attachment-id-long"),
        pytest.param("kind", "video", id="kind"),
        pytest.param("name", 7, id="name"),
        pytest.param("mime_type", None, id="mime"),
        pytest.param("size_bytes", 0, id="size-zero"),
        pytest.param("size_bytes", 1.5, id="size-float"),
        pytest.param("size_bytes", True, id="size-bool"),
        pytest.param("sha256", SHA.upper(), id="sha-upper"),
        pytest.param("sha256", SHA[:-1], id="sha-short"),
        pytest.param("storage_id", SHA, id="storage-no-prefix"),
        pytest.param("extra", 1, id="extra-member"),
    ],
)
def test_bad_attachment_ref_is_an_input_error(member: str, value: Any) -> None:
    ref = {**REF, member: value}
    result = decode(user(message={"content_version": 1, "content": [ref]}))
    assert isinstance(result, InvalidUserRecord)
    assert "attachment_ref" in result.reason


@pytest.mark.parametrize("member", sorted(set(REF) - {"type"}))
def test_every_attachment_ref_member_is_required(member: str) -> None:
    ref = {name: value for name, value in REF.items() if name != member}
    result = decode(user(message={"content_version": 1, "content": [ref]}))
    assert isinstance(result, InvalidUserRecord)
    assert result.reason == f"attachment_ref: missing member {member}"


@pytest.mark.parametrize(
    "attachment_id",
    [pytest.param("att_a", id="shortest"), pytest.param("att_a" + "_-9" * 20 + "xy", id="longest")],
)
def test_attachment_id_grammar_boundaries(attachment_id: str) -> None:
    assert len(attachment_id) in (5, 67)
    ref = {**REF, "attachment_id": attachment_id}
    record = decode(user(message={"content_version": 1, "content": [ref]}))
    assert isinstance(record, UserRecord)
    assert record.content == (replace(PARSED_REF, attachment_id=attachment_id),)
