"""The built-in tool set and the ``--tools`` selection (DEC-TURN-3, DEC-CLI-5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from agentx.tools.base import Tool
from agentx.tools.bash import BashTool
from agentx.tools.files import EditTool, ReadTool, WriteTool
from agentx.tools.search import GlobTool, GrepTool
from agentx.tools.webfetch import WebFetchTool

#: Every built-in tool, in the order ``system/init`` lists them.
BUILTIN_TOOLS: Final[tuple[Tool, ...]] = (
    BashTool(),
    GlobTool(),
    GrepTool(),
    ReadTool(),
    EditTool(),
    WriteTool(),
    WebFetchTool(),
)
BUILTIN_NAMES: Final = tuple(tool.name for tool in BUILTIN_TOOLS)


class UnknownToolError(ValueError):
    """A ``--tools`` name that is no built-in tool (a usage error, exit 2)."""


def builtin_tools(names: Sequence[str] | None = None) -> tuple[Tool, ...]:
    """The tools offered to the model: all by default, else those named (DEC-CLI-5).

    An empty ``names`` offers none; ``["default"]`` (Claude Code's spelling,
    which the Python Agent SDK passes for its tools preset) offers all. The
    result keeps the built-in order and has no duplicates; an unknown name
    raises :class:`UnknownToolError`.
    """
    if names is None or tuple(names) == ("default",):
        return BUILTIN_TOOLS
    unknown = sorted(set(names) - set(BUILTIN_NAMES))
    if unknown:
        raise UnknownToolError(
            f"unknown tool {unknown[0]!r} (built-in tools: {', '.join(BUILTIN_NAMES)})"
        )
    wanted = set(names)
    return tuple(tool for tool in BUILTIN_TOOLS if tool.name in wanted)
