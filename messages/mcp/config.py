"""MCP server configuration: the ``mcpServers`` map, names and credentials (DEC-SET-2).

Sans-IO. A settings source (DEC-SET-1) or an ``mcp_set_servers`` request
(DEC-PROFILE-1) names servers as ``{"name": {"type": "stdio", "command": C,
"args": [...], "env": {...}}}``, ``{"type": "http", "url": U, "headers":
{...}}`` (streamable HTTP), or, from the client in the ``sdk`` profile only
(DEC-PROFILE-2), ``{"type": "sdk", "name": N}``: a server that lives in the
client's process and is reached with ``mcp_message`` control requests.
Decoding is closed and bounded, like every other inbound object (WIRE-021):
an unknown member, a wrong type or a value past a bound is a
:class:`McpConfigError` whose message names the server and the member but
never quotes a value, since values may be credentials.

Header values and env values are credentials: :func:`credential_literals`
hands them to the output guard's union before the first write (WIRE-013).

Model-facing tool names are ``mcp__<server>__<tool>`` (the spelling the
permission rules match, :mod:`agentx.messages.permission_rules`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from msgspec import Struct, field

from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict

#: Bounds of one configuration (closed and bounded decoding, WIRE-021).
MAX_SERVERS: Final = 32
MAX_ARGS: Final = 256
MAX_ENV: Final = 64
MAX_HEADERS: Final = 64
MAX_TEXT_CHARS: Final = 8192
MAX_URL_CHARS: Final = 2048
#: Server names: letters, digits, ``_`` and ``-``; no ``__`` (the name separator)
#: and no trailing ``_``, so ``mcp__<server>__<tool>`` names one tool only
#: (server ``a_`` with tool ``b`` would otherwise equal server ``a`` with ``_b``).
MAX_SERVER_NAME_CHARS: Final = 32
#: The whole ``mcp__<server>__<tool>`` name stays within the tool-name limit
#: that every provider accepts (``^[A-Za-z0-9_-]{1,64}$``).
MAX_TOOL_NAME_CHARS: Final = 64
PREFIX: Final = "mcp__"
SEPARATOR: Final = "__"

#: The grammars of a server, header and variable name: sources that ``re``
#: compiles (and caches) on first use, not at import (start-up, DEC-CLI-3).
_NAME: Final = r"[A-Za-z0-9_-]+"
_HEADER_NAME: Final = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_ENV_NAME: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_STDIO_MEMBERS: Final = frozenset({"type", "command", "args", "env"})
_HTTP_MEMBERS: Final = frozenset({"type", "url", "headers"})
_SDK_MEMBERS: Final = frozenset({"type", "name"})
SDK_NEEDS_PROFILE: Final = (
    'type "sdk" (a server in the client\'s process) is only served in the sdk control '
    "profile, where agentx may send mcp_message requests (DEC-PROFILE-2)"
)


class McpConfigError(ValueError):
    """A server configuration agentx refuses; the message quotes no value."""


class StdioServer(Struct, frozen=True, kw_only=True):
    """A server run as a subprocess speaking MCP over its stdin/stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: FrozenDict = field(default_factory=FrozenDict)


class HttpServer(Struct, frozen=True, kw_only=True):
    """A server reached over streamable HTTP."""

    url: str
    headers: FrozenDict = field(default_factory=FrozenDict)


class SdkServer(Struct, frozen=True, kw_only=True):
    """A server in the client's own process (DEC-PROFILE-2): every JSON-RPC
    message goes to the client in an ``mcp_message`` control request."""


ServerConfig = StdioServer | HttpServer | SdkServer


def check_server_name(name: str) -> None:
    """Letters, digits, ``_``, ``-``; at most 32 characters; no ``__``, no trailing ``_``."""
    if not isinstance(name, str) or not re.fullmatch(_NAME, name):
        raise McpConfigError("an MCP server name must be letters, digits, '_' or '-'")
    if len(name) > MAX_SERVER_NAME_CHARS:
        raise McpConfigError(
            f"an MCP server name must be at most {MAX_SERVER_NAME_CHARS} characters"
        )
    if SEPARATOR in name or name.endswith("_"):
        raise McpConfigError(f"MCP server {name}: the name must not contain '__' or end with '_'")


def tool_name(server: str, tool: str) -> str | None:
    """``mcp__<server>__<tool>``, or None when ``tool`` cannot be offered.

    A server's tool name is offered only when it uses the characters every
    provider accepts and the whole name fits :data:`MAX_TOOL_NAME_CHARS`.
    """
    if not re.fullmatch(_NAME, tool):
        return None
    full = f"{PREFIX}{server}{SEPARATOR}{tool}"
    return full if len(full) <= MAX_TOOL_NAME_CHARS else None


