"""The MCP server table: statuses, stale events, the control operations and
the mcp_set_servers plan (DEC-PROFILE-1, scenario 8)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import StdioServer
from agentx.messages.mcp.status import (
    DYNAMIC_CREDENTIALS_ERROR,
    MAX_DESCRIPTION_CHARS,
    MAX_ERROR_CHARS,
    MAX_SCHEMA_BYTES,
    MAX_TOOLS_PER_SERVER,
    Connect,
    Disconnect,
    McpServers,
    accept_tools,
    initial_entries,
)

SCHEMA = {"type": "object", "properties": {}}
A = StdioServer(command="a")
B = StdioServer(command="b")


def keep(text: str) -> str:
    return text


def test_descriptions_are_redacted_before_they_are_cut() -> None:
    (tool,) = accept_tools(
        "s",
        [{"name": "t", "description": "uses key-123", "inputSchema": SCHEMA}],
        lambda text: text.replace("key-123", "[redacted]"),
    )
    assert tool.description == "uses [redacted]"


def table(**configured: StdioServer) -> McpServers:
    return McpServers(configured, frozenset({"known-secret"}), FrozenDict(a="user"))


def statuses(servers: McpServers) -> dict[str, str]:
    return {e["name"]: e["status"] for e in servers.status_payload()["mcpServers"]}


def test_start_connects_every_server_and_init_says_pending() -> None:
    servers = table(a=A, b=B)
    assert servers.start() == (
        Connect(name="a", generation=1, config=A),
        Connect(name="b", generation=2, config=B),
    )
    assert initial_entries({"a": A, "b": B}) == (
        {"name": "a", "status": "pending"},
        {"name": "b", "status": "pending"},
    )
    assert statuses(servers) == {"a": "pending", "b": "pending"}


def test_connected_then_failed_payloads() -> None:
    servers = table(a=A)
    tools = accept_tools("a", [{"name": "add", "description": "Add.", "inputSchema": SCHEMA}], keep)
    assert servers.connected("a", 1, server_info=FrozenDict(name="s", version="1"), tools=tools)
    assert servers.status_payload() == {
        "mcpServers": (
            {
                "name": "a",
                "status": "connected",
                "scope": "user",
                "serverInfo": {"name": "s", "version": "1"},
                "tools": ({"name": "add", "description": "Add."},),
            },
        )
    }
    assert [t.full_name for t in servers.tools()] == ["mcp__a__add"]
    assert servers.failed("a", 1, "x" * (MAX_ERROR_CHARS + 1))
    (entry,) = servers.status_payload()["mcpServers"]
    assert entry == {
        "name": "a",
        "status": "failed",
        "scope": "user",
        "error": "x" * MAX_ERROR_CHARS,
    }
    assert servers.tools() == ()


@pytest.mark.parametrize(
    ("event", "applied"),
    [
        pytest.param(("connected", "a", 1), True, id="current"),
        pytest.param(("connected", "a", 0), False, id="stale-generation"),
        pytest.param(("connected", "zz", 1), False, id="unknown-server"),
        pytest.param(("failed", "a", 0), False, id="stale-failure"),
        pytest.param(("failed", "a", 1), True, id="current-failure"),
    ],
)
def test_events_from_other_attempts_are_ignored(event: tuple[str, str, int], applied: bool) -> None:
    servers = table(a=A)
    kind, name, generation = event
    if kind == "connected":
        assert servers.connected(name, generation, server_info=None, tools=()) is applied
    else:
        assert servers.failed(name, generation, "boom") is applied
    assert (statuses(servers)["a"] != "pending") is applied


def test_a_late_event_after_reconnect_cannot_overwrite_the_new_attempt() -> None:
    servers = table(a=A)
    assert servers.reconnect("a") == (
        Disconnect(name="a"),
        Connect(name="a", generation=2, config=A),
    )
    assert not servers.failed("a", 1, "old attempt died")
    assert statuses(servers) == {"a": "pending"}


def test_toggle_and_reconnect_rules() -> None:
    servers = table(a=A)
    servers.connected("a", 1, server_info=None, tools=())
    assert servers.toggle("a", False) == (Disconnect(name="a"),)
    assert statuses(servers) == {"a": "disabled"}
    assert servers.toggle("a", False) == ()
    assert not servers.failed("a", 1, "closing the transport")
    assert servers.reconnect("a") == "MCP server 'a' is disabled; enable it with mcp_toggle"
    assert servers.toggle("a", True) == (
        Disconnect(name="a"),
        Connect(name="a", generation=2, config=A),
    )
    assert servers.toggle("a", True) == ()
    assert servers.toggle("x", True) == "no MCP server named 'x'"
    assert servers.reconnect("x") == "no MCP server named 'x'"


def test_set_servers_plan_changes_nothing_until_applied() -> None:
    servers = table(a=A)
    plan = servers.plan_set_servers(
        {
            "dyn": {"command": "d", "env": {"K": "known-secret"}},
            "new-secret": {"command": "d", "env": {"K": "fresh"}},
            "a": {"command": "other"},
            "bad": {"type": "sse"},
        }
    )
    assert plan.response == {
        "added": ("dyn",),
        "removed": (),
        "errors": {
            "new-secret": DYNAMIC_CREDENTIALS_ERROR,
            "a": "MCP server a is configured in settings and cannot be replaced",
            "bad": 'MCP server bad: type must be "stdio", "http" or "sdk"',
        },
    }
    assert statuses(servers) == {"a": "pending"}
    dyn = StdioServer(command="d", env=FrozenDict(K="known-secret"))
    assert servers.apply(plan) == (Connect(name="dyn", generation=2, config=dyn),)
    assert servers.status_payload()["mcpServers"][1] == {
        "name": "dyn",
        "status": "pending",
        "scope": "dynamic",
    }


def test_set_servers_replaces_changes_and_removes_dynamic_servers() -> None:
    servers = table()
    servers.apply(servers.plan_set_servers({"x": {"command": "x"}, "y": {"command": "y"}}))
    same = servers.plan_set_servers({"x": {"command": "x"}, "y": {"command": "y"}})
    assert same.response == {"added": (), "removed": (), "errors": {}}
    changed = servers.plan_set_servers({"x": {"command": "x2"}, "y": {"type": "sse"}})
    assert changed.response["added"] == ("x",)
    assert changed.response["removed"] == ()  # y had an error: left as it was
    assert servers.apply(changed) == (
        Disconnect(name="x"),
        Connect(name="x", generation=3, config=StdioServer(command="x2")),
    )
    gone = servers.plan_set_servers({})
    assert gone.response == {"added": (), "removed": ("x", "y"), "errors": {}}
    assert servers.apply(gone) == (Disconnect(name="x"), Disconnect(name="y"))
    assert statuses(servers) == {}


@pytest.mark.parametrize(
    ("tool", "kept"),
    [
        pytest.param({"name": "ok", "inputSchema": SCHEMA}, True, id="ok"),
        pytest.param({"name": "bad name", "inputSchema": SCHEMA}, False, id="bad-name"),
        pytest.param({"name": "ok", "inputSchema": {"type": "string"}}, False, id="not-object"),
        pytest.param({"name": "ok"}, False, id="no-schema"),
        pytest.param({"inputSchema": SCHEMA}, False, id="no-name"),
    ],
)
def test_accept_tools_filters(tool: dict[str, Any], kept: bool) -> None:
    assert bool(accept_tools("s", [tool], keep)) is kept


def test_accept_tools_bounds_at_the_limit_and_one_past() -> None:
    many = [{"name": f"t{i}", "inputSchema": SCHEMA} for i in range(MAX_TOOLS_PER_SERVER + 1)]
    assert len(accept_tools("s", many, keep)) == MAX_TOOLS_PER_SERVER
    (tool,) = accept_tools(
        "s",
        [{"name": "t", "description": "d" * (MAX_DESCRIPTION_CHARS + 1), "inputSchema": SCHEMA}],
        keep,
    )
    assert len(tool.description) == MAX_DESCRIPTION_CHARS
    base = {"type": "object", "description": ""}
    padding = MAX_SCHEMA_BYTES - len(json.dumps(base).encode())
    at = {"type": "object", "description": "x" * padding}
    past = {"type": "object", "description": "x" * (padding + 1)}
    assert accept_tools("s", [{"name": "t", "inputSchema": at}], keep)
    assert not accept_tools("s", [{"name": "t", "inputSchema": past}], keep)


@given(
    st.lists(st.sampled_from(["x", "y", "z"]), max_size=6),
    st.lists(st.sampled_from(["x", "y", "z"]), max_size=6),
)
def test_plan_diff_property(first: list[str], second: list[str]) -> None:
    """After applying any two maps, the dynamic servers are exactly the second map."""
    servers = table()
    servers.apply(servers.plan_set_servers({n: {"command": n} for n in first}))
    plan = servers.plan_set_servers({n: {"command": n} for n in second})
    assert set(plan.removed) == set(first) - set(second)
    assert set(plan.added) == set(second) - set(first)
    servers.apply(plan)
    assert set(statuses(servers)) == set(second)


def test_a_repeated_tool_name_is_offered_once() -> None:
    tools = accept_tools(
        "s",
        [
            {"name": "t", "description": "first", "inputSchema": SCHEMA},
            {"name": "t", "description": "second", "inputSchema": SCHEMA},
        ],
        keep,
    )
    assert [(t.full_name, t.description) for t in tools] == [("mcp__s__t", "first")]
