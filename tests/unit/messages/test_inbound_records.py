"""Closed inbound record schemas through decode_line: user (WIRE-017/021,
DEC-ALIAS-1, DEC-COMPAT-2), control request/response, environment updates,
attachment_import (WIRE-018), prior context and unknown types (WIRE-002)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.framing import MAX_RECORD_BYTES, Line
from agentx.messages.frozen import FrozenDict, thaw
from agentx.messages.inbound import (
    InvalidEnvUpdate,
    PriorContextRecord,
    UnknownRecord,
    UpdateEnvironmentVariables,
)
from agentx.messages.inbound_control import (
    ControlRequest,
    ControlResponse,
    InvalidControlRequest,
    InvalidControlResponse,
    UncorrelatableControl,
)
from agentx.messages.inbound_import import (
    AttachmentAbort,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
)
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
    assert decode(data) == canonical._replace(raw_size=len(data))


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


# --- control records ----------------------------------------------------------


@pytest.mark.parametrize(
    ("request_member", "payload"),
    [
        pytest.param({"subtype": "mcp_status"}, FrozenDict(), id="fieldless-shared-empty"),
        pytest.param(
            {"subtype": "set_model", "model": None}, FrozenDict(model=None), id="one-field"
        ),
        pytest.param(
            {"subtype": "can_use_tool", "tool_name": "Bash", "input": {"c": [1]}},
            FrozenDict(tool_name="Bash", input=FrozenDict(c=(1,))),
            id="nested-fields",
        ),
    ],
)
def test_control_request_payload_is_request_minus_subtype(
    request_member: dict[str, Any], payload: FrozenDict
) -> None:
    record = decode({"type": "control_request", "request_id": "req_1", "request": request_member})
    assert record == ControlRequest(
        line=4, request_id="req_1", subtype=request_member["subtype"], payload=payload
    )
    assert isinstance(record.payload, FrozenDict)


@pytest.mark.parametrize(
    ("request_member", "error"),
    [
        pytest.param(None, "request must be an object", id="null"),
        pytest.param([], "request must be an object", id="array"),
        pytest.param({}, "no string subtype", id="no-subtype"),
        pytest.param({"subtype": 1}, "no string subtype", id="int-subtype"),
    ],
)
def test_invalid_control_request_is_correlated(request_member: Any, error: str) -> None:
    record = decode({"type": "control_request", "request_id": "r", "request": request_member})
    assert isinstance(record, InvalidControlRequest)
    assert (record.request_id, record.line) == ("r", 4)
    assert error in record.error


def test_control_request_without_request_member_is_correlated() -> None:
    record = decode({"type": "control_request", "request_id": "r"})
    assert isinstance(record, InvalidControlRequest)


SUCCESS = {"subtype": "success", "request_id": "r", "response": {"behavior": "allow"}}
ERROR = {"subtype": "error", "request_id": "r", "error": "boom"}


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        pytest.param(
            SUCCESS,
            {"subtype": "success", "response": {"behavior": "allow"}, "error": None},
            id="success",
        ),
        pytest.param(
            {"subtype": "success", "request_id": "r"},
            {"subtype": "success", "response": None},
            id="success-no-payload",
        ),
        pytest.param(
            ERROR,
            {"subtype": "error", "error": "boom", "pending_permission_requests": None},
            id="error",
        ),
        pytest.param(
            {**ERROR, "pending_permission_requests": [{"type": "control_request"}]},
            {"pending_permission_requests": (FrozenDict(type="control_request"),)},
            id="error-pending",
        ),
    ],
)
def test_control_response(response: dict[str, Any], expected: dict[str, Any]) -> None:
    record = decode({"type": "control_response", "response": response})
    assert isinstance(record, ControlResponse)
    assert record.request_id == "r"
    assert {name: getattr(record, name) for name in expected} == expected
    assert thaw(record.raw) == {"type": "control_response", "response": response}


@pytest.mark.parametrize(
    "response",
    [
        pytest.param({**SUCCESS, "subtype": "ok"}, id="subtype"),
        pytest.param({**SUCCESS, "error": "x"}, id="success-with-error"),
        pytest.param({**SUCCESS, "response": "yes"}, id="success-payload-string"),
        pytest.param({"subtype": "error", "request_id": "r"}, id="error-missing"),
        pytest.param({**ERROR, "error": 5}, id="error-int"),
        pytest.param({**ERROR, "pending_permission_requests": {}}, id="pending-object"),
        pytest.param({**ERROR, "pending_permission_requests": [1]}, id="pending-int"),
        pytest.param({**ERROR, "extra": 1}, id="extra-member"),
    ],
)
def test_control_response_outer_union_is_closed(response: dict[str, Any]) -> None:
    record = decode({"type": "control_response", "response": response})
    assert isinstance(record, InvalidControlResponse)
    assert record.request_id == "r"


@pytest.mark.parametrize(
    "record",
    [
        pytest.param({"type": "control_response"}, id="no-response"),
        pytest.param({"type": "control_response", "response": "x"}, id="response-string"),
        pytest.param({"type": "control_response", "response": {"subtype": "success"}}, id="no-id"),
        pytest.param(
            {"type": "control_response", "response": {**SUCCESS, "request_id": 3}}, id="int-id"
        ),
    ],
)
def test_uncorrelatable_control_response(record: dict[str, Any]) -> None:
    result = decode(record)
    assert isinstance(result, UncorrelatableControl)
    assert result.line == 4


# --- update_environment_variables -------------------------------------------


def test_environment_update() -> None:
    record = decode({"type": "update_environment_variables", "variables": {"A": "1", "B": ""}})
    assert record == UpdateEnvironmentVariables(line=4, variables=FrozenDict(A="1", B=""))


@pytest.mark.parametrize(
    "variables",
    [
        pytest.param(None, id="missing"),
        pytest.param(["A"], id="array"),
        pytest.param({"A": 1}, id="int-value"),
        pytest.param({"A": None}, id="null-value"),
        pytest.param({"": "x"}, id="empty-name"),
        pytest.param({"A=B": "x"}, id="equals-in-name"),
        pytest.param({"A": "x\u0000y"}, id="nul-in-value"),
    ],
)
def test_invalid_environment_update(variables: Any) -> None:
    record: dict[str, Any] = {"type": "update_environment_variables"}
    if variables is not None:
        record["variables"] = variables
    assert isinstance(decode(record), InvalidEnvUpdate)


# --- attachment_import (WIRE-018): schema breaks are fatal -------------------

BEGIN: dict[str, Any] = {
    "type": "attachment_import",
    "version": 1,
    "operation": "begin",
    "prompt_uuid": UUID,
    "upload_id": "upl_image1",
    "attachment_id": "att_image1",
    "name": "screen.png",
    "size_bytes": 12345,
    "mime_type": "image/png",
    "sha256": SHA,
}
CHUNK: dict[str, Any] = {
    "type": "attachment_import",
    "version": 1,
    "operation": "chunk",
    "upload_id": "upl_image1",
    "sequence": 0,
    "data": "not even base64 here",
}
COMMIT = {"type": "attachment_import", "version": 1, "operation": "commit", "upload_id": "upl_a"}
ABORT = {**COMMIT, "operation": "abort"}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            BEGIN,
            AttachmentBegin(
                line=4,
                upload_id="upl_image1",
                attachment_id="att_image1",
                prompt_uuid=UUID,
                name="screen.png",
                size_bytes=12345,
                mime_type="image/png",
                sha256=SHA,
            ),
            id="begin",
        ),
        pytest.param(
            CHUNK,
            AttachmentChunk(
                line=4, upload_id="upl_image1", sequence=0, data="not even base64 here"
            ),
            id="chunk",
        ),
        pytest.param(COMMIT, AttachmentCommit(line=4, upload_id="upl_a"), id="commit"),
        pytest.param(ABORT, AttachmentAbort(line=4, upload_id="upl_a"), id="abort"),
        pytest.param(
            {**COMMIT, "upload_id": "upl_Z" + "_-9" * 20 + "xx"},
            AttachmentCommit(line=4, upload_id="upl_Z" + "_-9" * 20 + "xx"),
            id="upload-id-63-tail",
        ),
    ],
)
def test_attachment_import_forms(record: dict[str, Any], expected: InboundRecord) -> None:
    assert decode(record) == expected


def _without(record: dict[str, Any], member: str) -> dict[str, Any]:
    return {name: value for name, value in record.items() if name != member}


FATAL_IMPORTS = [
    *(
        pytest.param(_without(BEGIN, m), f"missing member {m}", id=f"begin-missing-{m}")
        for m in sorted(set(BEGIN) - {"type", "operation"})
    ),
    *(
        pytest.param(_without(CHUNK, m), f"missing member {m}", id=f"chunk-missing-{m}")
        for m in ("version", "upload_id", "sequence", "data")
    ),
    pytest.param({**COMMIT, "extra": 1}, "unknown member", id="commit-extra"),
    pytest.param({**COMMIT, "sequence": 0}, "unknown member", id="commit-with-sequence"),
    pytest.param({**ABORT, "reason": "x"}, "unknown member", id="abort-extra"),
    pytest.param(_without(COMMIT, "operation"), "operation must be", id="no-operation"),
    pytest.param({**COMMIT, "operation": "finish"}, "operation must be", id="unknown-operation"),
    pytest.param({**COMMIT, "operation": 1}, "operation must be", id="operation-int"),
    pytest.param({**COMMIT, "version": 2}, "version must be 1", id="version-2"),
    pytest.param({**COMMIT, "version": 1.0}, "version must be 1", id="version-float"),
    pytest.param({**COMMIT, "version": True}, "version must be 1", id="version-true"),
    pytest.param({**COMMIT, "version": "1"}, "version must be 1", id="version-string"),
    pytest.param({**COMMIT, "upload_id": "upl_"}, "upload_id is malformed", id="upl-empty"),
    pytest.param({**COMMIT, "upload_id": "upl_-a"}, "upload_id", id="upl-leading-dash"),
    pytest.param({**COMMIT, "upload_id": "upl_a.b"}, "upload_id", id="upl-dot"),
    pytest.param({**COMMIT, "upload_id": "upl_a\n"}, "upload_id", id="upl-newline"),
    pytest.param({**COMMIT, "upload_id": "upl_a" + "b" * 63}, "upload_id", id="upl-64-tail"),
    pytest.param({**COMMIT, "upload_id": 5}, "upload_id", id="upl-int"),
    pytest.param({**BEGIN, "attachment_id": "att_"}, "attachment_id", id="att-empty"),
    pytest.param({**BEGIN, "attachment_id": "upl_a"}, "attachment_id", id="att-prefix"),
    pytest.param({**BEGIN, "prompt_uuid": UUID.upper()}, "prompt_uuid", id="uuid-upper"),
    pytest.param({**BEGIN, "prompt_uuid": UUID.replace("-", "")}, "prompt_uuid", id="uuid-flat"),
    pytest.param(
        {**BEGIN, "prompt_uuid": "3f1e7948-5c1f-6c1f-8e2c-88bc9839ec27"},
        "prompt_uuid",
        id="uuid-version-6",
    ),
    pytest.param(
        {**BEGIN, "prompt_uuid": "3f1e7948-5c1f-0c1f-8e2c-88bc9839ec27"},
        "prompt_uuid",
        id="uuid-version-0",
    ),
    pytest.param(
        {**BEGIN, "prompt_uuid": "3f1e7948-5c1f-4c1f-ce2c-88bc9839ec27"},
        "prompt_uuid",
        id="uuid-variant",
    ),
    pytest.param({**BEGIN, "prompt_uuid": "{" + UUID + "}"}, "prompt_uuid", id="uuid-braces"),
    pytest.param({**BEGIN, "size_bytes": 0}, "size_bytes", id="size-zero"),
    pytest.param({**BEGIN, "size_bytes": -1}, "size_bytes", id="size-negative"),
    pytest.param({**BEGIN, "size_bytes": 1.0}, "size_bytes", id="size-float"),
    pytest.param({**BEGIN, "size_bytes": True}, "size_bytes", id="size-bool"),
    pytest.param({**BEGIN, "sha256": SHA.upper()}, "sha256", id="sha-upper"),
    pytest.param({**BEGIN, "sha256": SHA + "0"}, "sha256", id="sha-long"),
    pytest.param({**BEGIN, "name": None}, "name must be a string", id="name-null"),
    pytest.param({**BEGIN, "mime_type": 1}, "mime_type must be a string", id="mime-int"),
    pytest.param({**CHUNK, "sequence": -1}, "sequence", id="sequence-negative"),
    pytest.param({**CHUNK, "sequence": 0.0}, "sequence", id="sequence-float"),
    pytest.param({**CHUNK, "sequence": False}, "sequence", id="sequence-bool"),
    pytest.param({**CHUNK, "data": None}, "data must be a string", id="data-null"),
]


@pytest.mark.parametrize(("record", "reason"), FATAL_IMPORTS)
def test_attachment_import_schema_breaks_are_fatal(record: dict[str, Any], reason: str) -> None:
    with pytest.raises(FatalDecodeError) as caught:
        decode(record)
    assert caught.value.line_number == 4
    assert reason in caught.value.message


@pytest.mark.parametrize(
    "variant",
    ["3f1e7948-5c1f-1c1f-8e2c-88bc9839ec27", "3f1e7948-5c1f-5c1f-bfff-88bc9839ec27"],
)
def test_prompt_uuid_versions_and_variants_accepted(variant: str) -> None:
    record = decode({**BEGIN, "prompt_uuid": variant})
    assert isinstance(record, AttachmentBegin)
    assert record.prompt_uuid == variant


def test_attachment_import_line_limit_at_and_past() -> None:
    overhead = len(json.dumps({**CHUNK, "data": ""}, separators=(",", ":")))
    at_limit = {**CHUNK, "data": "A" * (MAX_RECORD_BYTES - overhead)}
    data = json.dumps(at_limit, separators=(",", ":")).encode()
    assert len(data) == MAX_RECORD_BYTES
    assert isinstance(decode(data), AttachmentChunk)
    past = data[:-2] + b'A"}'
    with pytest.raises(FatalDecodeError, match="exceeds 8388608 bytes"):
        decode(past)


# --- prior context and unknown types ------------------------------------------


@pytest.mark.parametrize("kind", ["assistant", "system"])
def test_replayed_prior_context(kind: str) -> None:
    raw = {"type": kind, "message": {"content": [{"type": "tool_use", "id": "t"}]}}
    record = decode(raw)
    assert isinstance(record, PriorContextRecord)
    assert (record.type, record.line) == (kind, 4)
    assert record.raw["message"]["content"][0] == FrozenDict(type="tool_use", id="t")


@pytest.mark.parametrize("kind", ["result", "stream_event", "User", ""])
def test_unknown_type(kind: str) -> None:
    assert decode({"type": kind}) == UnknownRecord(line=4, type=kind)
