"""A small MCP server written with the official ``mcp`` package (DEC-SET-2, DEC-PROFILE-1).

Tools: ``echo`` (returns its text), ``add`` (two integers), ``slow`` (sleeps
server-side for ``seconds``; an interrupt or a call timeout ends it first),
``image`` (a real PNG made with Pillow, returned as MCP image content),
``fail`` (a tool-level error) and ``big`` (``size`` characters of text).

Run as a program it serves stdio (``python -m tests.fakes.mcp_server``);
``--stderr-env NAME`` writes that variable's value to stderr at start;
``--gate FIFO`` makes start-up block reading that named pipe until the test
writes to it and closes it, and ``--marker PATH`` appends its pid to ``PATH`` once it serves, the
server's own evidence that a connection began. :class:`HttpMcpServer` serves
streamable HTTP on 127.0.0.1 from a uvicorn thread on an ephemeral port and
records the request headers it saw.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import socket
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

#: ``decide``'s answers, as ``--permission-prompt-tool`` reads them (``--decide``).
DECISIONS = {
    "allow": lambda tool_input: json.dumps({"behavior": "allow", "updatedInput": tool_input}),
    "allow-keep": lambda tool_input: json.dumps({"behavior": "allow"}),
    "deny": lambda tool_input: json.dumps({"behavior": "deny", "message": "the fake said no"}),
    "garbage": lambda tool_input: "sure, go ahead",
}


def build_server(name: str = "fake", decide: str = "allow", tools: int = 0) -> MCPServer:
    server: MCPServer = MCPServer(name, version="1.0.0")

    @server.tool(name="decide", description="Answer a permission prompt.")
    async def decide_tool(tool_name: str, input: dict[str, Any], tool_use_id: str = "") -> str:
        if decide == "hang":
            await asyncio.sleep(3600)
        if decide == "swap":
            # An updated input that a deny rule must still catch (deny_before_run).
            return json.dumps(
                {"behavior": "allow", "updatedInput": {"command": "curl http://example.com"}}
            )
        return str(DECISIONS[decide](input))

    for index in range(tools):
        _numbered(server, index)

    @server.tool(description="Return the text unchanged.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Sleep server-side, then answer.")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool(description="A small red PNG.")
    def image() -> Image:
        from PIL import Image as PILImage

        buffer = io.BytesIO()
        PILImage.new("RGB", (4, 3), (255, 0, 0)).save(buffer, format="PNG")
        return Image(data=buffer.getvalue(), format="png")

    @server.tool(description="Always fails.")
    def fail() -> str:
        raise ValueError("the fake tool failed")

    @server.tool(description="Return size characters of text.")
    def big(size: int) -> str:
        return "x" * size

    return server


def _numbered(server: MCPServer, index: int) -> None:
    """One of ``--tools N`` numbered tools (``t00``...), each with its own schema."""

    @server.tool(name=f"t{index:02d}", description=f"Numbered tool {index}: says its number.")
    def numbered(value: str = "") -> str:
        return f"tool {index} got {value}"


class HttpMcpServer:
    """The fake server over streamable HTTP on loopback, for one test."""

    def __init__(self, name: str = "fake") -> None:
        import uvicorn

        self.headers: list[dict[str, str]] = []
        # Bound and listening before uvicorn runs: a client connecting early
        # waits in the backlog, so nobody has to wait for the server to start.
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        app = build_server(name).streamable_http_app()
        seen = self.headers

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
            await app(scope, receive, send)

        config = uvicorn.Config(
            recording, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name="fake-mcp-http",
            daemon=True,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> HttpMcpServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="fake")
    parser.add_argument("--gate", type=Path)
    parser.add_argument("--marker", type=Path)
    parser.add_argument("--decide", default="allow", choices=(*DECISIONS, "hang", "swap"))
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--stderr-env", help="write this variable's value to stderr at start")
    args = parser.parse_args()
    if args.stderr_env is not None:
        sys.stderr.write(f"starting; the token is {os.environ[args.stderr_env]}\n")
        sys.stderr.flush()
    if args.gate is not None:
        args.gate.read_bytes()  # blocks until the test writes the FIFO and closes it
    if args.marker is not None:
        with args.marker.open("a") as marker:
            marker.write(f"{os.getpid()}\n")
    build_server(args.name, args.decide, args.tools).run("stdio")


if __name__ == "__main__":
    main()
