"""The ``Agent`` tool and a subagent's tools (DEC-TURN-3, DEC-CLI-5).

The tool is offered as ``Agent`` (Claude Code 2.1.332's name); a model that
calls it by its older name ``Task`` is answered the same way, and permission
rules and ``--tools``/``--disallowedTools`` take either spelling.

A subagent's tools are its definition's ``tools`` (every tool when it names
none, or names ``*``) intersected with its parent's tools, minus its
``disallowedTools``: never more than its parent has. Nesting is bounded at
one level, as in Claude Code: a subagent is never offered the ``Agent`` tool,
so a subagent cannot start another one (a call to it is answered as a call
to any tool it lacks: an error result).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from msgspec import Struct

if TYPE_CHECKING:
    from agentx.messages.agents.definitions import AgentDefinition

AGENT_TOOL: Final = "Agent"
#: Every name the tool answers to.
AGENT_TOOL_NAMES: Final = frozenset({AGENT_TOOL, "Task"})
#: How deep subagents nest: the session's agent starts subagents, they start none.
MAX_DEPTH: Final = 1

#: Characters of each agent's description shown in the tool's description.
_SHOWN_DESCRIPTION: Final = 1000

#: The built-in agent every session has (our own wording): its name and
#: description are here, with the tool that lists it, so the tool is offered
#: without the definitions (:data:`agentx.messages.agents.definitions.GENERAL_PURPOSE`).
GENERAL_PURPOSE_NAME: Final = "general-purpose"
GENERAL_PURPOSE_DESCRIPTION: Final = (
    "General-purpose agent for researching questions, searching code and "
    "carrying out multi-step tasks on its own. Use it when a search or a task "
    "may take several rounds of looking and you want only its conclusion back."
)


class Listed(Struct, frozen=True):
    """An agent as the tool's description lists it (an
    :class:`~agentx.messages.agents.definitions.AgentDefinition` is one too)."""

    name: str
    description: str
    tools: tuple[str, ...] | None = None


#: The built-in agent as the description lists it, when no other agent is
#: defined (DEC-CLI-3 start-up: listed without loading the definitions).
GENERAL_PURPOSE_LISTED: Final = Listed(GENERAL_PURPOSE_NAME, GENERAL_PURPOSE_DESCRIPTION)

INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "description": {
            "type": "string",
            "description": "A short (3-5 word) description of the task",
        },
        "prompt": {"type": "string", "description": "The task for the agent to perform"},
        "subagent_type": {
            "type": "string",
            "description": f"The type of agent to use (default: {GENERAL_PURPOSE_NAME})",
        },
        "run_in_background": {
            "type": "boolean",
            "description": (
                "Run the agent in the background; its result reaches you in a "
                "task notification before your turn ends"
            ),
        },
    },
    "required": ["description", "prompt"],
    "additionalProperties": False,
}


def tool_description(agents: Iterable[AgentDefinition | Listed]) -> str:
    """What the model reads about the tool: when to use it and each agent type."""
    lines = [
        "Start a subagent: a separate agent with its own context and tools that "
        "does one task and reports back. Give it a complete, self-contained prompt "
        "(it does not see this conversation); its final message comes back as "
        "this tool's result. Agents you start cannot start agents themselves.",
        "",
        "Agent types (subagent_type):",
    ]
    for agent in agents:
        text = " ".join(agent.description.split())
        if len(text) > _SHOWN_DESCRIPTION:
            text = text[: _SHOWN_DESCRIPTION - 1] + "…"
        tools = "all tools" if agent.tools is None else ", ".join(agent.tools) or "no tools"
        lines.append(f"- {agent.name}: {text} (Tools: {tools})")
    return "\n".join(lines)


class AgentRequest(Struct, frozen=True, kw_only=True):
    """One checked ``Agent`` tool input."""

    description: str
    prompt: str
    subagent_type: str
    run_in_background: bool = False


class AgentInputError(ValueError):
    """An ``Agent`` input the tool answers with an error result."""


def parse_request(tool_input: Mapping[str, Any], agents: Mapping[str, object]) -> AgentRequest:
    """The checked input; raises :class:`AgentInputError` with the sentence
    the model gets back (an unknown type names the known ones)."""
    for member in tool_input:
        if member not in INPUT_SCHEMA["properties"]:
            raise AgentInputError(f"unexpected parameter {member!r}")
    description = tool_input.get("description")
    prompt = tool_input.get("prompt")
    if not isinstance(description, str):
        raise AgentInputError("parameter 'description' must be a string")
    if not isinstance(prompt, str) or not prompt.strip():
        raise AgentInputError("parameter 'prompt' must be a non-empty string")
    kind = tool_input.get("subagent_type")
    if kind is None:
        kind = GENERAL_PURPOSE_NAME
    if not isinstance(kind, str):
        raise AgentInputError("parameter 'subagent_type' must be a string")
    if kind not in agents:
        known = ", ".join(sorted(agents))
        raise AgentInputError(f"unknown subagent_type {kind!r} (available: {known})")
    background = tool_input.get("run_in_background", False)
    if background is None:
        background = False
    if not isinstance(background, bool):
        raise AgentInputError("parameter 'run_in_background' must be a boolean")
    return AgentRequest(
        description=description,
        prompt=prompt,
        subagent_type=kind,
        run_in_background=background,
    )


def allows(definition: AgentDefinition, name: str) -> bool:
    """Whether ``definition`` lets its subagent use the parent's tool ``name``."""
    if name in AGENT_TOOL_NAMES:
        return False  # MAX_DEPTH: subagents start no subagents
    if name in definition.disallowed_tools:
        return False
    tools = definition.tools
    return tools is None or "*" in tools or name in tools


def subagent_tools(parent: Sequence[str], definition: AgentDefinition) -> tuple[str, ...]:
    """The parent's tools the subagent gets, in the parent's order."""
    return tuple(name for name in parent if allows(definition, name))


__all__ = [
    "AGENT_TOOL",
    "AGENT_TOOL_NAMES",
    "GENERAL_PURPOSE_DESCRIPTION",
    "GENERAL_PURPOSE_LISTED",
    "GENERAL_PURPOSE_NAME",
    "INPUT_SCHEMA",
    "MAX_DEPTH",
    "AgentInputError",
    "AgentRequest",
    "Listed",
    "allows",
    "parse_request",
    "subagent_tools",
    "tool_description",
]
