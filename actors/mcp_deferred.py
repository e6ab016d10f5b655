"""The sdk profile's MCP manager before its first use (DEC-PROFILE-2, DEC-SET-2, DEC-CLI-3).

The sdk profile runs an MCP manager in case the client adds servers
(``initialize``'s ``mcpServers`` and ``sdkMcpServers``, ``mcp_set_servers``).
When no server is configured at start, :class:`DeferredMcp` stands in for the
:class:`~agentx.actors.mcp_manager.McpHandle`: the turn engine sees what a
manager with an empty table offers (no MCP tool, no first connection under
way, no tool media), and the first control operation (``mcp_status``,
``mcp_set_servers``, ``mcp_reconnect``, ``mcp_toggle``, an ``initialize``
server) starts the real manager, once, and is answered by it. Until then
neither the manager's module, its actor thread nor the MCP cores (the
server table, the tool set, tool search, the redactor) are loaded: a default
SDK ``query()`` answers ``initialize`` without them.

Only the supervisor's operations start the manager; the shutdown stops it
after the supervisor has stopped (:mod:`agentx.actors.shutdown`), so
:attr:`DeferredMcp.ref` read then is final.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentx.once import Once

if TYPE_CHECKING:
    import pykka

    from agentx.actors.mcp_manager import McpHandle, McpManagerActor
    from agentx.messages.frozen import FrozenDict
    from agentx.messages.mcp.config import ServerConfig
    from agentx.providers.base import Block
    from agentx.turns.cancel import CancelScope
    from agentx.turns.contracts import ToolRunner


class DeferredMcp:
    """An :class:`~agentx.actors.mcp_manager.McpHandle` started on first use;
    see the module docstring. ``start`` builds the real handle."""

    def __init__(self, start: Callable[[], McpHandle]) -> None:
        self._handle = Once(start)
        self.tools = DeferredTools(self)
        self.media = DeferredMedia(self)

    @property
    def started(self) -> McpHandle | None:
        """The real handle once an operation started it (any thread)."""
        return self._handle.peek()

    @property
    def ref(self) -> pykka.ActorRef[McpManagerActor] | None:
        """The manager to stop at the end; None when it never started."""
        handle = self._handle.peek()
        return handle.ref if handle is not None else None

    def _running(self) -> McpHandle:
        return self._handle.get()

    # -- the supervisor's operations: each starts the manager ---------------------

    def status(self) -> FrozenDict:
        return self._running().status()

    def set_servers(self, servers: Mapping[str, Any]) -> tuple[FrozenDict, Callable[[], None]]:
        return self._running().set_servers(servers)

    def add_initial(self, servers: Mapping[str, ServerConfig]) -> None:
        self._running().add_initial(servers)

    def reconnect(self, name: str) -> str | None:
        return self._running().reconnect(name)

    def toggle(self, name: str, enabled: bool) -> str | None:
        return self._running().toggle(name, enabled)


class DeferredTools:
    """The engine's live MCP tools: the manager's once it runs, none before
    (an empty table offers none and has no first connection to wait for)."""

    def __init__(self, mcp: DeferredMcp) -> None:
        self._mcp = mcp

    def __call__(self) -> tuple[ToolRunner, ...]:
        handle = self._mcp.started
        return handle.tools() if handle is not None else ()

    def wait_ready(self, cancel: CancelScope) -> None:
        handle = self._mcp.started
        if handle is not None:
            handle.tools.wait_ready(cancel)


class DeferredMedia:
    """The images of MCP tool results: only a started manager's tools have any."""

    def __init__(self, mcp: DeferredMcp) -> None:
        self._mcp = mcp

    def take(self, tool_use_id: str) -> tuple[Block, ...]:
        handle = self._mcp.started
        if handle is None or handle.media is None:
            return ()
        return handle.media.take(tool_use_id)
