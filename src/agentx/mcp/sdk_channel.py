"""An SDK in-process MCP server as an ``mcp`` transport (DEC-PROFILE-2).

The ``mcp`` package's client speaks to the server through a pair of
streams; :func:`sdk_transport` carries each message the client writes to
the SDK in one ``mcp_message`` control request (the messenger) and feeds
the answer of each request back as the server's response. So the
handshake (``initialize``, ``notifications/initialized``), ``tools/list``
and ``tools/call`` are the package's own, with its own checks, and every
deadline the caller puts around them (the connect and call timeouts of
:class:`~agentx.mcp.client.McpConnections`) also aborts the control request
still waiting, which sends the client a ``control_cancel_request``.

Messages are handed to the messenger in the order the client writes them,
on the loop thread, so ``notifications/initialized`` precedes
``tools/list``; the answers are awaited concurrently. The answer to a
request is made one well-formed JSON-RPC response for that id
(:func:`~agentx.messages.mcp.sdk.jsonrpc_reply`); an answer to a
notification is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any, Final, Protocol

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

from agentx.messages.frozen import FrozenDict, thaw
from agentx.messages.mcp.sdk import jsonrpc_error, jsonrpc_reply, mcp_message_request

#: Messages in flight each way (the client blocks past it: bounded memory).
STREAM_BUFFER: Final = 64

#: ``on_done(response, error)``: exactly one of them is None; from any thread.
OnDone = Callable[[FrozenDict | None, str | None], None]


class SdkMessenger(Protocol):
    """Sends ``mcp_message`` requests to the client (the control broker)."""

    def send(self, request: FrozenDict, on_done: OnDone) -> str:
        """Send ``request``; returns its request id. Raises when it cannot be sent."""
        ...

    def abort(self, request_id: str) -> None:
        """Give up a request: the client is told (``control_cancel_request``)."""
        ...


@asynccontextmanager
async def sdk_transport(server: str, messenger: SdkMessenger) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of one SDK server for ``mcp.Client``."""
    loop = asyncio.get_running_loop()
    inbound_send, inbound_recv = anyio.create_memory_object_stream[SessionMessage | Exception](
        STREAM_BUFFER
    )
    outbound_send, outbound_recv = anyio.create_memory_object_stream[SessionMessage](STREAM_BUFFER)

    async def answer(request_id: Any, waiting: asyncio.Future[FrozenDict], rid: str) -> None:
        try:
            response = await waiting
        except asyncio.CancelledError:
            # A deadline or a disconnect: the client is told, without waiting
            # here (the cancelled scope would cancel any await).
            loop.run_in_executor(None, messenger.abort, rid)
            raise
        except _Failed as exc:
            response = jsonrpc_error(request_id, f"SDK MCP server {server}: {exc}")
        else:
            response = jsonrpc_reply(request_id, response, server)
        message = types.jsonrpc_message_adapter.validate_python(thaw(response))
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await inbound_send.send(SessionMessage(message))

    async def pump(group: anyio.abc.TaskGroup) -> None:
        async for item in outbound_recv:
            raw: dict[str, Any] = item.message.model_dump(
                by_alias=True, mode="json", exclude_unset=True
            )
            request = mcp_message_request(server, raw)
            if "method" not in raw or "id" not in raw:
                # A notification (or a reply): the client's acknowledgement is dropped.
                messenger.send(request, _ignore)
                continue
            waiting: asyncio.Future[FrozenDict] = loop.create_future()
            try:
                rid = messenger.send(request, _settler(loop, waiting))
            except Exception as exc:
                waiting.set_exception(_Failed(f"cannot be reached ({type(exc).__name__})"))
                rid = ""
            group.start_soon(answer, raw["id"], waiting, rid)

    async with anyio.create_task_group() as group, inbound_send, outbound_recv:
        group.start_soon(pump, group)
        try:
            yield inbound_recv, outbound_send
        finally:
            group.cancel_scope.cancel()


class _Failed(Exception):
    """The client did not answer a request (error response, EOF, shutdown)."""


def _ignore(response: FrozenDict | None, error: str | None) -> None:
    return None


def _settler(loop: asyncio.AbstractEventLoop, waiting: asyncio.Future[FrozenDict]) -> OnDone:
    def settle(response: FrozenDict | None, error: str | None) -> None:
        def apply() -> None:
            if waiting.done():
                return
            if response is not None:
                waiting.set_result(response)
            else:
                waiting.set_exception(_Failed(error or "no answer"))

        with suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(apply)

    return settle
