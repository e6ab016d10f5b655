"""Where a session's MCP servers come from, and which win (DEC-SET-1, DEC-SET-2, DEC-CLI-7).

Sans-IO: the launcher reads the files (bounded, DECISIONS section 8) and
hands their bytes here.

Sources, low to high (a later source replaces a same-named server whole,
DEC-SET-2):

1. ``<cwd>/.mcp.json`` (Claude Code's project file), scope ``project``, only
   the servers approved as Claude Code approves them (:func:`approval`);
2. the settings' merged ``mcpServers`` (DEC-SET-1 order), scope = the source
   whose entry won;
3. each ``--mcp-config`` in command-line order, scope ``dynamic``.

``--strict-mcp-config`` keeps only (3), as in Claude Code. A ``.mcp.json``
server is approved by ``enableAllProjectMcpServers: true`` or by its name in
``enabledMcpjsonServers``, and refused by its name in
``disabledMcpjsonServers`` (which wins). Those keys count only from the
user, local, flag and policy sources: the project's settings files arrive
with the repository, like ``.mcp.json`` itself, so they cannot approve it.
A server neither approved nor refused is pending approval and, as under
Claude Code without a terminal to ask on, not started.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from msgspec import Struct

from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import MAX_SERVERS, McpConfigError, parse_servers
from agentx.messages.strict_json import StrictJSONError, loads_strict

#: The settings keys of Claude Code's approval (DEC-SET-2).
APPROVAL_KEYS: Final = (
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
)
#: Settings sources whose approval counts (never the project's own files).
APPROVING_SOURCES: Final = frozenset({"user", "local", "flag", "policy"})
PROJECT_SCOPE: Final = "project"
FLAG_SCOPE: Final = "dynamic"

Approval = Literal["approved", "rejected", "pending"]


class Approvals(Struct, frozen=True, kw_only=True):
    enable_all: bool = False
    enabled: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()


class StartServers(Struct, frozen=True, kw_only=True):
    """The servers to start (name -> config), their scopes, and the
    ``.mcp.json`` servers left out: pending approval or refused."""

    servers: FrozenDict
    scopes: FrozenDict
    pending: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()


def check_approval_keys(settings: Mapping[str, Any]) -> str | None:
    """The first approval key of one settings source with a wrong type, as
    ``"<key> must be ..."``; None when they are well formed."""
    enable_all = settings.get("enableAllProjectMcpServers")
    if enable_all is not None and not isinstance(enable_all, bool):
        return "enableAllProjectMcpServers must be true or false"
    for key in APPROVAL_KEYS[1:]:
        names = settings.get(key)
        if names is not None and not (
            isinstance(names, list | tuple) and all(isinstance(n, str) for n in names)
        ):
            return f"{key} must be an array of server names"
    return None


def approvals_from(sources: Iterable[tuple[str, Mapping[str, Any]]]) -> Approvals:
    """The approval of every approving source (name, settings), in order:
    ``enableAllProjectMcpServers`` of the last source that sets it, the name
    lists joined."""
    enable_all = False
    enabled: set[str] = set()
    disabled: set[str] = set()
    for name, settings in sources:
        if name not in APPROVING_SOURCES:
            continue
        flag = settings.get("enableAllProjectMcpServers")
        if isinstance(flag, bool):
            enable_all = flag
        enabled.update(settings.get("enabledMcpjsonServers", ()))
        disabled.update(settings.get("disabledMcpjsonServers", ()))
    return Approvals(
        enable_all=enable_all, enabled=frozenset(enabled), disabled=frozenset(disabled)
    )


def approval(name: str, approvals: Approvals) -> Approval:
    """Claude Code's status of one ``.mcp.json`` server."""
    if name in approvals.disabled:
        return "rejected"
    if approvals.enable_all or name in approvals.enabled:
        return "approved"
    return "pending"


def decode_config(
    data: bytes | str, where: str, *, sdk: bool, approvals: Approvals | None = None
) -> FrozenDict:
    """One ``--mcp-config`` value or ``.mcp.json``: ``{"mcpServers": {...}}``
    (closed: no other member), decoded as :func:`parse_servers` decodes
    settings. With ``approvals`` (``.mcp.json``) only the approved servers
    are decoded; the others map to None, since they are never started (a
    server agentx cannot run stops the start only once it is approved).
    Raises :class:`McpConfigError` naming ``where``."""
    try:
        obj = loads_strict(data)
    except StrictJSONError as exc:
        raise McpConfigError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(obj, Mapping):
        raise McpConfigError(f'{where}: must be an object {{"mcpServers": {{...}}}}')
    breach = closed_breach(obj, frozenset({"mcpServers"}))
    if breach is not None:
        raise McpConfigError(f"{where}: {min(breach.unknown)!r} is not a member")
    servers = obj.get("mcpServers", FrozenDict())
    try:
        if approvals is None or not isinstance(servers, Mapping):
            return parse_servers(servers, sdk=sdk)
        approved = {n: c for n, c in servers.items() if approval(n, approvals) == "approved"}
        parsed = parse_servers(approved, sdk=sdk)
        if len(servers) > MAX_SERVERS:
            raise McpConfigError(f"mcpServers may name at most {MAX_SERVERS} servers")
    except McpConfigError as exc:
        raise McpConfigError(f"{where}: {exc}") from None
    return FrozenDict((name, parsed.get(name)) for name in servers)


def start_servers(
    *,
    settings_servers: Mapping[str, Any],
    settings_scopes: Mapping[str, str],
    project_file: Mapping[str, Any] | None,
    approvals: Approvals,
    flag_configs: Sequence[Mapping[str, Any]],
    strict: bool,
) -> StartServers:
    """The servers of the session's start, by the precedence of the module doc.

    Raises :class:`McpConfigError` when they name more than
    :data:`~agentx.messages.mcp.config.MAX_SERVERS` servers together.
    """
    servers: dict[str, Any] = {}
    scopes: dict[str, str] = {}
    pending: list[str] = []
    rejected: list[str] = []
    if not strict:
        for name, config in (project_file or {}).items():
            verdict = approval(name, approvals)
            if verdict == "approved":
                servers[name], scopes[name] = config, PROJECT_SCOPE
            else:
                (pending if verdict == "pending" else rejected).append(name)
        for name, config in settings_servers.items():
            servers.pop(name, None)  # a later source's entry goes last, in its order
            servers[name], scopes[name] = config, settings_scopes.get(name, "settings")
    for configs in flag_configs:
        for name, config in configs.items():
            servers.pop(name, None)
            servers[name], scopes[name] = config, FLAG_SCOPE
    if len(servers) > MAX_SERVERS:
        raise McpConfigError(f"the MCP servers may number at most {MAX_SERVERS} together")
    return StartServers(
        servers=FrozenDict(servers),
        scopes=FrozenDict(scopes),
        pending=tuple(pending),
        rejected=tuple(rejected),
    )
