"""The ``mcp_message`` channel under a hostile client (DEC-PROFILE-2,
DEC-SET-2, WIRE-009, DECISIONS section 8): this test plays the SDK itself
over the real process's pipes, so it can answer late, wrongly, hugely or
never. Whatever it does, the session goes on, bounded by ``MCP_TIMEOUT``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    AgentxProcess,
    Record,
    control,
    is_control_response,
    is_result,
    scripted_session,
    user,
)

pytestmark = pytest.mark.e2e

SDK = ("--control-profile", "sdk")
_ids = itertools.count(1)
Answer = Callable[[dict[str, Any]], dict[str, Any] | None]


def is_mcp_message(record: Record) -> bool:
    return record.get("type") == "control_request" and (
        record["request"].get("subtype") == "mcp_message"
    )


def ask(proc: AgentxProcess, subtype: str, **fields: Any) -> dict[str, Any]:
    rid = f"c{next(_ids)}"
    proc.send(control(rid, subtype, **fields))
    response: dict[str, Any] = proc.until(is_control_response(rid))[-1]["response"]
    return response


def reply(request: Record, mcp_response: dict[str, Any]) -> Record:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": {"mcp_response": mcp_response},
        },
    }


def handshake(tools: list[dict[str, Any]]) -> Answer:
    """A well-behaved server with ``tools`` (``add`` answers the sum)."""

    def answer(message: dict[str, Any]) -> dict[str, Any] | None:
        method, mid = message.get("method"), message.get("id")
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            args = message["params"]["arguments"]
            result = {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}
        else:
            return {"jsonrpc": "2.0", "result": {}}  # a notification's acknowledgement
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    return answer


ADD = {
    "name": "add",
    "description": "Add",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}


def serve(proc: AgentxProcess, answer: Answer, until: Callable[[Record], bool]) -> list[Record]:
    """Answer every ``mcp_message`` with ``answer`` until a record matches ``until``."""
    seen: list[Record] = []
    while True:
        record = proc.next()
        seen.append(record)
        if is_mcp_message(record):
            response = answer(dict(record["request"]["message"]))
            if response is not None:
                proc.send(reply(record, response))
        if until(record):
            return seen


def tool_results(records: list[Record]) -> list[dict[str, Any]]:
    return [
        block
        for r in records
        if r.get("type") == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def initialize(proc: AgentxProcess, **fields: Any) -> str:
    rid = f"i{next(_ids)}"
    proc.send(control(rid, "initialize", **fields))
    return rid


def test_a_server_that_answers_the_handshake_serves_its_tool(
    home: Path, processes: list[AgentxProcess]
) -> None:
    turns = [
        {"steps": [{"tool_use": {"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}}]},
        {"steps": [{"text": "done"}]},
    ]
    proc = scripted_session(home, turns, processes, *SDK, "--allowedTools", "mcp__calc__add")
    rid = initialize(proc, sdkMcpServers=["calc"])
    proc.send(user("go"))
    records = serve(proc, handshake([ADD]), is_result)
    assert any(is_control_response(rid)(r) for r in records)
    assert [r["content"] for r in tool_results(records)] == ["5"]
    assert records[-1]["result"] == "done"
    status = {e["name"]: e for e in ask(proc, "mcp_status")["response"]["mcpServers"]}
    assert status["calc"]["status"] == "connected" and status["calc"]["scope"] == "dynamic"


def test_a_server_that_never_answers_fails_at_the_deadline_and_the_turn_runs(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = AgentxProcess(
        ("--input-format", "stream-json", "--output-format", "stream-json", *SDK),
        home=home,
        env={"MCP_TIMEOUT": "1500"},
    )
    processes.append(proc)
    initialize(proc, sdkMcpServers=["mute"])
    proc.send(user("still here?"))
    records = serve(proc, lambda message: None, is_result)
    assert records[-1]["subtype"] == "success"
    # The unanswered handshake request was given up with a cancel.
    asked = [r["request_id"] for r in records if is_mcp_message(r)]
    cancelled = [r["request_id"] for r in records if r.get("type") == "control_cancel_request"]
    assert asked and set(asked) <= set(cancelled)
    status = {e["name"]: e for e in ask(proc, "mcp_status")["response"]["mcpServers"]}
    assert status["mute"]["status"] == "failed" and "timed out" in status["mute"]["error"]
    proc.close_stdin()
    assert proc.wait() == 0


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        pytest.param(
            lambda m: {"jsonrpc": "2.0", "id": "other", "result": {}},
            "answered another request",
            id="wrong-id",
        ),
        pytest.param(
            lambda m: {"jsonrpc": "2.0", "id": m.get("id"), "result": "x"},
            "malformed response",
            id="malformed",
        ),
        pytest.param(
            lambda m: {"jsonrpc": "2.0", "id": m.get("id"), "error": {"code": -1, "message": "no"}},
            "no",
            id="error",
        ),
    ],
)
def test_a_wrong_answer_fails_the_server_not_the_session(
    home: Path, processes: list[AgentxProcess], answer: Answer, error: str
) -> None:
    proc = scripted_session(home, [{"steps": [{"text": "fine"}]}], processes, *SDK)
    initialize(proc, sdkMcpServers=["odd"])
    proc.send(user("go"))
    records = serve(proc, answer, is_result)
    assert records[-1]["result"] == "fine"
    status = {e["name"]: e for e in ask(proc, "mcp_status")["response"]["mcpServers"]}
    assert status["odd"]["status"] == "failed" and error in status["odd"]["error"]


def test_a_huge_tools_list_offers_a_bounded_number_of_tools(
    home: Path, processes: list[AgentxProcess]
) -> None:
    tools = [dict(ADD, name=f"t{i}", description="d" * 500) for i in range(5000)]
    proc = scripted_session(home, [{"steps": [{"text": "fine"}]}], processes, *SDK)
    initialize(proc, sdkMcpServers=["big"])
    proc.send(user("go"))
    records = serve(proc, handshake(tools), is_result)
    assert records[-1]["result"] == "fine"
    status = {e["name"]: e for e in ask(proc, "mcp_status")["response"]["mcpServers"]}
    assert status["big"]["status"] == "connected" and len(status["big"]["tools"]) == 128


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        pytest.param({"sdkMcpServers": ["a b"]}, "sdkMcpServers", id="odd-name"),
        pytest.param({"sdkMcpServers": ["a", "a"]}, "sdkMcpServers", id="twice"),
        pytest.param({"sdkMcpServers": "calc"}, "sdkMcpServers", id="not-a-list"),
        pytest.param(
            {"mcpServers": {"s": {"command": "x", "env": {"TOKEN": "never-seen-secret"}}}},
            "mcpServers",
            id="new-credential",
        ),
        pytest.param({"mcpServers": {"s": {"type": "sdk"}}}, "mcpServers", id="sdk-in-servers"),
        pytest.param(
            {"sdkMcpServerConfigs": {"calc": {"timeout": 5000}}},
            "sdkMcpServerConfigs",
            id="configs",
        ),
    ],
)
def test_refused_mcp_fields_end_the_session(
    home: Path, processes: list[AgentxProcess], fields: dict[str, Any], named: str
) -> None:
    proc = scripted_session(home, [], processes, *SDK)
    rid = initialize(proc, **fields)
    response = proc.until(is_control_response(rid))[-1]["response"]
    assert response["subtype"] == "error" and named in response["error"]
    assert "never-seen-secret" not in proc.stderr
    assert proc.wait() == 2


def test_set_servers_adds_an_sdk_server_in_the_sdk_profile_only(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = scripted_session(home, [], processes, *SDK)
    rid = f"s{next(_ids)}"
    proc.send(control(rid, "mcp_set_servers", servers={"late": {"type": "sdk", "name": "late"}}))
    records = serve(proc, handshake([ADD]), is_control_response(rid))
    payload = records[-1]["response"]["response"]
    assert payload["added"] == ["late"] and payload["errors"] == {}
    # The handshake goes over mcp_message after the response (scenario 8).
    serve(
        proc,
        handshake([ADD]),
        lambda r: is_mcp_message(r) and r["request"]["message"].get("method") == "tools/list",
    )
    status = {}
    for _ in range(200):  # each mcp_status is a round trip: no sleep
        status = {e["name"]: e for e in ask(proc, "mcp_status")["response"]["mcpServers"]}
        if status["late"]["status"] != "pending":
            break
    assert status["late"]["status"] == "connected"
    assert [t["name"] for t in status["late"]["tools"]] == ["add"]

    other = home.parent / "other"
    other.mkdir()
    extended = scripted_session(other, [], processes, "--control-profile", "extended")
    payload = ask(extended, "mcp_set_servers", servers={"late": {"type": "sdk"}})["response"]
    assert payload["added"] == [] and "sdk control profile" in payload["errors"]["late"]
