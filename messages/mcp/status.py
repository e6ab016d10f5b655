"""The MCP server table: statuses, tools and the control operations (DEC-PROFILE-1).

Sans-IO: the MCP manager actor owns one :class:`McpServers` and carries out
the :class:`Connect` / :class:`Disconnect` actions it returns. Statuses are
Claude Code's vocabulary: ``pending`` (connecting), ``connected``, ``failed``
(with a credential-free error) and ``disabled`` (``mcp_toggle``).

Every connection attempt has a fresh ``generation``; an event from an older
attempt (a server removed, reconnected or toggled meanwhile) is ignored, so a
late failure can never overwrite a newer connection.

DEC-SET-2, the first connection: a server's first attempt (configured at
start, or named by the sdk profile's ``initialize``) is awaited by the model
requests (:meth:`McpServers.starting`), so a one-shot prompt sees the tools
of every server that connects in time, as under Claude Code; a reconnect,
a toggle or ``mcp_set_servers`` never delays a request.

``mcp_set_servers`` (spec "Control operations", scenario 8) is two steps so
that the correlated response is enqueued before any connection starts:
:meth:`McpServers.plan_set_servers` decides ``added``/``removed``/``errors``
without changing anything, and :meth:`McpServers.apply` later returns the
actions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal

from msgspec import Struct
from msgspec.structs import replace

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.mcp.config import (
    McpConfigError,
    ServerConfig,
    credential_literals,
    parse_server,
    tool_name,
)

Status = Literal["pending", "connected", "failed", "disabled"]

#: Bounds on what one server may contribute to the model's tool list.
MAX_TOOLS_PER_SERVER: Final = 128
MAX_DESCRIPTION_CHARS: Final = 2048
MAX_SCHEMA_BYTES: Final = 64 * 1024
MAX_ERROR_CHARS: Final = 500
#: The scope of servers added by ``mcp_set_servers`` (Claude Code's word).
DYNAMIC: Final = "dynamic"

DYNAMIC_CREDENTIALS_ERROR: Final = (
    "header and env values of a server added by mcp_set_servers must already be in the "
    "output guard's credential union, which is fixed before the first write (WIRE-013); "
    "configure this server in settings instead"
)


#: DEC-SET-2: a server's connection attempt (spawn or connect, initialize,
#: tools/list) is bounded by Claude Code's ``MCP_TIMEOUT`` (milliseconds,
#: default 30 s) and each tool call by its ``MCP_TOOL_TIMEOUT`` (default
#: 60 s), each taken between 1 s and 10 min; a model request waits for the
#: first attempts at most the connect bound plus :data:`READY_GRACE`.
DEFAULT_CONNECT_SECONDS: Final = 30.0
DEFAULT_CALL_SECONDS: Final = 60.0
MIN_TIMEOUT_SECONDS: Final = 1.0
MAX_TIMEOUT_SECONDS: Final = 600.0
READY_GRACE: Final = 5.0


def timeout_seconds(milliseconds: str | None, default: float) -> float:
    """A timeout variable (ms) as seconds; absent or not a number: ``default``."""
    try:
        value = int(milliseconds or "") / 1000
    except ValueError:
        return default
    return min(max(value, MIN_TIMEOUT_SECONDS), MAX_TIMEOUT_SECONDS)


class ToolInfo(Struct, frozen=True, kw_only=True):
    """One tool a server offers, accepted for the model (bounded)."""

    server: str
    name: str
    full_name: str
    description: str
    input_schema: FrozenDict


class ServerState(Struct, frozen=True, kw_only=True):
    name: str
    config: ServerConfig
    #: The settings source that configured it (DEC-SET-1), or ``dynamic``.
    scope: str
    status: Status
    generation: int
    error: str | None = None
    server_info: FrozenDict | None = None
    tools: tuple[ToolInfo, ...] = ()


class Connect(Struct, frozen=True, kw_only=True):
    name: str
    generation: int
    config: ServerConfig


class Disconnect(Struct, frozen=True, kw_only=True):
    name: str


Action = Connect | Disconnect


class SetServersPlan(Struct, frozen=True, kw_only=True):
    """What ``mcp_set_servers`` will do; ``response`` is the correlated payload."""

    accepted: FrozenDict
    added: tuple[str, ...]
    removed: tuple[str, ...]
    errors: FrozenDict

    @property
    def response(self) -> FrozenDict:
        return FrozenDict(added=self.added, removed=self.removed, errors=self.errors)


def initial_entries(configured: Mapping[str, ServerConfig]) -> tuple[FrozenDict, ...]:
    """``system/init`` ``mcp_servers``: every configured server is still
    ``pending`` then (init never waits for a connection)."""
    return tuple(FrozenDict(name=name, status="pending") for name in configured)


def accept_tools(
    server: str, listed: Iterable[Mapping[str, Any]], redact: Callable[[str], str]
) -> tuple[ToolInfo, ...]:
    """The tools of a ``tools/list`` result that can be offered to the model.

    A tool is skipped when its name cannot be spelled ``mcp__<server>__<tool>``
    within the bounds or repeats an earlier one, when its ``inputSchema`` is
    not an object schema, or when the schema encodes to more than :data:`MAX_SCHEMA_BYTES`; at most
    :data:`MAX_TOOLS_PER_SERVER` are kept, descriptions are redacted (they
    reach ``mcp_status``) and cut to :data:`MAX_DESCRIPTION_CHARS`.
    """
    accepted: list[ToolInfo] = []
    for tool in listed:
        name, schema = tool.get("name"), tool.get("inputSchema")
        full = tool_name(server, name) if isinstance(name, str) else None
        if full is None or not isinstance(schema, Mapping) or schema.get("type") != "object":
            continue
        if any(seen.full_name == full for seen in accepted):
            continue  # a second tool of the same name would be ambiguous to the model
        if len(json.dumps(schema, ensure_ascii=False).encode("utf-8")) > MAX_SCHEMA_BYTES:
            continue
        description = tool.get("description")
        accepted.append(
            ToolInfo(
                server=server,
                name=str(name),
                full_name=full,
                description=redact(description if isinstance(description, str) else "")[
                    :MAX_DESCRIPTION_CHARS
                ],
                input_schema=freeze(schema),
            )
        )
        if len(accepted) == MAX_TOOLS_PER_SERVER:
            break
    return tuple(accepted)


class McpServers:
    """Every configured server's state, in configuration order."""

    def __init__(
        self,
        configured: Mapping[str, ServerConfig],
        known_literals: frozenset[str],
        scopes: Mapping[str, str] = FrozenDict(),
        *,
        sdk: bool = False,
    ) -> None:
        """``sdk``: ``mcp_set_servers`` may name ``type: "sdk"`` servers (the
        sdk profile, DEC-PROFILE-2; the TypeScript SDK's ``setMcpServers``)."""
        self._known = known_literals
        self._sdk = sdk
        self._generation = 0
        self._servers: dict[str, ServerState] = {}
        #: Servers still in their first connection attempt (DEC-SET-2).
        self._first: set[str] = set(configured)
        for name, config in configured.items():
            self._servers[name] = ServerState(
                name=name,
                config=config,
                scope=scopes.get(name, "settings"),
                status="pending",
                generation=self._next(),
            )

    def _next(self) -> int:
        self._generation += 1
        return self._generation

    # -- views -------------------------------------------------------------------

    def state(self, name: str) -> ServerState | None:
        return self._servers.get(name)

    def start(self) -> tuple[Action, ...]:
        """Connect every configured server (all concurrently, after ``system/init``)."""
        return tuple(
            Connect(name=s.name, generation=s.generation, config=s.config)
            for s in self._servers.values()
            if s.status == "pending"
        )

    def status_payload(self) -> FrozenDict:
        """``mcp_status``: ``{"mcpServers": [...]}`` with Claude Code's member names."""
        entries = []
        for s in self._servers.values():
            entry: dict[str, Any] = {"name": s.name, "status": s.status, "scope": s.scope}
            if s.server_info is not None:
                entry["serverInfo"] = s.server_info
            if s.error is not None:
                entry["error"] = s.error
            if s.status == "connected":
                entry["tools"] = tuple(
                    FrozenDict(name=t.name, description=t.description) for t in s.tools
                )
            entries.append(FrozenDict(entry))
        return FrozenDict(mcpServers=tuple(entries))

    def starting(self) -> bool:
        """Whether a server is still in its first connection attempt: the
        model requests wait (bounded) until none is."""
        return any(
            name in self._first and state.status == "pending"
            for name, state in self._servers.items()
        )

    def add_initial(self, configured: Mapping[str, ServerConfig], scope: str) -> tuple[Action, ...]:
        """Servers the sdk profile's ``initialize`` names (DEC-PROFILE-2):
        first attempts, like the start's; a name already configured is
        replaced whole (DEC-SET-2)."""
        actions: list[Action] = []
        for name, config in configured.items():
            if name in self._servers:
                actions.append(Disconnect(name=name))
            generation = self._next()
            self._servers[name] = ServerState(
                name=name, config=config, scope=scope, status="pending", generation=generation
            )
            self._first.add(name)
            actions.append(Connect(name=name, generation=generation, config=config))
        return tuple(actions)

    def tools(self) -> tuple[ToolInfo, ...]:
        """The tools of every connected server, in configuration order."""
        return tuple(t for s in self._servers.values() if s.status == "connected" for t in s.tools)

    # -- connection events -------------------------------------------------------

    def connected(
        self,
        name: str,
        generation: int,
        *,
        server_info: FrozenDict | None,
        tools: tuple[ToolInfo, ...],
    ) -> bool:
        """A connection attempt succeeded; False when the event is stale."""
        current = self._servers.get(name)
        if current is None or current.generation != generation or current.status != "pending":
            return False
        self._servers[name] = replace(
            current, status="connected", server_info=server_info, tools=tools, error=None
        )
        return True

    def failed(self, name: str, generation: int, error: str) -> bool:
        """A connection attempt failed or a connected server went away."""
        current = self._servers.get(name)
        if current is None or current.generation != generation or current.status == "disabled":
            return False
        self._servers[name] = replace(
            current, status="failed", error=error[:MAX_ERROR_CHARS], tools=(), server_info=None
        )
        return True

    # -- control operations (DEC-PROFILE-1) ----------------------------------------

    def reconnect(self, name: str) -> tuple[Action, ...] | str:
        """``mcp_reconnect``: a new attempt; an error text for unknown/disabled names."""
        current = self._servers.get(name)
        if current is None:
            return f"no MCP server named {name!r}"
        if current.status == "disabled":
            return f"MCP server {name!r} is disabled; enable it with mcp_toggle"
        return self._restart(current)

    def toggle(self, name: str, enabled: bool) -> tuple[Action, ...] | str:
        """``mcp_toggle``: disable (disconnect, tools withdrawn) or enable (connect)."""
        current = self._servers.get(name)
        if current is None:
            return f"no MCP server named {name!r}"
        if not enabled:
            if current.status == "disabled":
                return ()
            self._servers[name] = replace(
                current, status="disabled", error=None, tools=(), server_info=None
            )
            self._first.discard(name)
            return (Disconnect(name=name),)
        return self._restart(current) if current.status == "disabled" else ()

    def _restart(self, current: ServerState) -> tuple[Action, ...]:
        self._first.discard(current.name)
        generation = self._next()
        self._servers[current.name] = replace(
            current,
            status="pending",
            generation=generation,
            error=None,
            tools=(),
            server_info=None,
        )
        return (
            Disconnect(name=current.name),
            Connect(name=current.name, generation=generation, config=current.config),
        )

    def plan_set_servers(self, servers: Mapping[str, Any]) -> SetServersPlan:
        """Decide ``mcp_set_servers`` for a complete dynamic map; changes nothing.

        ``added`` names servers that will connect (new, or a changed
        configuration); ``removed`` names dynamic servers absent from the map.
        An entry with an error is not applied and leaves that name as it was;
        settings-configured servers cannot be replaced.
        """
        accepted: dict[str, ServerConfig] = {}
        errors: dict[str, str] = {}
        for name, raw in servers.items():
            try:
                config = parse_server(name, raw, sdk=self._sdk)
            except McpConfigError as exc:
                errors[name] = str(exc)
                continue
            existing = self._servers.get(name)
            if existing is not None and existing.scope != DYNAMIC:
                errors[name] = f"MCP server {name} is configured in settings and cannot be replaced"
            elif credential_literals((config,)) - self._known:
                errors[name] = DYNAMIC_CREDENTIALS_ERROR
            else:
                accepted[name] = config
        dynamic = {n: s.config for n, s in self._servers.items() if s.scope == DYNAMIC}
        return SetServersPlan(
            accepted=FrozenDict(accepted),
            added=tuple(n for n, c in accepted.items() if dynamic.get(n) != c),
            removed=tuple(n for n in dynamic if n not in accepted and n not in errors),
            errors=FrozenDict(errors),
        )

    def apply(self, plan: SetServersPlan) -> tuple[Action, ...]:
        """Carry out a plan made by :meth:`plan_set_servers` (after its response)."""
        actions: list[Action] = []
        for name in plan.removed:
            del self._servers[name]
            self._first.discard(name)
            actions.append(Disconnect(name=name))
        for name in plan.added:
            config: ServerConfig = plan.accepted[name]
            generation = self._next()
            if name in self._servers:
                actions.append(Disconnect(name=name))
            self._first.discard(name)
            self._servers[name] = ServerState(
                name=name, config=config, scope=DYNAMIC, status="pending", generation=generation
            )
            actions.append(Connect(name=name, generation=generation, config=config))
        return tuple(actions)
