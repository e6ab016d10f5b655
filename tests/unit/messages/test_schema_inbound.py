"""The inbound half of the published schema (WIRE-021): built from the
decoder's own tables, and agreeing with ``decode_line`` record by record.

The agreement test's verdict is ``decode_line``'s, plus the dispatcher's field
check for a control_request of an installed subtype (the schema describes the
known payloads too). What JSON Schema cannot say is kept out of that table and
pinned, each with its reason, in ``test_what_the_schema_cannot_say``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.dispatch import (
    SET_MAX_THINKING_TOKENS_ERROR,
    SET_MODEL_ERROR,
    SET_PERMISSION_MODE_ERROR,
    Perform,
    dispatch,
    installed_subtypes,
)
from agentx.messages.framing import MAX_RECORD_BYTES, Line
from agentx.messages.inbound import (
    ATTACHMENT_ID,
    SHA256,
    KeepAlive,
    PriorContextRecord,
    UnknownRecord,
    UpdateEnvironmentVariables,
)
from agentx.messages.inbound_control import (
    ERROR_MEMBERS,
    SUCCESS_MEMBERS,
    ControlRequest,
    ControlResponse,
)
from agentx.messages.inbound_import import (
    IMPORT_FORMS,
    AttachmentAbort,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
)
from agentx.messages.inbound_user import (
    ATTACHMENT_KINDS,
    ATTACHMENT_REF_MEMBERS,
    MESSAGE_MEMBERS,
    PRIORITIES,
    TEXT_BLOCK_MEMBERS,
    TEXT_BLOCK_TYPES,
    USER_ALIASES,
    USER_MEMBERS,
    USER_REQUIRED,
    UserRecord,
)
from agentx.messages.mcp.config import MAX_SERVERS
from agentx.messages.permission_wire import INVALID_RESPONSE_DENIAL, parse_permission_response
from agentx.messages.schema import OUTBOUND, PROTOCOL_VERSIONS, document
from agentx.messages.schema_inbound_control import REQUESTS, SDK_REQUESTS
from agentx.messages.strict_json import MAX_DEPTH

UUID = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
SHA = "0123456789abcdef" * 4
TOOL_USE_ID = "toolu_1"
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
    "data": "aGk=",
}
COMMIT: dict[str, Any] = {
    "type": "attachment_import",
    "version": 1,
    "operation": "commit",
    "upload_id": "upl_image1",
}
ACCEPTED = (
    UserRecord,
    ControlRequest,
    ControlResponse,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
    AttachmentAbort,
    KeepAlive,
    UpdateEnvironmentVariables,
    PriorContextRecord,
)
#: Answers the dispatcher gives a well-formed request of these subtypes.
FIXED_ERRORS = frozenset(
    {SET_PERMISSION_MODE_ERROR, SET_MODEL_ERROR, SET_MAX_THINKING_TOKENS_ERROR}
)
CANONICAL_TO_ALIAS = {canonical: alias for alias, canonical in USER_ALIASES.items()}


def _validator(ref: str) -> Draft202012Validator:
    schema = {key: value for key, value in document().items() if key != "anyOf"}
    return Draft202012Validator({**schema, "$ref": f"#/$defs/{ref}"})


INBOUND = _validator("inbound")
DECISION = _validator("inbound.can_use_tool_decision")
DEFS: dict[str, Any] = document()["$defs"]


def decode(record: Mapping[str, Any] | bytes) -> InboundRecord:
    data = record if isinstance(record, bytes) else json.dumps(record).encode()
    return decode_line(Line(number=1, data=data))


def decoder_accepts(record: Mapping[str, Any] | bytes) -> bool:
    try:
        decoded = decode(record)
    except FatalDecodeError:
        return False
    if isinstance(decoded, ControlRequest) and decoded.subtype in installed_subtypes("extended"):
        action = dispatch(decoded, profile="extended")
        return isinstance(action, Perform) or action.record["response"]["error"] in FIXED_ERRORS
    return isinstance(decoded, ACCEPTED)


def user(**members: Any) -> dict[str, Any]:
    return {"type": "user", "message": "hi", "parent_tool_use_id": None, **members}


def request(subtype: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": "r1",
        "request": {"subtype": subtype, **fields},
    }


def response(**members: Any) -> dict[str, Any]:
    return {"type": "control_response", "response": {"request_id": "r1", **members}}


def env(variables: Any) -> dict[str, Any]:
    return {"type": "update_environment_variables", "variables": variables}


def nested(arrays: int) -> Any:
    """``arrays`` nested arrays: inside a record, ``arrays + 1`` levels deep."""
    value: Any = []
    for _ in range(arrays - 1):
        value = [value]
    return value


def _servers(count: int) -> dict[str, Any]:
    return {f"s{index}": {"command": "true"} for index in range(count)}


# --- coupling: the schema is built from the decoder's tables ----------------------


def _properties(name: str) -> set[str]:
    return set(DEFS[name]["properties"])


def _forms(name: str) -> Iterator[dict[str, Any]]:
    yield from DEFS[name]["oneOf"]


def test_user_members_are_the_decoders() -> None:
    assert _properties("inbound.user") == USER_MEMBERS | USER_ALIASES.keys()
    required = set(DEFS["inbound.user"]["required"])
    assert required | {"parent_tool_use_id"} == USER_REQUIRED | {"type"}


def test_message_and_block_members_are_the_decoders() -> None:
    objects = [form for form in _forms("inbound.user.message") if form.get("type") == "object"]
    assert set().union(*(form["properties"] for form in objects)) == MESSAGE_MEMBERS
    assert _properties("inbound.user.text_block") == TEXT_BLOCK_MEMBERS
    text_types = DEFS["inbound.user.text_block"]["properties"]["type"]["enum"]
    assert set(text_types) == TEXT_BLOCK_TYPES
    ref = DEFS["inbound.user.attachment_ref"]
    assert set(ref["properties"]) == set(ref["required"]) == ATTACHMENT_REF_MEMBERS
    assert set(ref["properties"]["kind"]["enum"]) == ATTACHMENT_KINDS
    assert set(DEFS["inbound.user"]["properties"]["priority"]["enum"]) == PRIORITIES | {None}


def test_import_forms_are_the_decoders() -> None:
    forms = {
        form["properties"]["operation"]["const"]: form
        for form in _forms("inbound.attachment_import")
    }
    assert forms.keys() == IMPORT_FORMS.keys()
    for operation, members in IMPORT_FORMS.items():
        assert set(forms[operation]["properties"]) == set(forms[operation]["required"]) == members


def test_versions_are_the_published_ones() -> None:
    versioned = next(
        form
        for form in _forms("inbound.user.message")
        if "content_version" in form.get("required", ())
    )
    assert versioned["properties"]["content_version"] == {
        "const": PROTOCOL_VERSIONS["content_version"]
    }
    for form in _forms("inbound.attachment_import"):
        assert form["properties"]["version"] == {"const": PROTOCOL_VERSIONS["attachment_import"]}


def test_control_response_members_are_the_decoders() -> None:
    success, error = DEFS["inbound.control_response"]["properties"]["response"]["oneOf"]
    assert set(success["properties"]) == SUCCESS_MEMBERS
    assert set(error["properties"]) == ERROR_MEMBERS


def test_every_installed_subtype_has_its_request_definition() -> None:
    assert REQUESTS.keys() == installed_subtypes("extended")
    for subtype in REQUESTS:
        assert DEFS[f"inbound.control_request.{subtype}"]["properties"]["subtype"] == {
            "const": subtype
        }


def test_the_sdk_profile_subtypes_are_described() -> None:
    """DEC-PROFILE-2: ``rewind_files`` has its request definition."""
    assert SDK_REQUESTS.keys() == installed_subtypes("sdk") - installed_subtypes("extended")
    rewind = Draft202012Validator(DEFS["inbound.control_request.rewind_files"])
    assert rewind.is_valid({"subtype": "rewind_files", "user_message_id": "u"})
    assert rewind.is_valid({"subtype": "rewind_files", "user_message_id": "u", "dry_run": True})
    assert not rewind.is_valid({"subtype": "rewind_files"})
    assert not rewind.is_valid({"subtype": "rewind_files", "user_message_id": "u", "x": 1})


def _record_types(definitions: Mapping[str, Any]) -> set[str]:
    return {schema["properties"]["type"]["const"] for schema in definitions.values()}


def test_the_inbound_union_names_exactly_the_types_the_decoder_routes() -> None:
    """WIRE-002: every other type decodes as an unknown record (warned, ignored)."""
    refs = [item["$ref"].removeprefix("#/$defs/") for item in DEFS["inbound"]["oneOf"]]
    inbound = _record_types({name: DEFS[name] for name in refs})
    candidates = inbound | _record_types(OUTBOUND) | {"attachment_import_request", ""}
    assert {kind for kind in candidates if _routed(kind)} == inbound


def _routed(kind: str) -> bool:
    try:
        return not isinstance(decode({"type": kind}), UnknownRecord)
    except FatalDecodeError:  # attachment_import's closed schema is fatal
        return True


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if "$ref" in value:
            yield value["$ref"]
        for item in value.values():
            yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def test_every_reference_resolves_and_no_name_collides() -> None:
    Draft202012Validator.check_schema(document())
    names = set(DEFS)
    assert {ref.removeprefix("#/$defs/") for ref in _refs(document())} <= names
    assert all(name.startswith(("inbound", "outbound")) for name in names)


# --- agreement: the schema's verdict is the decoder's ------------------------------

ROWS = [
    # user: the WIRE-017 message union
    pytest.param(user(), True, id="WIRE-017-string"),
    pytest.param(user(message={"role": "user", "content": "hi"}), True, id="WIRE-017-object"),
    pytest.param(
        user(
            message={"content": [{"type": "text", "text": "a"}, {"type": "input_text", "text": ""}]}
        ),
        True,
        id="WIRE-017-legacy-blocks-input_text",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [REF]}), True, id="WIRE-017-only-attachments"
    ),
    pytest.param(
        user(
            message={
                "role": "user",
                "content_version": 1,
                "content": [{"type": "input_text", "text": "a"}, REF],
            }
        ),
        True,
        id="WIRE-017-versioned-mixed",
    ),
    pytest.param(user(message={"content": [REF]}), False, id="WIRE-017-ref-needs-version"),
    pytest.param(user(message={"content": []}), False, id="WIRE-017-empty-blocks"),
    pytest.param(
        user(message={"content_version": 1, "content": "hi"}), False, id="WIRE-017-versioned-string"
    ),
    pytest.param(
        user(message={"content_version": 2, "content": [REF]}), False, id="WIRE-017-version-2"
    ),
    pytest.param(
        user(message={"role": "assistant", "content": "hi"}), False, id="WIRE-017-role-assistant"
    ),
    pytest.param(user(message={"role": None, "content": "hi"}), False, id="WIRE-017-role-null"),
    pytest.param(user(message=5), False, id="WIRE-017-message-number"),
    pytest.param(user(message={"content": "hi", "name": "x"}), False, id="WIRE-021-message-closed"),
    pytest.param(
        user(message={"content": [{"type": "text", "text": "a", "cache": 1}]}),
        False,
        id="WIRE-021-text-block-closed",
    ),
    pytest.param(
        user(message={"content": [{"type": "image", "text": "a"}]}), False, id="WIRE-017-block-type"
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "url": "x"}]}),
        False,
        id="WIRE-017-ref-closed",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "storage_id": None}]}),
        False,
        id="WIRE-017-ref-storage-id-null",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "sha256": SHA.upper()}]}),
        False,
        id="WIRE-017-ref-sha256-grammar",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "size_bytes": 0}]}),
        False,
        id="WIRE-017-ref-size-zero",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "size_bytes": 1}]}),
        True,
        id="WIRE-017-ref-size-one",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "kind": "audio"}]}),
        False,
        id="WIRE-017-ref-kind",
    ),
    pytest.param(
        user(message={"content_version": 1, "content": [{**REF, "attachment_id": "att_x\n"}]}),
        False,
        id="WIRE-017-ref-id-trailing-newline",
    ),
    pytest.param(
        user(
            message={"content_version": 1, "content": [{**REF, "attachment_id": "att_" + "a" * 63}]}
        ),
        True,
        id="WIRE-017-ref-id-at-limit",
    ),
    pytest.param(
        user(
            message={"content_version": 1, "content": [{**REF, "attachment_id": "att_" + "a" * 64}]}
        ),
        False,
        id="WIRE-017-ref-id-past-limit",
    ),
    # user: the envelope
    pytest.param(user(model="x"), False, id="WIRE-021-user-closed"),
    pytest.param({"type": "user", "message": "hi"}, False, id="WIRE-021-parent-required"),
    pytest.param(user(parent_tool_use_id=7), False, id="WIRE-021-parent-number"),
    pytest.param(user(parent_tool_use_id="toolu_1"), True, id="WIRE-021-parent-string"),
    pytest.param(user(priority="next"), True, id="DEC-TURN-1-priority"),
    pytest.param(user(priority="soon"), False, id="DEC-TURN-1-priority-vocabulary"),
    pytest.param(
        user(priority=None, uuid=None, timestamp=None, isSynthetic=None),
        True,
        id="WIRE-021-null-is-absent",
    ),
    pytest.param(user(session_id="default"), True, id="DEC-COMPAT-2-any-session-id"),
    pytest.param(user(isSynthetic="yes"), False, id="WIRE-021-isSynthetic-type"),
    pytest.param(user(timestamp=1), False, id="WIRE-021-timestamp-type"),
    pytest.param(user(tool_use_result={"any": [1, None]}), True, id="WIRE-017-tool-use-result"),
    pytest.param(
        user(tool_use_result=nested(MAX_DEPTH - 1)), True, id="DECISIONS-1-depth-at-limit"
    ),
    pytest.param(
        user(isReplay=True, uuid=UUID, session_id="s"), True, id="WIRE-017-replay-complete"
    ),
    pytest.param(user(isReplay=True, uuid=UUID), False, id="WIRE-017-replay-needs-session"),
    pytest.param(
        user(isReplay=True, uuid=None, session_id="s"), False, id="WIRE-017-replay-needs-uuid"
    ),
    pytest.param(user(isReplay=False), True, id="WIRE-017-not-replay"),
    # user: DEC-ALIAS-1
    pytest.param(
        {"type": "user", "message": "hi", "parentToolUseId": None}, True, id="DEC-ALIAS-1-parent"
    ),
    pytest.param(user(sessionId=5), False, id="DEC-ALIAS-1-alias-takes-canonical-type"),
    pytest.param(user(session_id="s", sessionId=5), True, id="DEC-ALIAS-1-canonical-wins"),
    pytest.param(user(parentToolUseId=[1]), True, id="DEC-ALIAS-1-canonical-parent-wins"),
    pytest.param(
        user(is_replay=True, uuid=UUID, sessionId="s"), True, id="DEC-ALIAS-1-replay-by-aliases"
    ),
    pytest.param(
        user(is_replay=True, uuid=UUID), False, id="DEC-ALIAS-1-alias-replay-needs-session"
    ),
    pytest.param(user(isReplay=None, is_replay=True), True, id="DEC-ALIAS-1-null-canonical-wins"),
    pytest.param(
        user(isReplay=True, uuid=UUID, session_id=None, sessionId="s"),
        False,
        id="DEC-ALIAS-1-null-session-wins",
    ),
    pytest.param(user(is_synthetic="yes"), False, id="DEC-ALIAS-1-is_synthetic-type"),
    # control_request: envelope and installed subtypes
    pytest.param(request("initialize"), True, id="WIRE-024-initialize"),
    pytest.param(request("initialize", hooks=None), True, id="DEC-COMPAT-1-hooks-null"),
    pytest.param(request("initialize", hooks={}), False, id="DEC-COMPAT-1-hooks-object"),
    pytest.param(request("interrupt"), True, id="WIRE-010-interrupt"),
    pytest.param(request("interrupt", now=True), False, id="WIRE-010-interrupt-fieldless"),
    pytest.param(request("get_context_usage"), True, id="Control-ops-get_context_usage"),
    pytest.param(request("mcp_status", verbose=1), False, id="Control-ops-mcp_status-fieldless"),
    pytest.param(
        request("set_permission_mode", mode=[1]), True, id="Control-ops-set_permission_mode-any"
    ),
    pytest.param(request("set_model", model="m"), True, id="Control-ops-set_model"),
    pytest.param(request("set_model", model=3), False, id="Control-ops-set_model-type"),
    pytest.param(
        request("set_max_thinking_tokens", max_thinking_tokens=None),
        True,
        id="Control-ops-set_max_thinking_tokens-null",
    ),
    pytest.param(
        request("set_max_thinking_tokens", max_thinking_tokens="many"),
        False,
        id="Control-ops-set_max_thinking_tokens-type",
    ),
    pytest.param(
        request("cancel_async_message", message_uuid=UUID), True, id="DEC-PROFILE-1-cancel"
    ),
    pytest.param(request("cancel_async_message"), False, id="DEC-PROFILE-1-cancel-needs-uuid"),
    pytest.param(request("get_settings"), True, id="DEC-PROFILE-1-get_settings"),
    pytest.param(
        request("apply_flag_settings", settings=[]), False, id="DEC-PROFILE-1-settings-object"
    ),
    pytest.param(request("stop_task", task_id="t1"), True, id="DEC-PROFILE-1-stop_task"),
    pytest.param(
        request("mcp_set_servers", servers=_servers(MAX_SERVERS)),
        True,
        id="DEC-PROFILE-1-mcp-servers-at-limit",
    ),
    pytest.param(
        request("mcp_set_servers", servers=_servers(MAX_SERVERS + 1)),
        False,
        id="DEC-PROFILE-1-mcp-servers-past-limit",
    ),
    pytest.param(request("mcp_reconnect", serverName="s"), True, id="DEC-PROFILE-1-mcp-reconnect"),
    pytest.param(
        request("mcp_toggle", serverName="s", enabled="yes"),
        False,
        id="DEC-PROFILE-1-mcp-toggle-enabled-type",
    ),
    pytest.param(request("rewind_files", x=1), True, id="DECISIONS-1-unknown-subtype-envelope"),
    pytest.param(
        {**request("interrupt"), "trace": "t"}, True, id="DECISIONS-1-control-envelope-open"
    ),
    pytest.param(
        {"type": "control_request", "request": {"subtype": "interrupt"}},
        False,
        id="DECISIONS-1-no-request-id",
    ),
    pytest.param(
        {"type": "control_request", "request_id": "r1", "request": "interrupt"},
        False,
        id="DECISIONS-1-request-not-object",
    ),
    pytest.param(
        {"type": "control_request", "request_id": "r1", "request": {"subtype": 1}},
        False,
        id="DECISIONS-1-subtype-not-string",
    ),
    # control_response: WIRE-PERM-040
    pytest.param(response(subtype="success"), True, id="WIRE-PERM-040-success-bare"),
    pytest.param(
        response(subtype="success", response={"behavior": "allow"}),
        True,
        id="WIRE-PERM-040-success-decision",
    ),
    pytest.param(response(subtype="success", response=None), True, id="WIRE-PERM-040-null"),
    pytest.param(
        response(subtype="success", response="ok"), False, id="WIRE-PERM-040-payload-type"
    ),
    pytest.param(response(subtype="success", error="x"), False, id="WIRE-PERM-040-success-closed"),
    pytest.param(response(subtype="error", error="no"), True, id="WIRE-PERM-040-error"),
    pytest.param(
        response(subtype="error", error="no", pending_permission_requests=[{"type": "x"}]),
        True,
        id="WIRE-PERM-040-pending",
    ),
    pytest.param(
        response(subtype="error", error="no", pending_permission_requests=[1]),
        False,
        id="WIRE-PERM-040-pending-objects",
    ),
    pytest.param(response(subtype="error"), False, id="WIRE-PERM-040-error-needs-text"),
    pytest.param(response(subtype="maybe"), False, id="WIRE-PERM-040-subtype"),
    pytest.param(
        {"type": "control_response", "response": {"subtype": "success"}},
        False,
        id="DECISIONS-1-response-no-request-id",
    ),
    pytest.param(
        {**response(subtype="success"), "echo": True}, True, id="WIRE-PERM-040-envelope-open"
    ),
    # attachment_import: WIRE-018
    pytest.param(BEGIN, True, id="WIRE-018-begin"),
    pytest.param(CHUNK, True, id="WIRE-018-chunk"),
    pytest.param(COMMIT, True, id="WIRE-018-commit"),
    pytest.param({**COMMIT, "operation": "abort"}, True, id="WIRE-018-abort"),
    pytest.param({**COMMIT, "operation": "resume"}, False, id="WIRE-018-operation"),
    pytest.param({**COMMIT, "reason": "x"}, False, id="WIRE-018-closed"),
    pytest.param({**BEGIN, "kind": "image"}, False, id="WIRE-018-begin-closed"),
    pytest.param(
        {k: v for k, v in BEGIN.items() if k != "sha256"}, False, id="WIRE-018-begin-needs-sha256"
    ),
    pytest.param({**CHUNK, "sequence": -1}, False, id="WIRE-018-sequence-negative"),
    pytest.param({**COMMIT, "version": 2}, False, id="WIRE-018-version"),
    pytest.param({**COMMIT, "upload_id": "upload1"}, False, id="WIRE-018-upload-id-grammar"),
    pytest.param(
        {**COMMIT, "upload_id": "upl_" + "u" * 63}, True, id="WIRE-018-upload-id-at-limit"
    ),
    pytest.param(
        {**COMMIT, "upload_id": "upl_" + "u" * 64}, False, id="WIRE-018-upload-id-past-limit"
    ),
    pytest.param(
        {**BEGIN, "prompt_uuid": UUID[:14] + "6" + UUID[15:]}, False, id="WIRE-018-uuid-version-6"
    ),
    pytest.param({**BEGIN, "size_bytes": 0}, False, id="WIRE-018-size-positive"),
    # keep_alive, environment updates, prior context, unknown types
    pytest.param({"type": "keep_alive"}, True, id="Input-keep_alive"),
    pytest.param({"type": "keep_alive", "at": 1}, True, id="Input-keep_alive-open"),
    pytest.param(env({"A": "1", "B": ""}), True, id="Input-env-map"),
    pytest.param(env({}), True, id="Input-env-empty-map"),
    pytest.param(env({"": "1"}), False, id="Input-env-empty-name"),
    pytest.param(env({"A=B": "1"}), False, id="Input-env-name-equals"),
    pytest.param(env({"A\u0000": "1"}), False, id="Input-env-name-nul"),
    pytest.param(env({"A": "1\u0000"}), False, id="Input-env-value-nul"),
    pytest.param(env({"A": 1}), False, id="Input-env-value-type"),
    pytest.param(env(["A=1"]), False, id="Input-env-not-a-map"),
    pytest.param({"type": "update_environment_variables"}, False, id="Input-env-missing"),
    pytest.param(
        {"type": "assistant", "message": {"content": "earlier"}}, True, id="Input-prior-assistant"
    ),
    pytest.param({"type": "system", "subtype": "init"}, True, id="Input-prior-system"),
    pytest.param({"type": "result"}, False, id="WIRE-002-unknown-type"),
    pytest.param(
        {"type": "control_cancel_request", "request_id": "r1"},
        False,
        id="WIRE-002-cancel-not-inbound",
    ),
    pytest.param({"message": "hi"}, False, id="WIRE-001-no-type"),
    pytest.param({"type": 1}, False, id="WIRE-001-type-not-string"),
]


@pytest.mark.parametrize(("record", "valid"), ROWS)
def test_the_schema_agrees_with_the_decoder(record: dict[str, Any], valid: bool) -> None:
    assert decoder_accepts(record) is valid
    assert INBOUND.is_valid(record) is valid


@pytest.mark.parametrize(
    "line",
    [
        # JSON Schema's data model equates 1.0 with 1; the decoder wants an int.
        pytest.param(json.dumps({**COMMIT, "version": 1.0}).encode(), id="float-version"),
        pytest.param(
            json.dumps(user(message={"content_version": 1.0, "content": [REF]})).encode(),
            id="float-content-version",
        ),
        pytest.param(
            json.dumps(request("set_max_thinking_tokens", max_thinking_tokens=8.0)).encode(),
            id="float-thinking-tokens",
        ),
        # WIRE-014: the schema sees the parsed value, where one member is left.
        pytest.param(b'{"type":"keep_alive","type":"keep_alive"}', id="duplicate-member"),
        # DECISIONS section 1: the nesting bound is a JSON-layer limit.
        pytest.param(
            json.dumps(user(tool_use_result=nested(MAX_DEPTH))).encode(), id="depth-past-limit"
        ),
        # WIRE-018: the line bound of an import record is on its bytes.
        pytest.param(
            json.dumps({**CHUNK, "data": "A" * MAX_RECORD_BYTES}).encode(), id="import-line-bound"
        ),
    ],
)
def test_what_the_schema_cannot_say(line: bytes) -> None:
    assert INBOUND.is_valid(json.loads(line))
    assert not decoder_accepts(line)


# --- the can_use_tool decision (WIRE-PERM-041..044) ----------------------------------

ADD_RULES = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "git status:*"}],
    "behavior": "allow",
    "destination": "session",
}


@pytest.mark.parametrize(
    ("decision", "valid"),
    [
        pytest.param({"behavior": "allow"}, True, id="WIRE-PERM-042-allow"),
        pytest.param(
            {
                "behavior": "allow",
                "updatedInput": {"command": "ls"},
                "updatedPermissions": [ADD_RULES, {**ADD_RULES, "rules": [{"toolName": "Read"}]}],
                "toolUseID": TOOL_USE_ID,
            },
            True,
            id="WIRE-PERM-042-allow-full",
        ),
        pytest.param(
            {"behavior": "allow", "updatedInput": None, "updatedPermissions": None},
            True,
            id="WIRE-PERM-042-nulls",
        ),
        pytest.param(
            {"behavior": "allow", "updatedInput": "ls"}, False, id="WIRE-PERM-042-input-type"
        ),
        pytest.param({"behavior": "allow", "message": "x"}, False, id="WIRE-PERM-042-closed"),
        pytest.param(
            {
                "behavior": "allow",
                "updatedPermissions": [
                    {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
                ],
            },
            True,
            id="WIRE-PERM-022-setMode",
        ),
        pytest.param(
            {
                "behavior": "allow",
                "updatedPermissions": [{**ADD_RULES, "destination": "userSettings"}],
            },
            False,
            id="WIRE-PERM-022-destination",
        ),
        pytest.param(
            {"behavior": "allow", "updatedPermissions": [{**ADD_RULES, "rules": []}]},
            False,
            id="WIRE-PERM-022-rules-nonempty",
        ),
        pytest.param(
            {
                "behavior": "allow",
                "updatedPermissions": [{**ADD_RULES, "rules": [{"toolName": "Bash(x)"}]}],
            },
            False,
            id="WIRE-PERM-022-tool-name-grammar",
        ),
        pytest.param(
            {
                "behavior": "allow",
                "updatedPermissions": [
                    {**ADD_RULES, "rules": [{"toolName": "Bash", "ruleContent": " "}]}
                ],
            },
            False,
            id="WIRE-PERM-022-rule-content-blank",
        ),
        pytest.param(
            {"behavior": "allow", "updatedPermissions": [{**ADD_RULES, "behavior": "maybe"}]},
            False,
            id="WIRE-PERM-022-behavior",
        ),
        pytest.param(
            {"behavior": "deny", "message": "no", "interrupt": True, "toolUseID": TOOL_USE_ID},
            True,
            id="WIRE-PERM-043-deny-full",
        ),
        pytest.param({"behavior": "deny", "message": None}, True, id="WIRE-PERM-043-message-null"),
        pytest.param({"behavior": "deny", "interrupt": None}, False, id="WIRE-PERM-043-interrupt"),
        pytest.param({"behavior": "deny", "updatedInput": {}}, False, id="WIRE-PERM-043-closed"),
        pytest.param({"behavior": "ask"}, False, id="WIRE-PERM-044-ask"),
        pytest.param({"message": "no"}, False, id="WIRE-PERM-041-behavior-required"),
        pytest.param({"behavior": "allow", "toolUseID": 5}, False, id="WIRE-PERM-042-id-type"),
    ],
)
def test_the_decision_schema_agrees_with_the_permission_parser(
    decision: dict[str, Any], valid: bool
) -> None:
    parsed = parse_permission_response(decision, TOOL_USE_ID)
    assert (parsed != INVALID_RESPONSE_DENIAL) is valid
    assert DECISION.is_valid(decision) is valid


def test_a_mismatched_tool_use_id_is_beyond_the_schema() -> None:
    """WIRE-PERM-042: equality with the request's id needs the request."""
    decision = {"behavior": "allow", "toolUseID": "toolu_other"}
    assert DECISION.is_valid(decision)
    assert parse_permission_response(decision, TOOL_USE_ID) == INVALID_RESPONSE_DENIAL


