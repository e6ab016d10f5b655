"""The specs the model is offered without loading a tool are the loaded
tools' own (DEC-TURN-3; :mod:`agentx.tools.specs`, DEC-CLI-3 start-up).

The registry offers a fixed spec from :mod:`agentx.tools.specs` while the
tool's module stays unloaded; once the tool is loaded its class's spec is
offered. The two must be the same bytes on the wire, so a request does not
change when a tool happens to have been used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentx.messages.frozen import freeze, thaw
from agentx.providers.base import ToolSpec
from agentx.tools import specs
from agentx.tools.registry import BUILTIN, SKILL, WEB_SEARCH, BuiltinTool, LazyTool, skill_tool
from agentx.tools.skill import SkillTool

#: Every built-in tool whose spec is fixed (``Skill`` builds its own).
FIXED = (*BUILTIN, WEB_SEARCH)
#: What a built-in tool's class is built with, where it takes arguments.
KWARGS = {WEB_SEARCH.name: {"client": None}}


def wire(spec: ToolSpec) -> bytes:
    """A spec as a request carries it: name, description, the schema's
    members in their order."""
    document = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": thaw(spec.input_schema),
    }
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("entry", FIXED, ids=[e.name for e in FIXED])
def test_the_light_spec_is_the_loaded_tools_spec(entry: BuiltinTool) -> None:
    light = LazyTool(entry, **KWARGS.get(entry.name, {}))
    offered = light.spec
    assert not light.loaded  # offered without the tool's module
    loaded = light.load().spec
    assert wire(offered) == wire(loaded)
    assert wire(light.spec) == wire(loaded)  # and once loaded, the same bytes


def test_every_fixed_spec_belongs_to_a_tool_and_every_tool_but_skill_has_one() -> None:
    """A spec the registry does not name would never be offered; a tool
    without one would load at the first turn."""
    assert sorted(specs.STATIC) == sorted(entry.name for entry in FIXED)
    assert SKILL.name not in specs.STATIC


def test_a_changed_light_spec_is_caught() -> None:
    """The comparison above can fail: one character of a description differs."""
    changed = ToolSpec(
        name=specs.BASH.name,
        description=specs.BASH.description + ".",
        input_schema=specs.BASH.input_schema,
    )
    assert wire(changed) != wire(specs.BASH)
    reordered = ToolSpec(
        name=specs.BASH.name,
        description=specs.BASH.description,
        input_schema=freeze(dict(reversed(thaw(specs.BASH.input_schema).items()))),
    )
    assert reordered.input_schema == specs.BASH.input_schema  # equal as mappings
    assert wire(reordered) != wire(specs.BASH)  # not as bytes


def test_the_skill_tools_spec_is_its_own(tmp_path: Path) -> None:
    """``Skill`` lists the session's skills: its handle offers the loaded
    tool's spec, over the schema kept with the fixed specs."""
    handle = skill_tool(tmp_path, tmp_path, ("user", "project"))
    own = SkillTool(cwd=tmp_path, user_home=tmp_path, sources=("user", "project")).spec
    assert wire(handle.spec) == wire(own)
    assert handle.loaded
    assert own.input_schema == specs.SKILL_SCHEMA
