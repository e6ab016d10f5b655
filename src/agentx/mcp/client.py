"""The async MCP client side (DEC-SET-2): one task per server on one event loop.

:class:`McpConnections` lives on the event loop the MCP manager actor owns
(it starts no threads and is touched only from that loop). Each server runs
in its own task: open the transport with the official ``mcp`` package
(``Client`` over ``StdioServerParameters`` or streamable HTTP), list its
tools, report, then hold the connection until it is disconnected. The
``mcp`` package (pydantic, starlette, ...) is imported only when a server is
actually connected, so a session without MCP servers never loads it.

Connecting and every call are bounded in time; every error text that can
reach a record is redacted with the credential union first.

Stdio servers: the ``mcp`` package's ``stdio_client`` starts each server in
a new session (``start_new_session=True``, so its own process group) and,
when its context exits, closes the server's stdin, then SIGTERMs and finally
SIGKILLs the whole group, each step bounded. That exit is the supported way
to stop a server, so the session's child registry holds a
:class:`ConnectionsStop` that runs :meth:`McpConnections.close` on the loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from agentx.diagnostics import logger
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.mcp.config import SDK_NEEDS_PROFILE, HttpServer, SdkServer, ServerConfig

if TYPE_CHECKING:
    from agentx.mcp.sdk_channel import SdkMessenger

#: The JSON-RPC error code of a closed connection (``mcp_types.CONNECTION_CLOSED``).
CONNECTION_CLOSED: Final = -32000
#: A listing that never ends cannot hang a connection.
MAX_TOOL_PAGES: Final = 16

Connected = Callable[[str, int, Mapping[str, Any] | None, tuple[Mapping[str, Any], ...]], None]
Failed = Callable[[str, int, str], None]


class McpCallError(Exception):
    """A call that produced no result (no connection, timeout, protocol error).

    The message is credential-free and names the server and the tool.
    """


class McpConnections:
    """Every server's connection task on one event loop (loop thread only)."""

    def __init__(
        self,
        *,
        cwd: Path,
        redact: Callable[[str], str],
        on_connected: Connected,
        on_failed: Failed,
        connect_timeout: float,
        sdk: SdkMessenger | None = None,
    ) -> None:
        self._cwd = cwd
        #: DEC-PROFILE-2: ``mcp_message`` to the client (the sdk profile only).
        self._sdk = sdk
        self._redact = redact
        self._on_connected = on_connected
        self._on_failed = on_failed
        self._connect_timeout = connect_timeout
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: Cancelled tasks still closing their transport (``close`` waits for them).
        self._closing: set[asyncio.Task[None]] = set()
        #: Connected servers: name -> (generation, client).
        self._clients: dict[str, tuple[int, Any]] = {}
        self._closed = False

    def connect(self, name: str, generation: int, config: ServerConfig) -> None:
        """Start (or restart) ``name``'s connection task; refused once closed."""
        self.disconnect(name)
        if self._closed:
            self._on_failed(name, generation, "the session is shutting down")
            return
        self._tasks[name] = asyncio.get_running_loop().create_task(
            self._serve(name, generation, config), name=f"mcp-{name}"
        )

    def disconnect(self, name: str) -> None:
        """Cancel ``name``'s task; its transport closes and a subprocess is reaped."""
        self._clients.pop(name, None)
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Cancel every server task and wait until each has closed its transport
        (a stdio server's process group is then gone); no server starts after."""
        self._closed = True
        for name in list(self._tasks):
            self.disconnect(name)
        await asyncio.gather(*self._closing, return_exceptions=True)

    async def call(
        self, server: str, tool: str, arguments: Mapping[str, Any], timeout: float
    ) -> Mapping[str, Any]:
        """``tools/call`` on a connected server; the ``CallToolResult`` as wire JSON.

        Raises :class:`McpCallError` when the server is not connected, the
        call times out, or the server answers with a protocol error.
        """
        connected = self._clients.get(server)
        if connected is None:
            raise McpCallError(f"MCP server {server} is not connected")
        generation, client = connected
        try:
            async with asyncio.timeout(timeout):
                result = await client.call_tool(tool, dict(arguments))
        except TimeoutError:
            raise McpCallError(
                f"MCP tool {tool} of server {server} timed out after {timeout:g} s"
            ) from None
        except Exception as exc:
            if getattr(exc, "code", None) == CONNECTION_CLOSED:
                # The server went away mid-session (crashed, exited): failed.
                self.disconnect(server)
                self._on_failed(server, generation, "connection closed")
            raise McpCallError(
                f"MCP tool {tool} of server {server} failed: {self._describe(exc)}"
            ) from None
        dumped: Mapping[str, Any] = freeze(
            result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        return dumped

    async def _serve(self, name: str, generation: int, config: ServerConfig) -> None:
        try:
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(self._connect_timeout):
                    client = await stack.enter_async_context(
                        _open(name, config, self._cwd, self._sdk)
                    )
                    tools = await _list_tools(client)
                info = client.server_info
                self._clients[name] = (generation, client)
                self._on_connected(
                    name,
                    generation,
                    None if info is None else FrozenDict(name=info.name, version=info.version),
                    tools,
                )
                await asyncio.Event().wait()  # held until disconnect cancels this task
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self._on_failed(
                name, generation, f"connection timed out after {self._connect_timeout:g} s"
            )
        except Exception as exc:  # an ExceptionGroup from the transport's task group, too
            logger.debug("MCP server {} failed", name)
            self._on_failed(name, generation, self._describe(exc))
        finally:
            if self._tasks.get(name) is asyncio.current_task():
                self._clients.pop(name, None)

    def _describe(self, exc: BaseException) -> str:
        """A short, credential-free error text: the innermost cause's type and message."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        message = str(exc).strip()
        return self._redact(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


class ConnectionsStop:
    """The session registry's handle on every MCP server of one loop
    (:class:`~agentx.tools.process.Stoppable`): safe from any thread."""

    def __init__(self, connections: McpConnections, loop: asyncio.AbstractEventLoop) -> None:
        self._connections = connections
        self._loop = loop
        self._lock = threading.Lock()
        self._closing: concurrent.futures.Future[None] | None = None

    def begin_stop(self) -> None:
        with self._lock:
            if self._closing is not None:
                return
            try:
                self._closing = asyncio.run_coroutine_threadsafe(
                    self._connections.close(), self._loop
                )
            except RuntimeError:  # the loop is closed: its transports already are
                self._closing = concurrent.futures.Future()
                self._closing.set_result(None)

    def wait_stopped(self, timeout: float) -> bool:
        with self._lock:
            closing = self._closing
        if closing is None:
            return True
        try:
            closing.result(timeout)
        except TimeoutError:
            return False
        except Exception:  # a failed close still ended the tasks; the manager logs it
            return True
        return True


@asynccontextmanager
async def _open(
    name: str, config: ServerConfig, cwd: Path, sdk: SdkMessenger | None
) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    if isinstance(config, SdkServer):
        if sdk is None:
            raise RuntimeError(SDK_NEEDS_PROFILE)
        from agentx.mcp.sdk_channel import sdk_transport

        # The initialize handshake, as Claude Code makes it with SDK servers.
        async with Client(sdk_transport(name, sdk), mode="legacy") as client:
            yield client
        return
    if isinstance(config, HttpServer):
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with (
            create_mcp_http_client(headers=dict(config.headers)) as http,
            Client(streamable_http_client(config.url, http_client=http)) as client,
        ):
            yield client
        return
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=dict(config.env), cwd=cwd
    )
    async with _stderr_lines(name) as errlog, Client(stdio_client(params, errlog=errlog)) as client:
        errlog.close()  # the server holds its own copy; ours would keep the pipe open
        yield client


#: A stdio server's stderr line longer than this is cut (bounded memory).
MAX_STDERR_LINE = 64 * 1024


@asynccontextmanager
async def _stderr_lines(name: str) -> AsyncIterator[TextIO]:
    """The stderr a stdio server is started with: a pipe whose lines are
    logged as agentx's own INFO lines (``MCP server 'name': ...``), and so
    pass the diagnostics' redaction of the credential union (DEC-AUTH-3).
    Handed agentx's own stderr, the server (which gets its configured env
    values) could write a secret where nothing redacts it."""
    read_fd, write_fd = os.pipe()
    errlog = os.fdopen(write_fd, "w")
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_STDERR_LINE)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(read_fd)
        errlog.close()
        raise
    task = asyncio.ensure_future(_log_lines(name, reader))
    try:
        yield errlog
    finally:
        errlog.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        transport.close()


async def _log_lines(name: str, reader: asyncio.StreamReader) -> None:
    """Each line of ``reader`` as one INFO line, until end of file."""
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # longer than the bound: asyncio dropped it
            logger.info("MCP server {!r}: a stderr line over {} bytes cut", name, MAX_STDERR_LINE)
            continue
        if not line:
            return
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        logger.info("MCP server {!r}: {}", name, text)


async def _list_tools(client: Any) -> tuple[Mapping[str, Any], ...]:
    """Every page of ``tools/list`` (at most :data:`MAX_TOOL_PAGES`) as frozen wire JSON."""
    tools: list[Mapping[str, Any]] = []
    cursor = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(
            freeze(t.model_dump(by_alias=True, mode="json", exclude_none=True)) for t in page.tools
        )
        cursor = page.next_cursor
        if cursor is None:
            break
    return tuple(tools)
