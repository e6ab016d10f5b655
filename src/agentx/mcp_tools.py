"""MCP tools as the turn engine's tools (issue 10).

:class:`McpTool` is a :class:`~agentx.turns.ToolRunner` named
``mcp__<server>__<tool>`` with the server's JSON Schema; it goes through the
same permission path as every built-in tool (rules may name ``mcp__server``
or ``mcp__server__tool``). A call is handed to the MCP manager's event loop
as a future; an interrupt cancels that future, which cancels the call on the
loop (the server is sent a cancellation), and the turn ends promptly.

:class:`McpToolSet` is the live list the engine reads before each model call:
servers connect after ``system/init`` and may come and go.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future
from typing import Any

from agentx.cancel import CancelScope
from agentx.mcp_client import McpCallError
from agentx.messages.frozen import FrozenDict, thaw
from agentx.messages.mcp_results import ImagePart, tool_output
from agentx.messages.mcp_status import ToolInfo
from agentx.providers.base import Cancelled, ToolSpec
from agentx.tools.base import output

#: Start one call: (server, tool, arguments) -> the ``CallToolResult`` JSON.
CallTool = Callable[[str, str, Mapping[str, Any]], "Future[Mapping[str, Any]]"]


class McpTool:
    """One server tool offered to the model."""

    __slots__ = ("_call", "_info", "_redact", "_spec")

    def __init__(self, *, info: ToolInfo, call: CallTool, redact: Callable[[str], str]) -> None:
        self._info = info
        self._call = call
        self._redact = redact
        self._spec = ToolSpec(
            name=info.full_name, description=info.description, input_schema=info.input_schema
        )

    @property
    def name(self) -> str:
        return self._info.full_name

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        """WIRE-PERM-003: names only; the arguments may hold anything."""
        return f"MCP tool {self._info.name} of server {self._info.server}"

    def execute(self, tool_input: FrozenDict, cancel: CancelScope) -> tuple[str, bool]:
        text, is_error, _ = self.run(tool_input, cancel)
        return text, is_error

    def run(
        self, tool_input: FrozenDict, cancel: CancelScope
    ) -> tuple[str, bool, tuple[ImagePart, ...]]:
        """The capped text, the error flag and the images for the provider.

        Raises :class:`Cancelled` when ``cancel`` fires during the call.
        """
        future = self._call(self._info.server, self._info.name, thaw(tool_input))
        cancel.on_cancel(lambda: _cancel(future))
        try:
            result = future.result()
        except CancelledError:
            raise Cancelled from None
        except McpCallError as exc:
            return output(str(exc), is_error=True).content, True, ()
        mapped = tool_output(result, self._redact)
        capped = output(mapped.text, is_error=mapped.is_error)
        return capped.content, capped.is_error, mapped.images


class McpToolSet:
    """The current MCP tools, replaced as a whole (read from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tools: tuple[McpTool, ...] = ()

    def replace(self, tools: tuple[McpTool, ...]) -> None:
        with self._lock:
            self._tools = tools

    def __call__(self) -> tuple[McpTool, ...]:
        with self._lock:
            return self._tools


def _cancel(future: Future[Mapping[str, Any]]) -> None:
    future.cancel()
