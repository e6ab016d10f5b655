"""An SDK in-process MCP server's channel, and the MCP permission prompt tool
(DEC-PROFILE-2, WIRE-009, WIRE-PERM-002).

Sans-IO.

**``mcp_message``.** In the ``sdk`` profile agentx reaches a ``type: "sdk"``
server by sending the client ``{"subtype": "mcp_message", "server_name": S,
"message": M}`` with ``M`` one JSON-RPC message; the client answers
``{"mcp_response": R}``. The standalone and extended profiles never send
it: the spec's standalone host originates no control request but
``can_use_tool``, and DEC-PROFILE-1 leaves ``mcp_message`` to the ``sdk``
profile (DEC-PROFILE-2). :func:`mcp_response_schema` checks the success
payload before its waiter resolves (WIRE-009); :func:`jsonrpc_reply` makes
the answer to request ``id`` one well-formed JSON-RPC response for that id,
whatever the client sent, so a wrong answer fails that one request and
never another.

**``--permission-prompt-tool mcp__server__tool``.** Claude Code's contract:
the tool gets ``{"tool_name", "input", "tool_use_id"}`` and answers with one
text block holding ``{"behavior": "allow", "updatedInput": {...}}`` or
``{"behavior": "deny", "message": "..."}``. :func:`prompt_tool_decision`
reads that text; anything else is a denial (fail closed, WIRE-PERM-002).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.mcp.config import (
    MAX_SERVERS,
    McpConfigError,
    SdkServer,
    check_server_name,
    credential_literals,
    parse_servers,
)
from agentx.messages.strict_json import StrictJSONError, loads_strict

#: JSON-RPC's "internal error": the client's answer could not be used.
INTERNAL_ERROR: Final = -32603
#: Bounds of the prompt tool's answer and of a denial message.
MAX_DECISION_CHARS: Final = 256 * 1024
MAX_DENY_MESSAGE_CHARS: Final = 2000


class McpResponseError(ValueError):
    """A success payload of ``mcp_message`` that is not ``{"mcp_response": {...}}``."""


def mcp_response_schema(payload: FrozenDict | None) -> FrozenDict:
    """The ``mcp_message`` success payload's ``mcp_response`` (WIRE-009)."""
    response = None if payload is None else payload.get("mcp_response")
    if not isinstance(response, Mapping):
        raise McpResponseError("mcp_message: the response must carry an mcp_response object")
    result: FrozenDict = freeze(response)
    return result


def mcp_message_request(server: str, message: Mapping[str, Any]) -> FrozenDict:
    """The control request carrying one JSON-RPC message to server ``server``."""
    return FrozenDict(subtype="mcp_message", server_name=server, message=freeze(message))


def jsonrpc_error(request_id: object, message: str) -> FrozenDict:
    return FrozenDict(
        jsonrpc="2.0", id=request_id, error=FrozenDict(code=INTERNAL_ERROR, message=message)
    )


def jsonrpc_reply(request_id: object, response: Mapping[str, Any], server: str) -> FrozenDict:
    """The answer to JSON-RPC request ``request_id``: the client's response when
    it is one for that id (a ``result`` object or an ``error`` with an integer
    code and a message), else an internal error naming the server."""
    if response.get("id") != request_id or response.get("jsonrpc") != "2.0":
        return jsonrpc_error(request_id, f"SDK MCP server {server} answered another request")
    result, error = response.get("result"), response.get("error")
    if isinstance(result, Mapping) and error is None:
        return FrozenDict(jsonrpc="2.0", id=request_id, result=result)
    if (
        result is None
        and isinstance(error, Mapping)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        return FrozenDict(jsonrpc="2.0", id=request_id, error=error)
    return jsonrpc_error(request_id, f"SDK MCP server {server} sent a malformed response")


# --- the TypeScript SDK's initialize fields (DEC-PROFILE-2) ---------------------


def sdk_servers_problem(value: object) -> str | None:
    """``sdkMcpServers``: an array of distinct server names, at most
    :data:`~agentx.messages.mcp.config.MAX_SERVERS`."""
    if not isinstance(value, tuple) or not all(isinstance(n, str) for n in value):
        return "must be an array of server names"
    if len(value) > MAX_SERVERS or len(set(value)) != len(value):
        return f"must name at most {MAX_SERVERS} distinct servers"
    for name in value:
        try:
            check_server_name(name)
        except McpConfigError as exc:
            return str(exc)
    return None


def sdk_servers(value: tuple[str, ...]) -> FrozenDict:
    """``sdkMcpServers`` as a server map (checked by :func:`sdk_servers_problem`)."""
    return FrozenDict((name, SdkServer()) for name in value)


def initial_servers_problem(value: object, known: frozenset[str]) -> str | None:
    """``mcpServers`` (not SDK servers): decoded as settings' are, and their
    ``env`` and ``headers`` values must already be in the output guard's
    union, which is fixed before the first write (WIRE-013)."""
    try:
        servers = parse_servers(value)
    except McpConfigError as exc:
        return str(exc)
    if credential_literals(servers.values()) - known:
        return (
            "env and headers values of a server sent in initialize cannot join the output "
            "guard's credential union, fixed before the first write (WIRE-013); pass these "
            "servers on the command line (the TypeScript SDK's mcpServersDelivery: 'argv')"
        )
    return None


def manifests_problem(value: object) -> str | None:
    """``sdkMcpServerManifests``: an object keyed by server name."""
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        return "must be an object of server name -> handshake results"
    return None


class PromptAllow(Struct, frozen=True, kw_only=True):
    updated_input: FrozenDict


class PromptDeny(Struct, frozen=True, kw_only=True):
    message: str


PromptDecision = PromptAllow | PromptDeny


def prompt_tool_input(
    tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str
) -> FrozenDict:
    """What the permission prompt tool is called with (Claude Code's members)."""
    return FrozenDict(tool_name=tool_name, input=freeze(tool_input), tool_use_id=tool_use_id)


def prompt_tool_decision(text: str, is_error: bool, original: FrozenDict) -> PromptDecision:
    """The decision in the prompt tool's result text. An error result, text
    that is not one JSON object, an unknown ``behavior`` or a wrong member
    type is a denial; ``allow`` without ``updatedInput`` keeps ``original``."""
    tool = "the permission prompt tool"
    if is_error:
        return PromptDeny(message=f"{tool} failed")
    if len(text) > MAX_DECISION_CHARS:
        return PromptDeny(message=f"{tool} answered more than {MAX_DECISION_CHARS} characters")
    try:
        decision = loads_strict(text)
    except StrictJSONError:
        return PromptDeny(message=f"{tool} did not answer with a JSON object")
    if not isinstance(decision, Mapping):
        return PromptDeny(message=f"{tool} did not answer with a JSON object")
    behavior = decision.get("behavior")
    if behavior == "allow":
        updated = decision.get("updatedInput", original)
        if not isinstance(updated, FrozenDict):
            return PromptDeny(message=f"{tool}: updatedInput must be an object")
        return PromptAllow(updated_input=updated)
    if behavior == "deny":
        message = decision.get("message", "")
        if not isinstance(message, str):
            return PromptDeny(message=f"{tool}: message must be a string")
        return PromptDeny(message=message[:MAX_DENY_MESSAGE_CHARS] or "denied")
    return PromptDeny(message=f'{tool}: behavior must be "allow" or "deny"')
