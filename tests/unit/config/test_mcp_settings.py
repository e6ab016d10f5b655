"""mcpServers in the settings sources (DEC-SET-1, DEC-SET-2) and the extended
dispatcher's MCP field checks (DEC-PROFILE-1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx.config.settings import SettingsError, load_settings
from agentx.messages.dispatch import Perform, Reply, dispatch
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import ControlRequest
from agentx.messages.mcp.config import MAX_SERVERS, HttpServer, StdioServer


def load(tmp_path: Path, **sources: Any) -> Any:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    (cwd / ".agentx").mkdir(parents=True)
    home.mkdir()
    paths = {"user": home / "settings.json", "project": cwd / ".agentx" / "settings.json"}
    for name, obj in sources.items():
        paths[name].write_text(json.dumps(obj))
    return load_settings(home=home, cwd=cwd)


def test_a_later_source_replaces_a_whole_server(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        user={"mcpServers": {"a": {"command": "x", "env": {"K": "v"}}, "b": {"command": "b"}}},
        project={"mcpServers": {"a": {"type": "http", "url": "http://h/mcp"}}},
    )
    assert settings.mcp_servers == {
        "a": HttpServer(url="http://h/mcp"),
        "b": StdioServer(command="b"),
    }
    assert settings.mcp_scopes == {"a": "project", "b": "user"}


def test_no_servers_is_an_empty_map(tmp_path: Path) -> None:
    assert load(tmp_path).mcp_servers == {}


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        pytest.param({"a": {"command": "x", "cwd": "/"}}, "'cwd' is not a member", id="closed"),
        pytest.param([], "mcpServers must be an object", id="not-object"),
        pytest.param({"a__b": {"command": "x"}}, "must not contain '__'", id="name"),
    ],
)
def test_a_bad_server_fails_the_source_with_its_path(
    tmp_path: Path, servers: object, message: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        load(tmp_path, project={"mcpServers": servers})
    assert "settings.json" in str(caught.value) and message in str(caught.value)


def test_too_many_servers_across_sources(tmp_path: Path) -> None:
    half = MAX_SERVERS // 2
    settings = load(
        tmp_path,
        user={"mcpServers": {f"u{i}": {"command": "c"} for i in range(half)}},
        project={"mcpServers": {f"p{i}": {"command": "c"} for i in range(half + 1)}},
    )
    with pytest.raises(SettingsError, match=f"at most {MAX_SERVERS} servers"):
        _ = settings.mcp_servers


def request(subtype: str, payload: dict[str, Any]) -> ControlRequest:
    return ControlRequest(line=1, request_id="r", subtype=subtype, payload=freeze(payload))


@pytest.mark.parametrize(
    ("subtype", "payload", "error"),
    [
        pytest.param("mcp_set_servers", {"servers": {}}, None, id="set-empty"),
        pytest.param(
            "mcp_set_servers",
            {"servers": {f"s{i}": {} for i in range(MAX_SERVERS)}},
            None,
            id="set-at-limit",
        ),
        pytest.param(
            "mcp_set_servers",
            {"servers": {f"s{i}": {} for i in range(MAX_SERVERS + 1)}},
            f"mcp_set_servers may name at most {MAX_SERVERS} servers",
            id="set-past-limit",
        ),
        pytest.param(
            "mcp_set_servers",
            {},
            "mcp_set_servers takes exactly a servers object",
            id="set-missing",
        ),
        pytest.param(
            "mcp_set_servers",
            {
                "servers": [],
            },
            "takes exactly a servers object",
            id="set-array",
        ),
        pytest.param("mcp_reconnect", {"serverName": "a"}, None, id="reconnect"),
        pytest.param(
            "mcp_reconnect",
            {"server_name": "a"},
            "exactly a string serverName",
            id="reconnect-snake",
        ),
        pytest.param("mcp_toggle", {"serverName": "a", "enabled": False}, None, id="toggle"),
        pytest.param(
            "mcp_toggle", {"serverName": "a", "enabled": 1}, "a boolean enabled", id="toggle-int"
        ),
        pytest.param("mcp_toggle", {"serverName": "a"}, "a boolean enabled", id="toggle-missing"),
    ],
)
def test_extended_mcp_field_checks(
    subtype: str, payload: dict[str, Any], error: str | None
) -> None:
    action = dispatch(request(subtype, payload), profile="extended")
    if error is None:
        assert action == Perform(request_id="r", subtype=subtype, fields=freeze(payload))
    else:
        assert isinstance(action, Reply)
        assert error in action.record["response"]["error"]
        assert isinstance(action.record, FrozenDict)