def parse_servers(value: object, where: str = "mcpServers", *, sdk: bool = False) -> FrozenDict:
    """Decode a complete ``mcpServers`` map into name -> :data:`ServerConfig`.

    ``sdk``: whether ``type: "sdk"`` servers may be named (the client's
    configuration in the ``sdk`` profile). Raises :class:`McpConfigError`
    for the first problem found.
    """
    if not isinstance(value, Mapping):
        raise McpConfigError(f"{where} must be an object")
    if len(value) > MAX_SERVERS:
        raise McpConfigError(f"{where} may name at most {MAX_SERVERS} servers")
    return FrozenDict((name, parse_server(name, config, sdk=sdk)) for name, config in value.items())


def parse_server(name: str, value: object, *, sdk: bool = False) -> ServerConfig:
    """Decode one server's configuration (closed: unknown members are errors)."""
    check_server_name(name)
    where = f"MCP server {name}"
    if not isinstance(value, Mapping):
        raise McpConfigError(f"{where}: the configuration must be an object")
    kind = value.get("type", "stdio" if "command" in value else None)
    if kind == "stdio":
        _refuse_unknown(value, _STDIO_MEMBERS, where)
        return StdioServer(
            command=_text(value.get("command"), f"{where}: command", required=True),
            args=_strings(value.get("args", ()), f"{where}: args"),
            env=_pairs(value.get("env", {}), f"{where}: env", MAX_ENV, _ENV_NAME),
        )
    if kind == "http":
        _refuse_unknown(value, _HTTP_MEMBERS, where)
        return HttpServer(
            url=_url(value.get("url"), f"{where}: url"),
            headers=_pairs(
                value.get("headers", {}), f"{where}: headers", MAX_HEADERS, _HEADER_NAME
            ),
        )
    if kind == "sdk":
        if not sdk:
            raise McpConfigError(f"{where}: {SDK_NEEDS_PROFILE}")
        _refuse_unknown(value, _SDK_MEMBERS, where)
        # The client's own label; ``mcp_message`` names the server by its key.
        if "name" in value:
            _text(value["name"], f"{where}: name", required=True)
        return SdkServer()
    raise McpConfigError(f'{where}: type must be "stdio", "http" or "sdk"')


def credential_literals(servers: Iterable[ServerConfig]) -> frozenset[str]:
    """Header values and env values: the servers' part of the credential union."""
    literals: set[str] = set()
    for server in servers:
        if isinstance(server, SdkServer):
            continue
        values = server.env if isinstance(server, StdioServer) else server.headers
        literals.update(v for v in values.values() if v)
    return frozenset(literals)


def _refuse_unknown(value: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    breach = closed_breach(value, allowed)
    if breach is not None:
        raise McpConfigError(
            f"{where}: {min(breach.unknown)!r} is not a member of this server type"
        )


def _text(value: object, where: str, *, required: bool = False) -> str:
    if not isinstance(value, str) or (required and not value):
        raise McpConfigError(f"{where} must be a non-empty string")
    if len(value) > MAX_TEXT_CHARS or "\0" in value:
        raise McpConfigError(f"{where} must be at most {MAX_TEXT_CHARS} characters, without NUL")
    return value


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise McpConfigError(f"{where} must be an array of strings")
    if len(value) > MAX_ARGS:
        raise McpConfigError(f"{where} may hold at most {MAX_ARGS} strings")
    return tuple(_text(item, where) for item in value)


def _pairs(value: object, where: str, limit: int, names: str) -> FrozenDict:
    if not isinstance(value, Mapping):
        raise McpConfigError(f"{where} must be an object of strings")
    if len(value) > limit:
        raise McpConfigError(f"{where} may hold at most {limit} entries")
    for key, item in value.items():
        if not re.fullmatch(names, key):
            raise McpConfigError(f"{where}: {key!r} is not a valid name")
        text = _text(item, f"{where}.{key}")
        if "\r" in text or "\n" in text:
            raise McpConfigError(f"{where}.{key} must not contain a line break")
    return FrozenDict(value)


def _url(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise McpConfigError(f"{where} must be an http:// or https:// URL")
    if len(value) > MAX_URL_CHARS or any(c.isspace() for c in value):
        raise McpConfigError(f"{where} must be at most {MAX_URL_CHARS} characters, no spaces")
    return value
