"""McpManagerActor: MCP servers behind one actor and one event loop (DEC-SET-2, DEC-PROFILE-1).

The actor owns the sans-IO server table (:class:`~agentx.messages.mcp.status.McpServers`)
and one thread running one asyncio event loop, started with the first server
to connect (in ``on_start`` when servers are configured; the sdk profile's
manager, started in case the client adds some, may never start it: start-up,
DEC-CLI-3) and stopped in ``on_stop`` after every server task is cancelled and
every stdio subprocess reaped. Connections start right after the actor does,
all concurrently, so ``system/init`` (already written) and the first record
never wait for them. Connection outcomes come back to the actor as messages, so the
table has a single owner.

A hanging, crashing or flooding server only ever occupies its own task on the
loop: the turn runner waits for a call on a future that an interrupt cancels
and that the call timeout (:data:`DEFAULT_CALL_TIMEOUT`) bounds, and the
writer never waits for MCP at all.

The control operations (:class:`McpHandle`) ask the actor, which answers from
its table without waiting on the loop; each ask waits at most ``ask_seconds``
(:data:`~agentx.actors.base.ASK_SECONDS`, DECISIONS section 8). A manager
that does not answer in time is reported as failed (exit 4, one ERROR line)
and the asker gets :class:`~agentx.actors.base.AskExpired`: the supervisor
answers that control request with an error.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pykka
from msgspec import Struct

from agentx.actors.base import ASK_SECONDS, Actor, answer_within
from agentx.actors.broker import ControlBroker
from agentx.actors.supervision import ExitLatch
from agentx.config.registry import DEFAULT_CONTEXT_WINDOW
from agentx.diagnostics import logger
from agentx.mcp.tools import McpMedia, McpTool, McpToolSet
from agentx.messages.control import Resolved, Settlement
from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import ServerConfig
from agentx.messages.mcp.status import (
    DEFAULT_CALL_SECONDS,
    DEFAULT_CONNECT_SECONDS,
    DYNAMIC,
    READY_GRACE,
    Action,
    Connect,
    McpServers,
    SetServersPlan,
    accept_tools,
    timeout_seconds,
)
from agentx.tools.process import ChildProcesses

if TYPE_CHECKING:
    import asyncio

    # Types only: the SDK channel module imports the MCP SDK (pydantic,
    # starlette, ...), which loads with the first SDK server, and the client
    # module asyncio, which loads with the event loop: never for a session
    # that has no server (start-up, DEC-CLI-3).
    from agentx.mcp.client import ConnectionsStop, McpConnections
    from agentx.mcp.sdk_channel import OnDone, SdkMessenger

DEFAULT_CALL_TIMEOUT: Final = DEFAULT_CALL_SECONDS
DEFAULT_CONNECT_TIMEOUT: Final = DEFAULT_CONNECT_SECONDS
#: How long ``on_stop`` waits for the transports to close (stdio servers get
#: the ``mcp`` package's own grace period, then are killed).
CLOSE_TIMEOUT: Final = 10.0


class ServerConnected(Struct, frozen=True, kw_only=True):
    name: str
    generation: int
    server_info: Mapping[str, Any] | None
    tools: tuple[Mapping[str, Any], ...]


class ServerFailed(Struct, frozen=True, kw_only=True):
    name: str
    generation: int
    error: str


class McpManagerActor(Actor):
    def __init__(
        self,
        *,
        configured: Mapping[str, ServerConfig],
        known_literals: frozenset[str],
        scopes: Mapping[str, str] = FrozenDict(),
        redact: Callable[[str], str],
        cwd: Path,
        tool_set: McpToolSet,
        media: McpMedia | None = None,
        on_change: Callable[[FrozenDict], None] = lambda _status: None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        children: ChildProcesses | None = None,
        supervision: ExitLatch | None = None,
        sdk: SdkMessenger | None = None,
    ) -> None:
        super().__init__(supervision=supervision)
        self._sdk = sdk
        self._children = children or ChildProcesses()
        self._closer: ConnectionsStop | None = None
        self._core = McpServers(configured, known_literals, scopes, sdk=sdk is not None)
        self._redact = redact
        self._cwd = cwd
        self._tool_set = tool_set
        self._media = media
        self._on_change = on_change
        self._call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        #: The event loop, its thread and the connections: started with the
        #: first server to connect (:meth:`_running`), not with the actor.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._connections: McpConnections | None = None

    # -- lifecycle -------------------------------------------------------------

    def on_start(self) -> None:
        self._carry_out(self._core.start())
        self._tool_set.replace((), starting=self._core.starting())

    def _running(self) -> tuple[asyncio.AbstractEventLoop, McpConnections]:
        """The event loop and the connections, started on first use (the
        actor's thread): a session whose client never adds a server (the sdk
        profile starts this manager in case it does) loads neither asyncio
        nor the MCP client (start-up, DEC-CLI-3)."""
        if self._loop is not None and self._connections is not None:
            return self._loop, self._connections
        import asyncio  # noqa: PLC0415 - see the docstring

        from agentx.mcp.client import ConnectionsStop, McpConnections  # noqa: PLC0415

        ref = self.actor_ref
        loop = asyncio.new_event_loop()
        connections = McpConnections(
            cwd=self._cwd,
            redact=self._redact,
            on_connected=lambda name, generation, info, tools: _tell(
                ref,
                ServerConnected(name=name, generation=generation, server_info=info, tools=tools),
            ),
            on_failed=lambda name, generation, error: _tell(
                ref, ServerFailed(name=name, generation=generation, error=error)
            ),
            connect_timeout=self._connect_timeout,
            sdk=self._sdk,
        )
        self._closer = ConnectionsStop(connections, loop)
        self._children.add(self._closer)
        thread = threading.Thread(target=loop.run_forever, name="agentx-mcp-loop", daemon=True)
        self._loop, self._thread, self._connections = loop, thread, connections
        thread.start()
        return loop, connections

    def on_stop(self) -> None:
        loop, thread, connections = self._loop, self._thread, self._connections
        if loop is None or thread is None or connections is None:
            return  # no server was ever asked for: no loop runs
        import asyncio  # noqa: PLC0415 - loaded with the loop (_running)

        closing = asyncio.run_coroutine_threadsafe(connections.close(), loop)
        try:
            closing.result(timeout=CLOSE_TIMEOUT)
        except TimeoutError:
            logger.warning("MCP transports did not close within {} s", CLOSE_TIMEOUT)
        if self._closer is not None:
            self._children.discard(self._closer)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_TIMEOUT)
        if not thread.is_alive():
            loop.close()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, ServerConnected):
            if self._core.connected(
                message.name,
                message.generation,
                server_info=self._server_info(message.server_info),
                tools=accept_tools(message.name, message.tools, self._redact),
            ):
                self._publish()
        elif isinstance(message, ServerFailed):
            if self._core.failed(message.name, message.generation, message.error):
                self._publish()
        else:
            raise TypeError(f"McpManagerActor got an unknown message {type(message).__name__}")
        return None

    def _server_info(self, info: Mapping[str, Any] | None) -> FrozenDict | None:
        """The server's self-description, redacted: it reaches ``mcp_status``."""
        if info is None:
            return None
        return FrozenDict((key, self._redact(str(value))) for key, value in info.items())

    # -- operations (called through the proxy) -----------------------------------

    def status(self) -> FrozenDict:
        """``mcp_status``: the live statuses."""
        return self._core.status_payload()

    def plan_set_servers(self, servers: Mapping[str, Any]) -> SetServersPlan:
        """Scenario 8, step 1: the response, decided before anything connects."""
        return self._core.plan_set_servers(servers)

    def apply(self, plan: SetServersPlan) -> None:
        """Scenario 8, step 2: after the response was enqueued."""
        self._carry_out(self._core.apply(plan))
        self._publish()

    def add_initial(self, servers: Mapping[str, ServerConfig]) -> None:
        """The sdk profile's ``initialize`` servers: first attempts (DEC-SET-2)."""
        self._carry_out(self._core.add_initial(servers, DYNAMIC))
        self._publish()

    def reconnect(self, name: str) -> str | None:
        return self._outcome(self._core.reconnect(name))

    def toggle(self, name: str, enabled: bool) -> str | None:
        return self._outcome(self._core.toggle(name, enabled))

    # -- internals -----------------------------------------------------------------

    def _outcome(self, actions: tuple[Action, ...] | str) -> str | None:
        if isinstance(actions, str):
            return actions
        self._carry_out(actions)
        self._publish()
        return None

    def _carry_out(self, actions: tuple[Action, ...]) -> None:
        if not actions:
            return
        loop, connections = self._running()
        for action in actions:
            if isinstance(action, Connect):
                loop.call_soon_threadsafe(
                    connections.connect, action.name, action.generation, action.config
                )
            else:
                loop.call_soon_threadsafe(connections.disconnect, action.name)

    def _publish(self) -> None:
        """Hand the engine the tools of the servers connected now, and whether
        a first attempt is still under way (DEC-SET-2); report the change."""
        self._tool_set.replace(
            tuple(
                McpTool(info=info, call=self._call, redact=self._redact, media=self._media)
                for info in self._core.tools()
            ),
            starting=self._core.starting(),
        )
        self._on_change(self._core.status_payload())

    def _call(
        self, server: str, tool: str, arguments: Mapping[str, Any]
    ) -> Future[Mapping[str, Any]]:
        """Start one call on the loop (any thread); cancelling the future cancels
        it. A tool exists only once its server connected, so the loop runs."""
        import asyncio  # noqa: PLC0415 - loaded with the loop (_running)

        from agentx.mcp.client import McpCallError  # noqa: PLC0415

        loop, connections = self._loop, self._connections
        assert loop is not None and connections is not None
        call = connections.call(server, tool, arguments, self._call_timeout)
        try:
            return asyncio.run_coroutine_threadsafe(call, loop)
        except RuntimeError:  # the loop already stopped: the session is ending
            call.close()
            closed: Future[Mapping[str, Any]] = Future()
            closed.set_exception(McpCallError(f"MCP server {server} is shutting down"))
            return closed


