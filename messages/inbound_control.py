"""The inbound control records (WIRE-009, WIRE-PERM-040, DECISIONS section 1):
``control_request`` with its open ``request`` payload, ``control_response``
with its closed outer union, and the forms a broken one takes.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound import (
    SchemaViolation,
    require_closed,
    string_member,
)


class ControlRequest(Struct, frozen=True, kw_only=True):
    """An inbound ``control_request``; ``payload`` is ``request`` minus ``subtype``."""

    line: int
    request_id: str
    subtype: str
    payload: FrozenDict


class InvalidControlRequest(Struct, frozen=True, kw_only=True):
    """A ``control_request`` whose ``request_id`` is recoverable but whose
    request is not: answered with a correlated error, the stream goes on."""

    line: int
    request_id: str
    error: str


class ControlResponse(Struct, frozen=True, kw_only=True):
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


class InvalidControlResponse(Struct, frozen=True, kw_only=True):
    """A ``control_response`` for ``request_id`` that breaks the closed outer
    union: the waiter resolves as an error (fail closed, WIRE-PERM-044)."""

    line: int
    request_id: str
    reason: str


class UncorrelatableControl(Struct, frozen=True, kw_only=True):
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
        require_closed(response, SUCCESS_REQUIRED, SUCCESS_MEMBERS, "control_response")
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
    require_closed(response, ERROR_REQUIRED, ERROR_MEMBERS, "control_response")
    error = string_member(response, "error", "control_response")
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
