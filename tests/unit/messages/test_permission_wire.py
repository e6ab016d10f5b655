"""The can_use_tool wire catalog (WIRE-PERM-003, 021..023, 040..044)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.permission_rules import Rule
from agentx.messages.permission_updates import AddRules, SetMode
from agentx.messages.permission_wire import (
    DEFAULT_DENY_MESSAGE,
    INVALID_RESPONSE_DENIAL,
    InvalidPermissionWire,
    PermissionAllow,
    PermissionDeny,
    PermissionResponseSchema,
    can_use_tool_request,
    network_access_request,
    parse_permission_response,
    permission_update_to_wire,
    safe_description,
    validate_can_use_tool_request,
)

TOOL_USE = "toolu_1"
ADD_RULES = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "git status:*"}, {"toolName": "Read"}],
    "behavior": "allow",
    "destination": "session",
}
SET_MODE = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
PARSED_ADD_RULES = AddRules(
    behavior="allow",
    rules=(Rule(tool_name="Bash", content="git status:*"), Rule(tool_name="Read")),
)

# --- WIRE-PERM-040..044: every row of the decision table -------------------------------

DECISIONS: list[tuple[str, Any, Any]] = [
    ("allow-minimal", {"behavior": "allow"}, PermissionAllow()),
    (
        "allow-updated-input",
        {"behavior": "allow", "updatedInput": {"command": "ls -a"}},
        PermissionAllow(updated_input=FrozenDict(command="ls -a")),
    ),
    ("allow-null-input", {"behavior": "allow", "updatedInput": None}, PermissionAllow()),
    (
        "allow-updated-permissions",
        {"behavior": "allow", "updatedPermissions": [ADD_RULES, SET_MODE]},
        PermissionAllow(updated_permissions=(PARSED_ADD_RULES, SetMode(mode="acceptEdits"))),
    ),
    (
        "allow-null-permissions",
        {"behavior": "allow", "updatedPermissions": None},
        PermissionAllow(),
    ),
    ("allow-matching-id", {"behavior": "allow", "toolUseID": TOOL_USE}, PermissionAllow()),
    ("deny-minimal", {"behavior": "deny"}, PermissionDeny(message=DEFAULT_DENY_MESSAGE)),
    ("deny-null-message", {"behavior": "deny", "message": None}, PermissionDeny()),
    (
        "deny-message-interrupt",
        {"behavior": "deny", "message": "nope", "interrupt": True, "toolUseID": TOOL_USE},
        PermissionDeny(message="nope", interrupt=True),
    ),
    ("not-an-object", ["allow"], INVALID_RESPONSE_DENIAL),
    ("null-payload", None, INVALID_RESPONSE_DENIAL),
    ("no-behavior", {}, INVALID_RESPONSE_DENIAL),
    ("behavior-ask", {"behavior": "ask"}, INVALID_RESPONSE_DENIAL),
    ("behavior-unknown", {"behavior": "maybe"}, INVALID_RESPONSE_DENIAL),
    ("allow-extra-member", {"behavior": "allow", "message": "x"}, INVALID_RESPONSE_DENIAL),
    ("deny-extra-member", {"behavior": "deny", "updatedInput": {}}, INVALID_RESPONSE_DENIAL),
    ("allow-input-not-object", {"behavior": "allow", "updatedInput": []}, INVALID_RESPONSE_DENIAL),
    (
        "allow-permissions-not-array",
        {"behavior": "allow", "updatedPermissions": SET_MODE},
        INVALID_RESPONSE_DENIAL,
    ),
    (
        "allow-permission-bad-destination",
        {"behavior": "allow", "updatedPermissions": [{**SET_MODE, "destination": "userSettings"}]},
        INVALID_RESPONSE_DENIAL,
    ),
    (
        "allow-permission-extra-member",
        {"behavior": "allow", "updatedPermissions": [{**SET_MODE, "x": 1}]},
        INVALID_RESPONSE_DENIAL,
    ),
    (
        "mismatched-tool-use-id",
        {"behavior": "deny", "toolUseID": "toolu_2"},
        INVALID_RESPONSE_DENIAL,
    ),
    ("null-tool-use-id", {"behavior": "allow", "toolUseID": None}, INVALID_RESPONSE_DENIAL),
    ("message-not-string", {"behavior": "deny", "message": 3}, INVALID_RESPONSE_DENIAL),
    ("interrupt-not-bool", {"behavior": "deny", "interrupt": 1}, INVALID_RESPONSE_DENIAL),
    ("interrupt-null", {"behavior": "deny", "interrupt": None}, INVALID_RESPONSE_DENIAL),
]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [row[1:] for row in DECISIONS],
    ids=[row[0] for row in DECISIONS],
)
def test_decision_table(payload: Any, expected: Any) -> None:
    assert parse_permission_response(freeze(payload), TOOL_USE) == expected
    assert PermissionResponseSchema(tool_use_id=TOOL_USE)(freeze(payload)) == expected


def test_updated_input_is_frozen() -> None:
    result = parse_permission_response({"behavior": "allow", "updatedInput": {"a": [1]}}, TOOL_USE)
    assert isinstance(result, PermissionAllow)
    assert result.updated_input == FrozenDict(a=(1,))
    with pytest.raises(TypeError):
        result.updated_input["a"] = 2


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=10,
)


@given(
    st.dictionaries(
        st.sampled_from(["behavior", "message", "interrupt", "toolUseID", "updatedInput", "x"]),
        JSON | st.sampled_from(["allow", "deny", TOOL_USE]),
    )
)
def test_decisions_never_fail_open(payload: dict[str, Any]) -> None:
    """WIRE-PERM-002: whatever arrives, only a well-formed allow allows."""
    result = parse_permission_response(freeze(payload), TOOL_USE)
    if isinstance(result, PermissionAllow):
        assert payload["behavior"] == "allow"
        assert set(payload) <= {"behavior", "updatedInput", "toolUseID"}
    else:
        assert isinstance(result, PermissionDeny)


# --- the request (WIRE-PERM-021..023, WIRE-PERM-003) ------------------------------------


def test_request_minimal_is_closed_and_frozen() -> None:
    request = can_use_tool_request("Bash", {"command": "ls"}, TOOL_USE, "Run ls")
    assert request == {
        "subtype": "can_use_tool",
        "tool_name": "Bash",
        "input": {"command": "ls"},
        "tool_use_id": TOOL_USE,
        "description": "Run ls",
    }
    validate_can_use_tool_request(request)
    with pytest.raises(TypeError):
        request["input"]["command"] = "rm"


def test_request_with_suggestions_and_blocked_path() -> None:
    request = can_use_tool_request(
        "Read",
        {"file_path": "/etc/hosts"},
        TOOL_USE,
        "",
        suggestions=(PARSED_ADD_RULES, SetMode(mode="acceptEdits")),
        blocked_path="/etc/hosts",
    )
    assert request["description"] == "Read"
    assert request["permission_suggestions"] == freeze([ADD_RULES, SET_MODE])
    assert request["blocked_path"] == "/etc/hosts"
    validate_can_use_tool_request(request)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("", {}, TOOL_USE, "d"), {}),
        (("Bash", [], TOOL_USE, "d"), {}),
        (("Bash", {}, "", "d"), {}),
        (("Bash", {}, TOOL_USE, "d"), {"blocked_path": ""}),
    ],
    ids=["empty-tool-name", "input-not-object", "empty-tool-use-id", "empty-blocked-path"],
)
def test_request_builder_refuses_invalid_members(args: Any, kwargs: Any) -> None:
    with pytest.raises(InvalidPermissionWire):
        can_use_tool_request(*args, **kwargs)


VALID_REQUEST = dict(can_use_tool_request("Bash", {}, TOOL_USE, "d"))


@pytest.mark.parametrize(
    "request_object",
    [
        {**VALID_REQUEST, "extra": 1},
        {k: v for k, v in VALID_REQUEST.items() if k != "description"},
        {**VALID_REQUEST, "subtype": "initialize"},
        {**VALID_REQUEST, "input": "ls"},
        {**VALID_REQUEST, "permission_suggestions": []},
        {**VALID_REQUEST, "permission_suggestions": [{**SET_MODE, "destination": "project"}]},
        {**VALID_REQUEST, "blocked_path": 7},
        "can_use_tool",
    ],
    ids=[
        "extra-member",
        "missing-description",
        "wrong-subtype",
        "input-not-object",
        "empty-suggestions",
        "bad-suggestion",
        "blocked-path-not-string",
        "not-an-object",
    ],
)
def test_request_validator_is_closed(request_object: Any) -> None:
    with pytest.raises(InvalidPermissionWire):
        validate_can_use_tool_request(request_object)


def test_update_round_trips_through_the_wire() -> None:
    for update in (PARSED_ADD_RULES, SetMode(mode="plan")):
        wire = permission_update_to_wire(update)
        assert wire["destination"] == "session"
        result = parse_permission_response(
            {"behavior": "allow", "updatedPermissions": [wire]}, TOOL_USE
        )
        assert result == PermissionAllow(updated_permissions=(update,))


def test_network_request_is_a_can_use_tool_request() -> None:
    request = network_access_request("example.com", 443, "1234")
    assert request == {
        "subtype": "can_use_tool",
        "tool_name": "SandboxNetworkAccess",
        "input": {"host": "example.com", "port": 443},
        "tool_use_id": "net_1234",
        "description": "Network access to example.com:443",
    }
    validate_can_use_tool_request(request)


@pytest.mark.parametrize(
    ("host", "port", "ok"),
    [
        ("h", 1, True),
        ("h", 65_535, True),
        ("h", 0, False),
        ("h", 65_536, False),
        ("h", True, False),
        ("", 80, False),
    ],
    ids=["port-1", "port-max", "port-0", "port-past-max", "port-bool", "empty-host"],
)
def test_network_request_limits(host: str, port: Any, ok: bool) -> None:
    if ok:
        assert network_access_request(host, port, "u")["input"]["port"] == port
    else:
        with pytest.raises(InvalidPermissionWire):
            network_access_request(host, port, "u")


def _boom() -> str:
    raise RuntimeError("secret tool input")


@pytest.mark.parametrize(
    ("summarize", "expected"),
    [(lambda: "Run ls", "Run ls"), (_boom, "Bash"), (lambda: "", "Bash"), (lambda: 3, "Bash")],
    ids=["summary", "summary-raises", "empty-summary", "non-string-summary"],
)
def test_safe_description_falls_back_to_the_tool_name(summarize: Any, expected: str) -> None:
    assert safe_description("Bash", summarize) == expected
