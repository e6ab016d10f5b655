"""The ``Agent`` tool as offered: the spec the runner's tool had, without the
runner or the definitions loading (DEC-TURN-3; DEC-CLI-3 start-up)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from agentx.agents.offer import AgentOffer
from agentx.messages.agents.definitions import GENERAL_PURPOSE, AgentDefinition, combine
from agentx.messages.agents.tools import (
    AGENT_TOOL,
    GENERAL_PURPOSE_LISTED,
    INPUT_SCHEMA,
    tool_description,
)
from agentx.messages.frozen import freeze, thaw
from agentx.providers.base import ToolSpec


def _def(name: str, source: Any, **members: Any) -> AgentDefinition:
    return AgentDefinition(
        name=name, description=f"{name} ({source})", prompt="p", source=source, **members
    )


FILE = _def("reviewer", "project", tools=("Read", "Grep"))
FLAG = _def("writer", "flag", tools=())
SDK = _def("sdk-one", "sdk", disallowed_tools=("Bash",))
#: An agent file that redefines the built-in agent: it replaces it in place.
OVERRIDE = _def("general-purpose", "user")

LAYERS = {
    "built-in only": ((), (), ()),
    "agent file": ((FILE,), (), ()),
    "--agents": ((), (FLAG,), ()),
    "sdk agents": ((), (), (SDK,)),
    "all sources": ((OVERRIDE, FILE), (FLAG,), (SDK,)),
    "built-in redefined": ((OVERRIDE,), (), ()),
}


def wire(spec: ToolSpec) -> bytes:
    document = {
        "name": spec.name,
        "description": spec.description,
        "schema": thaw(spec.input_schema),
    }
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


class Built:
    """What the offer hands the runner's builder."""

    def __init__(self) -> None:
        self.calls: list[tuple[Mapping[str, AgentDefinition], ToolSpec]] = []

    def __call__(self, definitions: Mapping[str, AgentDefinition], spec: ToolSpec) -> Any:
        self.calls.append((definitions, spec))
        return self


@pytest.mark.parametrize("layers", LAYERS.values(), ids=list(LAYERS))
def test_the_offered_spec_is_the_definitions_in_force(layers: Any) -> None:
    """The spec is what the tool listed when the runner built it over the
    definitions in force (the built-in one, then files, flag, sdk)."""
    in_force = combine(((GENERAL_PURPOSE,), *layers))
    expected = ToolSpec(
        name=AGENT_TOOL,
        description=tool_description(in_force.values()),
        input_schema=freeze(INPUT_SCHEMA),
    )
    built = Built()
    offer = AgentOffer(layers, built)
    assert wire(offer.spec) == wire(expected)
    assert not offer.loaded and built.calls == []
    assert offer.load() is built
    assert offer.load() is built  # built once
    [(definitions, spec)] = built.calls
    assert definitions == in_force and list(definitions) == list(in_force)
    assert spec is offer.spec  # the tool offers what was offered


def test_the_static_built_in_agent_is_the_definition() -> None:
    """The built-in agent listed without the definitions is the definition's
    name, description and tools: the two cannot drift."""
    assert GENERAL_PURPOSE_LISTED.name == GENERAL_PURPOSE.name
    assert GENERAL_PURPOSE_LISTED.description == GENERAL_PURPOSE.description
    assert GENERAL_PURPOSE_LISTED.tools == GENERAL_PURPOSE.tools
    assert tool_description([GENERAL_PURPOSE_LISTED]) == tool_description([GENERAL_PURPOSE])


def test_background_work_before_the_first_call_is_none() -> None:
    built = Built()
    offer = AgentOffer(((), (), ()), built)
    offer.stop_background()
    assert offer.notices(None, None, wait=True) == []  # type: ignore[arg-type]
    assert not offer.loaded


#: In a fresh interpreter: what the offer's spec loads, and what its first use loads.
FRESH = """
import sys
from agentx.agents.offer import AgentOffer
offer = AgentOffer(((), (), ()), lambda definitions, spec: dict(definitions))
spec = offer.spec
heavy = ("agentx.agents.runner", "agentx.messages.agents.definitions", "agentx.turns.model_call")
before = [m for m in heavy if m in sys.modules]
names = list(offer.load())
after = [m for m in heavy if m in sys.modules]
print(repr((spec.name, before, names, after)))
"""


def test_the_spec_loads_neither_the_runner_nor_the_definitions() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FRESH], capture_output=True, timeout=60, check=True, text=True
    )
    name, before, names, after = ast.literal_eval(done.stdout)
    assert name == "Agent"
    assert before == []
    assert names == ["general-purpose"]
    assert after == ["agentx.messages.agents.definitions"]  # the control: it does load
