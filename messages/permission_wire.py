"""The SDK permission wire catalog for ``can_use_tool`` (DECISIONS section 2).

Builders for the outbound request (WIRE-PERM-021, WIRE-PERM-023, WIRE-PERM-003)
and its PermissionUpdate suggestions (WIRE-PERM-022, validated by
:mod:`agentx.messages.permission_updates`), and the closed decision parser
(WIRE-PERM-041..044). Every parse failure fails closed: the decision
becomes a denial with the fixed message ``"invalid permission response"``
(WIRE-PERM-002, WIRE-PERM-044).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct

from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.permission_rules import RuleError
from agentx.messages.permission_updates import PermissionUpdate, SetMode, parse_update

CAN_USE_TOOL = "can_use_tool"
#: WIRE-PERM-043: the message of a denial that names none.
DEFAULT_DENY_MESSAGE = "Permission denied"
#: WIRE-PERM-044: the message of every fail-closed denial.
INVALID_RESPONSE_MESSAGE = "invalid permission response"
#: WIRE-PERM-023: the synthetic tool of a sandbox network request.
NETWORK_TOOL_NAME = "SandboxNetworkAccess"


_REQUEST_REQUIRED = frozenset({"subtype", "tool_name", "input", "tool_use_id", "description"})
_REQUEST_OPTIONAL = frozenset({"permission_suggestions", "blocked_path"})
_ALLOW_MEMBERS = frozenset({"behavior", "updatedInput", "updatedPermissions", "toolUseID"})
_DENY_MEMBERS = frozenset({"behavior", "message", "interrupt", "toolUseID"})
_MAX_PORT = 65_535


class InvalidPermissionWire(ValueError):
    """A permission request or update breaks its closed schema."""


# --- PermissionUpdate (WIRE-PERM-022) ------------------------------------------
# The closed shape and its validation live beside the rules they change
# (agentx.messages.permission_updates); this module only puts them on the wire.


def permission_update_to_wire(update: PermissionUpdate) -> FrozenDict:
    """The WIRE-PERM-022 object for one update (destination is always ``session``)."""
    if isinstance(update, SetMode):
        return FrozenDict(type="setMode", mode=update.mode, destination="session")
    rules = tuple(
        FrozenDict(toolName=rule.tool_name)
        if rule.content is None
        else FrozenDict(toolName=rule.tool_name, ruleContent=rule.content)
        for rule in update.rules
    )
    return FrozenDict(type="addRules", rules=rules, behavior=update.behavior, destination="session")


def _members(
    value: object, required: frozenset[str], optional: frozenset[str]
) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidPermissionWire("expected an object")
    if closed_breach(value, required | optional, required) is not None:
        raise InvalidPermissionWire("unexpected or missing member")
    return value


def _parse_update(value: object) -> PermissionUpdate:
    try:
        return parse_update(value)
    except RuleError:
        raise InvalidPermissionWire("invalid PermissionUpdate") from None


def _nonempty_str(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidPermissionWire("expected a non-empty string")
    return value


# --- the outbound request (WIRE-PERM-020..023, WIRE-PERM-003) ---------------------


def safe_description(tool_name: str, summarize: Callable[[], str]) -> str:
    """WIRE-PERM-003: a safe tool summary, or the tool name when summarizing fails.

    The summarizer's exception is dropped unformatted: its text may hold tool input.
    """
    try:
        summary = summarize()
    except Exception:
        return tool_name
    return summary if isinstance(summary, str) and summary else tool_name


def can_use_tool_request(
    tool_name: str,
    input: Mapping[str, Any],
    tool_use_id: str,
    description: str,
    *,
    suggestions: tuple[PermissionUpdate, ...] = (),
    blocked_path: str | None = None,
) -> FrozenDict:
    """The closed ``can_use_tool`` request object (WIRE-PERM-021).

    ``permission_suggestions`` is omitted when empty and ``blocked_path`` when
    None. The result is the ``request`` member of the envelope the control
    broker builds (WIRE-PERM-020).
    """
    if not isinstance(input, Mapping):
        raise InvalidPermissionWire("input must be an object")
    members: dict[str, Any] = {
        "subtype": CAN_USE_TOOL,
        "tool_name": _nonempty_str(tool_name),
        "input": input,
        "tool_use_id": _nonempty_str(tool_use_id),
        "description": description if description else tool_name,
    }
    if suggestions:
        members["permission_suggestions"] = tuple(
            permission_update_to_wire(update) for update in suggestions
        )
    if blocked_path is not None:
        members["blocked_path"] = _nonempty_str(blocked_path)
    request: FrozenDict = freeze(members)
    return request


def network_access_request(host: str, port: int, request_uuid: str) -> FrozenDict:
    """WIRE-PERM-023 / WIRE-PERM-004: the synthetic sandbox network permission request."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port <= _MAX_PORT:
        raise InvalidPermissionWire("port must be an integer in 1..65535")
    host = _nonempty_str(host)
    return can_use_tool_request(
        NETWORK_TOOL_NAME,
        {"host": host, "port": port},
        f"net_{_nonempty_str(request_uuid)}",
        f"Network access to {host}:{port}",
    )


