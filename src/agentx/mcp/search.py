"""``ToolSearch``: deferred MCP tool schemas loaded on demand (DEC-SET-2; the
rule and the query language are :mod:`agentx.messages.mcp.search`).

:class:`ToolSearchTool` is offered in the deferred tools' place; a call
searches every MCP tool currently connected, marks the found ones loaded in
the :class:`~agentx.mcp.tools.McpToolSet` (so the next model request offers
them, with their full schemas) and answers with those schemas. It reads
nothing but the tool list, so it needs no permission prompt (``read_only``,
as Claude Code's ``ToolSearch``); a deny rule can still refuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.search import (
    INPUT_SCHEMA,
    TOOL_NAME,
    description,
    parse_input,
    result_text,
    search,
)
from agentx.providers.base import ToolSpec
from agentx.tools.base import output
from agentx.turns.cancel import CancelScope

if TYPE_CHECKING:
    from agentx.mcp.tools import McpTool


class ToolSearchTool:
    """The ``ToolSearch`` tool over the deferred MCP tools."""

    #: DEC-PERM-MODE: it only reads the tool list (no permission prompt).
    read_only = True

    def __init__(
        self, deferred: Sequence[McpTool], load: Callable[[tuple[str, ...]], None]
    ) -> None:
        self._deferred = tuple(deferred)
        self._load = load
        self._spec = ToolSpec(
            name=TOOL_NAME,
            description=description([t.name for t in self._deferred]),
            input_schema=INPUT_SCHEMA,
        )

    @property
    def name(self) -> str:
        return TOOL_NAME

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        return "Search the deferred MCP tools"

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str | None = None
    ) -> tuple[str, bool]:
        asked = parse_input(tool_input)
        if isinstance(asked, str):
            return output(f"ToolSearch: {asked}", is_error=True).content, True
        entries = [(t.name, t.spec.description) for t in self._deferred]
        names = search(asked.query, entries, asked.max_results)
        self._load(names)
        chosen = {t.name: t for t in self._deferred}
        found = [
            (name, chosen[name].spec.description, chosen[name].spec.input_schema) for name in names
        ]
        return output(result_text(found, asked.query)).content, False
