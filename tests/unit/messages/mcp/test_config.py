"""The mcpServers configuration core: closed, bounded decoding, tool names and
the credential literals (DEC-SET-2, DEC-AUTH-3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import (
    MAX_ARGS,
    MAX_ENV,
    MAX_HEADERS,
    MAX_SERVER_NAME_CHARS,
    MAX_SERVERS,
    MAX_TEXT_CHARS,
    MAX_TOOL_NAME_CHARS,
    MAX_URL_CHARS,
    HttpServer,
    McpConfigError,
    StdioServer,
    credential_literals,
    parse_server,
    parse_servers,
    tool_name,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param({"command": "srv"}, StdioServer(command="srv"), id="stdio-type-implied"),
        pytest.param(
            {"type": "stdio", "command": "srv", "args": ["-v"], "env": {"TOKEN": "t0k"}},
            StdioServer(command="srv", args=("-v",), env=FrozenDict(TOKEN="t0k")),
            id="stdio-full",
        ),
        pytest.param(
            {"type": "http", "url": "https://mcp.example/mcp", "headers": {"X-Key": "k"}},
            HttpServer(url="https://mcp.example/mcp", headers=FrozenDict({"X-Key": "k"})),
            id="http-full",
        ),
        pytest.param(
            {"type": "http", "url": "http://127.0.0.1:1/mcp"},
            HttpServer(url="http://127.0.0.1:1/mcp"),
            id="http-no-headers",
        ),
    ],
)
def test_valid_configurations(raw: dict[str, Any], expected: object) -> None:
    assert parse_server("srv", raw) == expected


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        pytest.param("s", [], "MCP server s: the configuration must be an object", id="not-object"),
        pytest.param("s", {}, 'MCP server s: type must be "stdio", "http" or "sdk"', id="no-type"),
        pytest.param(
            "s",
            {"type": "sse", "url": "http://x"},
            'type must be "stdio", "http" or "sdk"',
            id="sse",
        ),
        pytest.param(
            "s",
            {"command": "c", "cwd": "/"},
            "'cwd' is not a member of this server type",
            id="extra",
        ),
        pytest.param(
            "s",
            {"type": "http", "url": "http://x", "command": "c"},
            "'command' is not a member",
            id="mixed",
        ),
        pytest.param(
            "s", {"command": ""}, "command must be a non-empty string", id="empty-command"
        ),
        pytest.param("s", {"command": 3}, "command must be a non-empty string", id="command-type"),
        pytest.param("s", {"command": "a\0b"}, "without NUL", id="nul"),
        pytest.param("s", {"command": "c", "args": "x"}, "args must be an array", id="args-type"),
        pytest.param("s", {"command": "c", "args": [1]}, "args must be a non-empty", id="arg-type"),
        pytest.param("s", {"command": "c", "env": []}, "env must be an object", id="env-type"),
        pytest.param(
            "s", {"command": "c", "env": {"1X": "v"}}, "'1X' is not a valid", id="env-key"
        ),
        pytest.param("s", {"command": "c", "env": {"K": 1}}, "env.K must be", id="env-value"),
        pytest.param(
            "s",
            {"type": "http", "url": "u", "headers": {"K": "a\r\nB: c"}},
            "url must be",
            id="relative-url",
        ),
        pytest.param(
            "s",
            {"type": "http", "url": "http://x", "headers": {"K": "a\r\nB: c"}},
            "headers.K must not contain a line break",
            id="header-injection",
        ),
        pytest.param(
            "s",
            {"type": "http", "url": "http://x", "headers": {"a b": "v"}},
            "'a b' is not a valid name",
            id="header-name",
        ),
        pytest.param("s", {"type": "http", "url": "ftp://x"}, "http:// or https://", id="scheme"),
        pytest.param("s", {"type": "http", "url": "http://a b"}, "no spaces", id="url-space"),
        pytest.param("a b", {"command": "c"}, "letters, digits", id="name-chars"),
        pytest.param("a__b", {"command": "c"}, "must not contain '__'", id="name-separator"),
        pytest.param("a_", {"command": "c"}, "or end with '_'", id="name-trailing-underscore"),
        pytest.param("", {"command": "c"}, "letters, digits", id="name-empty"),
    ],
)
def test_invalid_configurations(name: str, raw: object, message: str) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_server(name, raw)
    assert message in str(caught.value)


def test_errors_never_quote_a_value() -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_server("s", {"type": "http", "url": "http://x", "headers": {"K": 7}})
    assert "7" not in str(caught.value).replace("MCP", "")


def _bounded(size: int) -> list[tuple[str, dict[str, Any]]]:
    """One configuration per bound, each exactly ``size`` past or at its limit."""
    return [
        ("args", {"command": "c", "args": ["a"] * size}),
        ("env", {"command": "c", "env": {f"K{i}": "v" for i in range(size)}}),
        (
            "headers",
            {"type": "http", "url": "http://x", "headers": {f"h{i}": "v" for i in range(size)}},
        ),
        ("command", {"command": "c" * size}),
        ("url", {"type": "http", "url": "http://" + "x" * (size - 7)}),
    ]


LIMITS = {
    "args": MAX_ARGS,
    "env": MAX_ENV,
    "headers": MAX_HEADERS,
    "command": MAX_TEXT_CHARS,
    "url": MAX_URL_CHARS,
}


@pytest.mark.parametrize("bound", sorted(LIMITS))
def test_every_bound_at_the_limit_and_one_past(bound: str) -> None:
    at = dict(_bounded(LIMITS[bound]))[bound]
    past = dict(_bounded(LIMITS[bound] + 1))[bound]
    parse_server("s", at)
    with pytest.raises(McpConfigError):
        parse_server("s", past)


def test_server_count_and_name_length_at_the_limit_and_one_past() -> None:
    servers = {f"s{i}": {"command": "c"} for i in range(MAX_SERVERS)}
    assert len(parse_servers(servers)) == MAX_SERVERS
    with pytest.raises(McpConfigError, match=f"at most {MAX_SERVERS} servers"):
        parse_servers({**servers, "one-more": {"command": "c"}})
    parse_server("n" * MAX_SERVER_NAME_CHARS, {"command": "c"})
    with pytest.raises(McpConfigError, match="at most"):
        parse_server("n" * (MAX_SERVER_NAME_CHARS + 1), {"command": "c"})
    with pytest.raises(McpConfigError, match="must be an object"):
        parse_servers([])


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        pytest.param("calc", "add", "mcp__calc__add", id="plain"),
        pytest.param("calc", "add-2_x", "mcp__calc__add-2_x", id="dash-underscore"),
        pytest.param("calc", "add.v2", None, id="dot"),
        pytest.param("calc", "", None, id="empty"),
        pytest.param(
            "calc", "t" * (MAX_TOOL_NAME_CHARS - 11), "mcp__calc__" + "t" * 53, id="at-limit"
        ),
        pytest.param("calc", "t" * (MAX_TOOL_NAME_CHARS - 10), None, id="one-past"),
    ],
)
def test_tool_names(server: str, tool: str, expected: str | None) -> None:
    assert tool_name(server, tool) == expected


def test_credential_literals_are_header_and_env_values() -> None:
    servers = parse_servers(
        {
            "a": {"command": "c", "args": ["--not-secret"], "env": {"A": "env-v", "E": ""}},
            "b": {"type": "http", "url": "http://u", "headers": {"H": "hdr-v"}},
        }
    )
    assert credential_literals(servers.values()) == {"env-v", "hdr-v"}


@given(
    st.dictionaries(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
        st.text(
            alphabet=st.characters(blacklist_characters="\0\r\n", blacklist_categories=("Cs",)),
            max_size=20,
        ),
        max_size=8,
    )
)
def test_every_env_value_is_kept_and_is_a_credential(env: dict[str, str]) -> None:
    config = parse_server("s", {"command": "c", "env": env})
    assert config == StdioServer(command="c", env=FrozenDict(env))
    assert credential_literals((config,)) == {v for v in env.values() if v}