def validate_can_use_tool_request(request: object) -> None:
    """Check a request object against the closed WIRE-PERM-021 schema."""
    members = _members(request, _REQUEST_REQUIRED, _REQUEST_OPTIONAL)
    if members["subtype"] != CAN_USE_TOOL:
        raise InvalidPermissionWire("subtype must be can_use_tool")
    _nonempty_str(members["tool_name"])
    _nonempty_str(members["tool_use_id"])
    if not isinstance(members["input"], Mapping) or not isinstance(members["description"], str):
        raise InvalidPermissionWire("invalid input or description")
    if "permission_suggestions" in members:
        suggestions = members["permission_suggestions"]
        if not isinstance(suggestions, tuple | list) or not suggestions:
            raise InvalidPermissionWire("permission_suggestions must be a non-empty array")
        for suggestion in suggestions:
            _parse_update(suggestion)
    if "blocked_path" in members:
        _nonempty_str(members["blocked_path"])


# --- the decision (WIRE-PERM-041..044) -----------------------------------------------


class PermissionAllow(Struct, frozen=True, kw_only=True):
    """An allow decision (WIRE-PERM-042). ``updated_input`` None keeps the original."""

    updated_input: FrozenDict | None = None
    updated_permissions: tuple[PermissionUpdate, ...] = ()


class PermissionDeny(Struct, frozen=True, kw_only=True):
    """A deny decision (WIRE-PERM-043); ``interrupt`` also interrupts the turn."""

    message: str = DEFAULT_DENY_MESSAGE
    interrupt: bool = False


PermissionResult = PermissionAllow | PermissionDeny

#: WIRE-PERM-044: what every invalid decision resolves as.
INVALID_RESPONSE_DENIAL = PermissionDeny(message=INVALID_RESPONSE_MESSAGE)


def _decode_decision(value: object, tool_use_id: str) -> PermissionResult:
    if not isinstance(value, Mapping):
        raise InvalidPermissionWire("decision must be an object")
    behavior = value.get("behavior")
    if behavior == "allow":
        _members(value, frozenset({"behavior"}), _ALLOW_MEMBERS)
    elif behavior == "deny":
        _members(value, frozenset({"behavior"}), _DENY_MEMBERS)
    else:
        raise InvalidPermissionWire("unknown behavior")
    if "toolUseID" in value and value["toolUseID"] != tool_use_id:
        raise InvalidPermissionWire("toolUseID does not match the request")
    if behavior == "allow":
        updated_input = value.get("updatedInput")
        if updated_input is not None and not isinstance(updated_input, Mapping):
            raise InvalidPermissionWire("updatedInput must be an object")
        updates = value.get("updatedPermissions")
        if updates is not None and not isinstance(updates, tuple | list):
            raise InvalidPermissionWire("updatedPermissions must be an array")
        return PermissionAllow(
            updated_input=None if updated_input is None else freeze(updated_input),
            updated_permissions=tuple(_parse_update(u) for u in updates or ()),
        )
    message = value.get("message")
    interrupt = value.get("interrupt", False)
    if (message is not None and not isinstance(message, str)) or not isinstance(interrupt, bool):
        raise InvalidPermissionWire("invalid deny member type")
    return PermissionDeny(
        message=DEFAULT_DENY_MESSAGE if message is None else message, interrupt=interrupt
    )


def parse_permission_response(value: object, tool_use_id: str) -> PermissionResult:
    """Decode a success payload D (WIRE-PERM-041..043); anything invalid denies (044)."""
    try:
        return _decode_decision(value, tool_use_id)
    except InvalidPermissionWire:
        return INVALID_RESPONSE_DENIAL


class PermissionResponseSchema(Struct, frozen=True, kw_only=True):
    """The schema stored on a ``can_use_tool`` waiter (WIRE-009, WIRE-PERM-040).

    It never raises: an invalid payload resolves as the fail-closed denial.
    """

    tool_use_id: str

    def __call__(self, payload: FrozenDict | None, /) -> PermissionResult:
        return parse_permission_response(payload, self.tool_use_id)