# --- properties: generated user records ------------------------------------------

_TEXT = st.text(max_size=12)
_TEXT_BLOCK = st.builds(
    lambda kind, text: {"type": kind, "text": text},
    st.sampled_from(sorted(TEXT_BLOCK_TYPES)),
    _TEXT,
)
_ATTACHMENT = st.builds(
    lambda attachment_id, kind, size, digest: {
        **REF,
        "attachment_id": attachment_id,
        "kind": kind,
        "size_bytes": size,
        "sha256": digest,
        "storage_id": "blob_sha256_" + digest,
    },
    st.from_regex(ATTACHMENT_ID, fullmatch=True),
    st.sampled_from(sorted(ATTACHMENT_KINDS)),
    st.integers(min_value=1, max_value=2**53),
    st.from_regex(SHA256, fullmatch=True),
)
_ROLE = st.sampled_from([{}, {"role": "user"}])
_MESSAGE = st.one_of(
    _TEXT,
    st.builds(
        lambda role, content: {**role, "content": content},
        _ROLE,
        st.one_of(_TEXT, st.lists(_TEXT_BLOCK, min_size=1, max_size=3)),
    ),
    st.builds(
        lambda role, content: {**role, "content_version": 1, "content": content},
        _ROLE,
        st.lists(st.one_of(_TEXT_BLOCK, _ATTACHMENT), min_size=1, max_size=3),
    ),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_OPTIONAL: dict[str, st.SearchStrategy[Any]] = {
    "uuid": st.none() | st.just(UUID),
    "session_id": st.none() | _TEXT,
    "priority": st.sampled_from([None, *sorted(PRIORITIES)]),
    "isSynthetic": st.none() | st.booleans(),
    "timestamp": st.none() | _TEXT,
    "isReplay": st.none() | st.booleans(),
    "tool_use_result": _JSON,
}


def _spelling(name: str) -> st.SearchStrategy[str]:
    alias = CANONICAL_TO_ALIAS.get(name)
    return st.just(name) if alias is None else st.sampled_from([name, alias])


@st.composite
def user_records(draw: st.DrawFn) -> dict[str, Any]:
    """Valid user records: every message form, canonical or alias spellings."""
    record: dict[str, Any] = {"type": "user", "message": draw(_MESSAGE)}
    record[draw(_spelling("parent_tool_use_id"))] = draw(st.none() | _TEXT)
    for name, values in _OPTIONAL.items():
        if draw(st.booleans()):
            record[draw(_spelling(name))] = draw(values)
    replay = record["isReplay"] if "isReplay" in record else record.get("is_replay")
    if replay is True:  # the replay form requires UUID and session ID
        record["uuid"] = UUID
        record["session_id"] = draw(_TEXT)
    return record


def test_the_optional_table_covers_every_member() -> None:
    assert {"type", "message", "parent_tool_use_id", *_OPTIONAL} == USER_MEMBERS


@given(user_records())
def test_generated_user_records_validate_and_decode(record: dict[str, Any]) -> None:
    assert INBOUND.is_valid(record)
    assert isinstance(decode(record), UserRecord)


_MEMBER_NAMES = sorted(USER_MEMBERS | USER_ALIASES.keys() | {"model"})
_DROP = "<drop>"
_VALUES = st.sampled_from(
    [_DROP, None, True, False, 0, 7, "", "now", UUID, {}, {"content": "x"}, [], [REF]]
)


@given(user_records(), st.lists(st.tuples(st.sampled_from(_MEMBER_NAMES), _VALUES), max_size=3))
def test_changed_user_records_get_the_same_verdict(
    record: dict[str, Any], changes: list[tuple[str, Any]]
) -> None:
    """Drop or set members, aliases and an unknown name at random: the schema
    and the decoder still agree."""
    for name, value in changes:
        if value == _DROP:
            record.pop(name, None)
        else:
            record[name] = value
    assert INBOUND.is_valid(record) is decoder_accepts(record)


_FIELD_NAMES = sorted(
    {"hooks", "model", "max_thinking_tokens", "message_uuid", "settings", "task_id", "servers"}
    | {"serverName", "enabled", "mode", "x"}
)
_FIELD_VALUES = st.sampled_from([None, True, 0, 5, "", "s", {}, {"a": {}}, [], ["s"]])


@given(
    st.sampled_from([*sorted(REQUESTS), "rewind_files", "can_use_tool"]),
    st.dictionaries(st.sampled_from(_FIELD_NAMES), _FIELD_VALUES, max_size=3),
)
def test_generated_control_requests_get_the_same_verdict(
    subtype: str, fields: dict[str, Any]
) -> None:
    """Installed and uninstalled subtypes with random fields: the schema and
    decode_line plus the dispatcher's field check agree."""
    record = request(subtype, **fields)
    assert INBOUND.is_valid(record) is decoder_accepts(record)