def _tell(ref: pykka.ActorRef[McpManagerActor], event: ServerConnected | ServerFailed) -> None:
    """Report a connection event; once the actor is stopping, events no longer matter."""
    try:
        ref.tell(event)
    except pykka.ActorDeadError:
        return


class McpHandle:
    """What the host wires in: the live tool set, the media ledger and the
    control operations (``mcp_status``; extended: ``mcp_set_servers``,
    ``mcp_reconnect``, ``mcp_toggle``). The manager never calls back into
    the dispatcher, so answering through the proxy cannot deadlock."""

    def __init__(
        self,
        *,
        configured: Mapping[str, ServerConfig],
        scopes: Mapping[str, str],
        literals: frozenset[str],
        cwd: Path,
        media: McpMedia | None,
        children: ChildProcesses,
        call_timeout: float | None = None,
        supervision: ExitLatch | None = None,
        ask_seconds: float = ASK_SECONDS,
        sdk: SdkMessenger | None = None,
        context_window: int = DEFAULT_CONTEXT_WINDOW,
    ) -> None:
        from agentx.messages.mcp.search import search_mode  # noqa: PLC0415
        from agentx.providers.errors import Redactor  # noqa: PLC0415 (only with MCP)

        self._supervision = supervision
        self._ask_seconds = ask_seconds
        connect_timeout = timeout_seconds(os.environ.get("MCP_TIMEOUT"), DEFAULT_CONNECT_SECONDS)
        if call_timeout is None:
            call_timeout = timeout_seconds(os.environ.get("MCP_TOOL_TIMEOUT"), DEFAULT_CALL_SECONDS)
        self.tools = McpToolSet(
            ready_timeout=connect_timeout + READY_GRACE,
            # DEC-SET-2: Claude Code's ENABLE_TOOL_SEARCH (messages/mcp/search.py).
            search=search_mode(os.environ.get("ENABLE_TOOL_SEARCH")),
            context_window=context_window,
        )
        self.media = media
        self.ref: pykka.ActorRef[McpManagerActor] = McpManagerActor.start(
            configured=configured,
            known_literals=literals,
            scopes=scopes,
            redact=Redactor(tuple(literals)),
            cwd=cwd,
            tool_set=self.tools,
            media=media,
            on_change=_log_change,
            call_timeout=call_timeout,
            connect_timeout=connect_timeout,
            children=children,
            supervision=supervision,
            sdk=sdk,
        )
        self._proxy = self.ref.proxy()

    def _within(self, future: pykka.Future[Any]) -> Any:
        """The manager's answer, or :class:`~agentx.actors.base.AskExpired`
        once the expiry was reported (module doc)."""
        return answer_within(
            future,
            self._ask_seconds,
            where=McpManagerActor.__name__,
            supervision=self._supervision,
        )

    def status(self) -> FrozenDict:
        payload: FrozenDict = self._within(self._proxy.status())
        return payload

    def set_servers(self, servers: Mapping[str, Any]) -> tuple[FrozenDict, Callable[[], None]]:
        """Scenario 8: the response now; connecting is the returned step."""
        plan: SetServersPlan = self._within(self._proxy.plan_set_servers(servers))

        def connect() -> None:
            self._proxy.apply(plan)

        return plan.response, connect

    def add_initial(self, servers: Mapping[str, ServerConfig]) -> None:
        """``initialize``'s servers (DEC-PROFILE-2): registered and connecting
        when this returns; nothing here waits for the client."""
        self._within(self._proxy.add_initial(servers))

    def reconnect(self, name: str) -> str | None:
        error: str | None = self._within(self._proxy.reconnect(name))
        return error

    def toggle(self, name: str, enabled: bool) -> str | None:
        error: str | None = self._within(self._proxy.toggle(name, enabled))
        return error


class BrokerMessenger:
    """DEC-PROFILE-2: ``mcp_message`` requests through the control broker
    (the sdk profile's :class:`~agentx.mcp.sdk_channel.SdkMessenger`); the
    answer's payload is checked before it resolves (WIRE-009)."""

    def __init__(self, broker: ControlBroker) -> None:
        self._broker = broker

    def send(self, request: FrozenDict, on_done: OnDone) -> str:
        def settle(settlement: Settlement) -> None:
            if isinstance(settlement, Resolved) and isinstance(settlement.value, FrozenDict):
                on_done(settlement.value, None)
            else:
                on_done(None, getattr(settlement, "message", "no answer"))

        # The answer's schema loads with the first SDK server's first message (DEC-CLI-3).
        from agentx.messages.mcp.sdk import mcp_response_schema  # noqa: PLC0415

        pending = self._broker.ask(request, mcp_response_schema, settle)
        return pending.request_id

    def abort(self, request_id: str) -> None:
        if request_id:
            self._broker.abort(request_id)


def _log_change(payload: FrozenDict) -> None:
    for entry in payload["mcpServers"]:
        logger.debug("MCP server {}: {}", entry["name"], entry["status"])
