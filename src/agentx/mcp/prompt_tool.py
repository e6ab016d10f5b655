"""``--permission-prompt-tool mcp__<server>__<tool>``: permission asks
answered by an MCP tool, as Claude Code does (WIRE-PERM-002, DEC-PERM-MODE).

Where an ask would go to the client as ``can_use_tool``, the arbiter calls
the tool with ``{"tool_name", "input", "tool_use_id"}`` instead and reads
its text answer (:func:`~agentx.messages.mcp.sdk.prompt_tool_decision`).
The call is bounded by the MCP call timeout (``MCP_TOOL_TIMEOUT``); a tool
that is not connected, fails, times out or answers anything but a decision
denies (fail closed). An allowed input, updated or not, still meets every
deny rule right before the tool runs (``deny_before_run``), as every input
does. ``stdio`` (the default) keeps ``can_use_tool``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future
from typing import Any

from agentx.mcp.tools import McpToolSet
from agentx.messages.mcp.sdk import PromptAllow, prompt_tool_decision, prompt_tool_input
from agentx.messages.permission_wire import PermissionAllow, PermissionDeny, PermissionResult
from agentx.turns.contracts import PermissionAsk

Done = Callable[[PermissionResult], None]


class McpPromptTool:
    """Starts one prompt-tool call per ask; safe from any thread."""

    def __init__(self, name: str, tools: McpToolSet | None) -> None:
        self.name = name
        self._tools = tools

    def start(self, ask: PermissionAsk, done: Done) -> Callable[[], None]:
        """Call the tool for ``ask``; ``done`` gets the decision once (on the
        MCP loop's thread, or at once). Returns the call's cancel."""
        offered = self._tools.all() if self._tools is not None else ()
        tool = next((t for t in offered if t.name == self.name), None)
        if tool is None:
            done(PermissionDeny(message=f"the permission prompt tool {self.name} is not available"))
            return _nothing
        arguments = prompt_tool_input(ask.tool_name, ask.tool_input, ask.tool_use_id)
        future = tool.start(arguments)

        def finished(call: Future[Mapping[str, Any]]) -> None:
            try:
                text, is_error = tool.output(call.result())
            except CancelledError:
                done(
                    PermissionDeny(message=f"the permission prompt tool {self.name} was cancelled")
                )
                return
            except Exception as exc:  # McpCallError: not connected, timed out, failed
                done(PermissionDeny(message=str(exc)))
                return
            decision = prompt_tool_decision(text, is_error, ask.tool_input)
            if isinstance(decision, PromptAllow):
                done(PermissionAllow(updated_input=decision.updated_input))
            else:
                done(PermissionDeny(message=decision.message))

        future.add_done_callback(finished)
        return lambda: _cancel(future)


def _cancel(future: Future[Any]) -> None:
    future.cancel()


def _nothing() -> None:
    return None
