"""``mcp_message`` answers and the permission prompt tool's decision
(DEC-PROFILE-2, WIRE-009, WIRE-PERM-002): every wrong answer fails closed."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.mcp.config import MAX_SERVERS, SdkServer
from agentx.messages.mcp.sdk import (
    INTERNAL_ERROR,
    MAX_DECISION_CHARS,
    MAX_DENY_MESSAGE_CHARS,
    McpResponseError,
    PromptAllow,
    PromptDeny,
    initial_servers_problem,
    jsonrpc_reply,
    manifests_problem,
    mcp_message_request,
    mcp_response_schema,
    prompt_tool_decision,
    prompt_tool_input,
    sdk_servers,
    sdk_servers_problem,
)
from agentx.messages.mcp.status import (
    DEFAULT_CONNECT_SECONDS,
    MAX_TIMEOUT_SECONDS,
    MIN_TIMEOUT_SECONDS,
    timeout_seconds,
)


def test_the_request_names_the_server_and_carries_the_message() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert mcp_message_request("calc", message) == {
        "subtype": "mcp_message",
        "server_name": "calc",
        "message": message,
    }


@pytest.mark.parametrize(
    "payload", [None, FrozenDict(), FrozenDict(mcp_response=[]), FrozenDict(other={})]
)
def test_a_payload_without_an_mcp_response_is_invalid(payload: FrozenDict | None) -> None:
    with pytest.raises(McpResponseError):
        mcp_response_schema(payload)


def test_the_mcp_response_is_taken() -> None:
    response = FrozenDict(jsonrpc="2.0", id=1, result=FrozenDict())
    assert mcp_response_schema(FrozenDict(mcp_response=response)) == response


def _internal(reply: FrozenDict) -> bool:
    return "result" not in reply and reply["error"]["code"] == INTERNAL_ERROR


@pytest.mark.parametrize(
    ("response", "kept"),
    [
        ({"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}, True),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "no"}}, True),
        ({"jsonrpc": "2.0", "id": 8, "result": {}}, False),  # another request's answer
        ({"jsonrpc": "2.0", "result": {}}, False),  # no id (the Python SDK's ack)
        ({"jsonrpc": "1.0", "id": 7, "result": {}}, False),
        ({"jsonrpc": "2.0", "id": 7, "result": []}, False),
        ({"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": "x"}}, False),
        ({"jsonrpc": "2.0", "id": 7, "error": {"code": "x", "message": "no"}}, False),
        ({"jsonrpc": "2.0", "id": 7}, False),
    ],
)
def test_jsonrpc_reply_is_one_response_for_that_id(response: dict[str, Any], kept: bool) -> None:
    reply = jsonrpc_reply(7, freeze(response), "calc")
    assert reply["id"] == 7 and reply["jsonrpc"] == "2.0"
    if kept:
        assert reply == freeze(response)
    else:
        assert _internal(reply) and "calc" in reply["error"]["message"]


ORIGINAL = FrozenDict(command="ls")


def test_prompt_tool_input_has_claude_codes_members() -> None:
    assert prompt_tool_input("Bash", ORIGINAL, "toolu_1") == {
        "tool_name": "Bash",
        "input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }


@pytest.mark.parametrize(
    ("text", "is_error", "expected"),
    [
        (
            '{"behavior": "allow", "updatedInput": {"command": "pwd"}}',
            False,
            PromptAllow(updated_input=FrozenDict(command="pwd")),
        ),
        ('{"behavior": "allow"}', False, PromptAllow(updated_input=ORIGINAL)),
        ('{"behavior": "deny", "message": "no"}', False, PromptDeny(message="no")),
        ('{"behavior": "deny"}', False, PromptDeny(message="denied")),
        ('{"behavior": "allow"}', True, PromptDeny(message="the permission prompt tool failed")),
        (
            "allow",
            False,
            PromptDeny(message="the permission prompt tool did not answer with a JSON object"),
        ),
        (
            "[]",
            False,
            PromptDeny(message="the permission prompt tool did not answer with a JSON object"),
        ),
        (
            '{"behavior": "ask"}',
            False,
            PromptDeny(message='the permission prompt tool: behavior must be "allow" or "deny"'),
        ),
        (
            '{"behavior": "allow", "updatedInput": "rm -rf /"}',
            False,
            PromptDeny(message="the permission prompt tool: updatedInput must be an object"),
        ),
        (
            '{"behavior": "deny", "message": 3}',
            False,
            PromptDeny(message="the permission prompt tool: message must be a string"),
        ),
        (
            '{"behavior": "allow", "behavior": "deny"}',
            False,
            PromptDeny(message="the permission prompt tool did not answer with a JSON object"),
        ),
    ],
)
def test_prompt_tool_decision(text: str, is_error: bool, expected: object) -> None:
    assert prompt_tool_decision(text, is_error, ORIGINAL) == expected


def test_prompt_tool_answer_bound() -> None:
    at = '{"behavior": "deny", "message": "' + "x" * (MAX_DECISION_CHARS - 35) + '"}'
    assert len(at) == MAX_DECISION_CHARS
    decision = prompt_tool_decision(at, False, ORIGINAL)
    assert isinstance(decision, PromptDeny) and len(decision.message) == MAX_DENY_MESSAGE_CHARS
    past = prompt_tool_decision(at + " ", False, ORIGINAL)
    assert isinstance(past, PromptDeny) and "more than" in past.message


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DEFAULT_CONNECT_SECONDS),
        ("", DEFAULT_CONNECT_SECONDS),
        ("soon", DEFAULT_CONNECT_SECONDS),
        ("1500", 1.5),
        ("999", MIN_TIMEOUT_SECONDS),
        ("1000", MIN_TIMEOUT_SECONDS),
        ("600000", MAX_TIMEOUT_SECONDS),
        ("600001", MAX_TIMEOUT_SECONDS),
    ],
)
def test_timeout_variables(value: str | None, expected: float) -> None:
    assert timeout_seconds(value, DEFAULT_CONNECT_SECONDS) == expected


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (("calc",), None),
        (tuple(f"s{i}" for i in range(MAX_SERVERS)), None),
        (tuple(f"s{i}" for i in range(MAX_SERVERS + 1)), "at most 32 distinct"),
        (("a", "a"), "at most 32 distinct"),
        ("calc", "must be an array of server names"),
        ((1,), "must be an array of server names"),
        (("a b",), "letters, digits"),
        (("a__b",), "must not contain '__'"),
    ],
)
def test_sdk_servers_problem(value: object, problem: str | None) -> None:
    found = sdk_servers_problem(value)
    assert found is None if problem is None else problem in (found or "")


def test_sdk_servers_map() -> None:
    assert sdk_servers(("a", "b")) == {"a": SdkServer(), "b": SdkServer()}


KNOWN = frozenset({"known-secret"})


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"s": {"command": "x"}}, None),
        ({"s": {"command": "x", "env": {"K": "known-secret"}}}, None),
        ({"s": {"command": "x", "env": {"K": "new-secret"}}}, "credential union"),
        ({"s": {"type": "http", "url": "http://h", "headers": {"A": "new"}}}, "credential union"),
        ({"s": {"type": "sdk"}}, "sdk control profile"),
        ([], "must be an object"),
    ],
)
def test_initial_servers_problem(value: object, problem: str | None) -> None:
    found = initial_servers_problem(freeze(value), KNOWN)
    assert found is None if problem is None else problem in (found or "")


@pytest.mark.parametrize(
    ("value", "ok"),
    [({"calc": {"initializeResult": {}}}, True), ({}, True), ({"calc": 1}, False), ([], False)],
)
def test_manifests_problem(value: object, ok: bool) -> None:
    assert (manifests_problem(freeze(value)) is None) is ok
