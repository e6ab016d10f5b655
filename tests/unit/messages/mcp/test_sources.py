"""Where MCP servers come from and which win; .mcp.json approval (DEC-SET-1,
DEC-SET-2, DEC-CLI-7)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import MAX_SERVERS, McpConfigError, SdkServer, StdioServer
from agentx.messages.mcp.sources import (
    Approvals,
    approval,
    approvals_from,
    check_approval_keys,
    decode_config,
    start_servers,
)


def stdio(command: str) -> StdioServer:
    return StdioServer(command=command)


@pytest.mark.parametrize(
    ("approvals", "name", "expected"),
    [
        (Approvals(), "a", "pending"),
        (Approvals(enable_all=True), "a", "approved"),
        (Approvals(enabled=frozenset({"a"})), "a", "approved"),
        (Approvals(enabled=frozenset({"b"})), "a", "pending"),
        (Approvals(enable_all=True, disabled=frozenset({"a"})), "a", "rejected"),
        (Approvals(enabled=frozenset({"a"}), disabled=frozenset({"a"})), "a", "rejected"),
    ],
)
def test_approval(approvals: Approvals, name: str, expected: str) -> None:
    assert approval(name, approvals) == expected


def test_project_sources_cannot_approve() -> None:
    approvals = approvals_from(
        [
            ("project", {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["p"]}),
            ("user", {"enabledMcpjsonServers": ["u"]}),
            ("local", {"disabledMcpjsonServers": ["d"]}),
            ("policy", {"enableAllProjectMcpServers": False}),
        ]
    )
    assert approvals == Approvals(
        enable_all=False, enabled=frozenset({"u"}), disabled=frozenset({"d"})
    )


def test_the_last_approving_source_sets_enable_all() -> None:
    approvals = approvals_from(
        [
            ("user", {"enableAllProjectMcpServers": False}),
            ("flag", {"enableAllProjectMcpServers": True}),
        ]
    )
    assert approvals.enable_all is True


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({}, None),
        ({"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["a"]}, None),
        ({"enableAllProjectMcpServers": "yes"}, "enableAllProjectMcpServers must be true or false"),
        ({"enabledMcpjsonServers": "a"}, "enabledMcpjsonServers must be an array of server names"),
        (
            {"disabledMcpjsonServers": [1]},
            "disabledMcpjsonServers must be an array of server names",
        ),
    ],
)
def test_approval_key_types(settings: dict[str, Any], problem: str | None) -> None:
    assert check_approval_keys(settings) == problem


def test_precedence_mcp_json_then_settings_then_flags() -> None:
    chosen = start_servers(
        settings_servers=FrozenDict(shared=stdio("settings"), s=stdio("s")),
        settings_scopes=FrozenDict(shared="local", s="user"),
        project_file=FrozenDict(shared=stdio("mcp.json"), p=stdio("p"), q=stdio("q")),
        approvals=Approvals(enable_all=True, disabled=frozenset({"q"})),
        flag_configs=(FrozenDict(f=stdio("f1"), s=stdio("flag")), FrozenDict(f=stdio("f2"))),
        strict=False,
    )
    assert dict(chosen.servers) == {
        "p": stdio("p"),
        "shared": stdio("settings"),
        "s": stdio("flag"),
        "f": stdio("f2"),
    }
    assert dict(chosen.scopes) == {
        "p": "project",
        "shared": "local",
        "s": "dynamic",
        "f": "dynamic",
    }
    assert chosen.rejected == ("q",) and chosen.pending == ()


def test_strict_keeps_only_the_flags() -> None:
    chosen = start_servers(
        settings_servers=FrozenDict(s=stdio("s")),
        settings_scopes=FrozenDict(s="user"),
        project_file=FrozenDict(p=stdio("p")),
        approvals=Approvals(),
        flag_configs=(FrozenDict(f=stdio("f")),),
        strict=True,
    )
    assert dict(chosen.servers) == {"f": stdio("f")} and chosen.pending == ()


@pytest.mark.parametrize("count", [MAX_SERVERS, MAX_SERVERS + 1])
def test_the_servers_together_are_bounded(count: int) -> None:
    half = count // 2
    kwargs: dict[str, Any] = {
        "settings_servers": FrozenDict({f"s{i}": stdio("s") for i in range(half)}),
        "settings_scopes": FrozenDict(),
        "project_file": None,
        "approvals": Approvals(),
        "flag_configs": (FrozenDict({f"f{i}": stdio("f") for i in range(count - half)}),),
        "strict": False,
    }
    if count > MAX_SERVERS:
        with pytest.raises(McpConfigError, match="at most 32"):
            start_servers(**kwargs)
    else:
        assert len(start_servers(**kwargs).servers) == count


@pytest.mark.parametrize(
    ("text", "sdk", "expected"),
    [
        ('{"mcpServers": {"a": {"command": "x"}}}', False, {"a": StdioServer(command="x")}),
        ('{"mcpServers": {}}', False, {}),
        ("{}", False, {}),
        ('{"mcpServers": {"c": {"type": "sdk", "name": "calc"}}}', True, {"c": SdkServer()}),
        ('{"mcpServers": {"c": {"type": "sdk"}}}', True, {"c": SdkServer()}),
    ],
)
def test_decode_config(text: str, sdk: bool, expected: dict[str, Any]) -> None:
    assert dict(decode_config(text, "--mcp-config", sdk=sdk)) == expected


@pytest.mark.parametrize(
    ("text", "sdk", "message"),
    [
        ("[]", False, 'must be an object {"mcpServers": {...}}'),
        ("{bad", False, "not valid JSON"),
        ('{"mcpServers": {}, "extra": 1}', False, "'extra' is not a member"),
        ('{"mcpServers": {}, "mcpServers": {}}', False, "not valid JSON"),
        ('{"mcpServers": {"c": {"type": "sdk"}}}', False, "only served in the sdk control profile"),
        ('{"mcpServers": {"c": {"type": "sdk", "name": 3}}}', True, "name must be a non-empty"),
        ('{"mcpServers": {"c": {"type": "sdk", "instance": {}}}}', True, "'instance' is not"),
        (json.dumps({"mcpServers": {"a b": {"command": "x"}}}), False, "letters, digits"),
    ],
)
def test_decode_config_refusals(text: str, sdk: bool, message: str) -> None:
    with pytest.raises(McpConfigError) as info:
        decode_config(text, "--mcp-config", sdk=sdk)
    assert str(info.value).startswith("--mcp-config")
    assert message in str(info.value)


def test_only_approved_mcp_json_servers_are_decoded() -> None:
    text = json.dumps(
        {"mcpServers": {"ok": {"command": "x"}, "odd": {"type": "sse", "url": "http://h"}}}
    )
    decoded = decode_config(
        text, ".mcp.json", sdk=False, approvals=Approvals(enabled=frozenset({"ok"}))
    )
    assert dict(decoded) == {"ok": StdioServer(command="x"), "odd": None}
    with pytest.raises(McpConfigError, match="odd"):
        decode_config(text, ".mcp.json", sdk=False, approvals=Approvals(enable_all=True))
    many = json.dumps({"mcpServers": {f"s{i}": {"command": "x"} for i in range(MAX_SERVERS + 1)}})
    with pytest.raises(McpConfigError, match="at most 32"):
        decode_config(many, ".mcp.json", sdk=False, approvals=Approvals())
