"""Which actor owns each inbound record (spec "Input records", WIRE-002,
WIRE-006, WIRE-017, WIRE-021): decoded from real lines, then routed."""

from __future__ import annotations

import json
import types
import typing
from typing import Any

import pytest

from agentx.messages import inbound_import
from agentx.messages.decode import InboundRecord, decode_line
from agentx.messages.framing import Line
from agentx.messages.inbound_user import UserRecord
from agentx.messages.routing import ROUTES, Route, route_of

USER = {"type": "user", "message": "hi", "parent_tool_use_id": None, "session_id": ""}
REPLAY = {**USER, "isReplay": True, "uuid": "11111111-1111-4111-8111-111111111111"}
BEGIN = {
    "type": "attachment_import",
    "version": 1,
    "operation": "begin",
    "upload_id": "upl_a",
    "attachment_id": "att_a",
    "name": "a.png",
    "mime_type": "image/png",
    "size_bytes": 10,
    "sha256": "0" * 64,
    "prompt_uuid": "11111111-1111-4111-8111-111111111111",
}


@pytest.mark.parametrize(
    ("record", "route"),
    [
        (USER, Route.TURN),
        (REPLAY, Route.PRIOR_CONTEXT),
        ({"type": "assistant", "message": {"content": "earlier"}}, Route.PRIOR_CONTEXT),
        ({"type": "system", "subtype": "init"}, Route.PRIOR_CONTEXT),
        ({**USER, "message": 7}, Route.INPUT_ERROR),
        (
            {"type": "control_request", "request_id": "r", "request": {"subtype": "interrupt"}},
            Route.CONTROL_REQUEST,
        ),
        (
            {"type": "control_request", "request_id": "r", "request": {"subtype": 5}},
            Route.CONTROL_REQUEST,
        ),
        ({"type": "control_request", "request": {"subtype": "interrupt"}}, Route.CONTROL_REQUEST),
        (
            {"type": "control_response", "response": {"subtype": "success", "request_id": "r"}},
            Route.CONTROL_RESPONSE,
        ),
        (
            {"type": "control_response", "response": {"subtype": "maybe", "request_id": "r"}},
            Route.CONTROL_RESPONSE,
        ),
        (BEGIN, Route.UPLOAD),
        (
            {"type": "update_environment_variables", "variables": {"A_B": "1"}},
            Route.ENVIRONMENT,
        ),
        ({"type": "update_environment_variables", "variables": 3}, Route.INVALID_ENVIRONMENT),
        ({"type": "keep_alive"}, Route.KEEP_ALIVE),
        ({"type": "future_record"}, Route.UNKNOWN),
    ],
    ids=[
        "prompt",
        "replayed-user-is-prior-context",
        "assistant-is-prior-context",
        "system-is-prior-context",
        "invalid-user-gets-input-error",
        "control-request",
        "invalid-control-request-still-correlated",
        "uncorrelatable-control-request",
        "control-response",
        "invalid-control-response",
        "attachment-import",
        "environment",
        "invalid-environment",
        "keep-alive",
        "unknown-type-wire-002",
    ],
)
def test_each_record_has_its_owner(record: dict[str, Any], route: Route) -> None:
    decoded = decode_line(Line(number=1, data=json.dumps(record).encode()))
    assert route_of(decoded) is route


def _members(union: Any) -> set[type]:
    if isinstance(union, typing.ForwardRef):  # a name the decoder loads on first use
        return _members(getattr(inbound_import, union.__forward_arg__))
    if isinstance(union, types.UnionType) or typing.get_origin(union) is typing.Union:
        return set().union(*(_members(arm) for arm in typing.get_args(union)))
    return {union}


def test_every_inbound_record_type_has_a_route() -> None:
    uploads = _members(inbound_import.AttachmentImport)
    assert len(uploads) == 4
    assert _members(InboundRecord) == set(ROUTES) | {UserRecord} | uploads
    assert not uploads & set(ROUTES)  # routed by route_of, without importing them


def test_a_type_that_is_no_record_has_no_route() -> None:
    with pytest.raises(KeyError):
        route_of(typing.cast(Any, Line(number=1, data=b"{}")))
