"""The inbound control records through decode_line: control_request and
control_response (WIRE-009, WIRE-PERM-040, DECISIONS section 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.messages.decode import InboundRecord, decode_line
from agentx.messages.framing import Line
from agentx.messages.frozen import FrozenDict, thaw
from agentx.messages.inbound_control import (
    ControlRequest,
    ControlResponse,
    InvalidControlRequest,
    InvalidControlResponse,
    UncorrelatableControl,
)


def decode(record: dict[str, Any] | bytes) -> InboundRecord:
    data = record if isinstance(record, bytes) else json.dumps(record).encode()
    return decode_line(Line(number=4, data=data))


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
