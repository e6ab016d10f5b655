"""The ``Agent`` tool as a session offers it (DEC-TURN-3; DEC-CLI-3 start-up).

Every model request offers the tool, and the context estimate counts its
spec, from the first turn on; few turns call it. :class:`AgentOffer` is the
tool the engine holds: its name, aliases and spec (the definitions in force,
listed for the model) without :mod:`agentx.agents.runner` and the subagent
loop it brings. Those load, and the
:class:`~agentx.agents.runner.AgentTool` is built over the same definitions
and spec, when the tool is first summarized or called. The definitions
module loads only when some agent is defined besides the built-in one (an
agent file, ``--agents``, the ``sdk`` profile's ``agents``); the built-in
``general-purpose`` agent alone is listed from static data
(:data:`~agentx.messages.agents.tools.GENERAL_PURPOSE_LISTED`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from agentx.messages.agents.tools import (
    AGENT_TOOL,
    AGENT_TOOL_NAMES,
    GENERAL_PURPOSE_LISTED,
    INPUT_SCHEMA,
    tool_description,
)
from agentx.messages.frozen import freeze
from agentx.once import Once
from agentx.providers.base import ToolSpec

if TYPE_CHECKING:
    from agentx.agents.runner import AgentTool
    from agentx.messages.agents.definitions import AgentDefinition
    from agentx.messages.frozen import FrozenDict
    from agentx.turns.cancel import CancelScope
    from agentx.turns.results import TurnState

    #: Builds the tool over the definitions in force and the spec offered.
    Build = Callable[[Mapping[str, AgentDefinition], ToolSpec], AgentTool]

#: The aliases the tool also answers to.
ALIASES: Final = tuple(sorted(AGENT_TOOL_NAMES - {AGENT_TOOL}))


def _in_force(layers: tuple[tuple[AgentDefinition, ...], ...]) -> dict[str, AgentDefinition]:
    """The definitions in force: the built-in one, then ``layers`` from the
    lowest precedence to the highest."""
    from agentx.messages.agents.definitions import GENERAL_PURPOSE, combine  # noqa: PLC0415

    return combine(((GENERAL_PURPOSE,), *layers))


class AgentOffer:
    """The session's ``Agent`` tool until it is used (see the module docstring)."""

    name: Final = AGENT_TOOL
    aliases: Final = ALIASES
    #: Starting a subagent touches nothing; each of its tool uses is asked
    #: for on its own (DEC-PERM-MODE).
    read_only: Final = True

    def __init__(self, layers: tuple[tuple[AgentDefinition, ...], ...], build: Build) -> None:
        """``layers``: the defined agents beyond the built-in one, from the
        lowest precedence to the highest (files, ``--agents``, the ``sdk``
        profile's)."""
        defined = _in_force(layers) if any(layers) else None
        listed = defined.values() if defined else (GENERAL_PURPOSE_LISTED,)
        self.spec = ToolSpec(
            name=AGENT_TOOL,
            description=tool_description(listed),
            input_schema=freeze(INPUT_SCHEMA),
        )
        self._tool = Once(lambda: build(defined or _in_force(layers), self.spec))

    @property
    def loaded(self) -> bool:
        """Whether the runner has been loaded and the tool built."""
        return self._tool.peek() is not None

    def load(self) -> AgentTool:
        """The tool itself, built on the first call, once."""
        return self._tool.get()

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        return self.load().summarize(tool_input)

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        return self.load().execute(tool_input, cancel, tool_use_id=tool_use_id)

    def run_in_turn(
        self, tool_input: FrozenDict, scope: CancelScope, *, tool_use_id: str, turn: TurnState
    ) -> tuple[str, bool]:
        return self.load().run_in_turn(tool_input, scope, tool_use_id=tool_use_id, turn=turn)

    def notices(self, turn: TurnState, scope: CancelScope, *, wait: bool) -> list[str]:
        """The finished background subagents' notifications (none before
        the tool was first called: nothing can have started)."""
        tool = self._tool.peek()
        return [] if tool is None else tool.notices(turn, scope, wait=wait)

    def stop_background(self) -> None:
        """Stop every background subagent still running (an interrupt)."""
        tool = self._tool.peek()
        if tool is not None:
            tool.stop_background()


__all__ = ["ALIASES", "AgentOffer"]
