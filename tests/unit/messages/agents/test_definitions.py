"""Agent definitions from JSON and agent files, their bounds and precedence
(DEC-PROFILE-2 ``agents``, DEC-CLI-5 ``--agents``, DEC-SET-1 sources)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.agents.definitions import (
    GENERAL_PURPOSE,
    LIMITS,
    MAX_TURNS_LIMIT,
    AgentDefinition,
    DefinitionError,
    combine,
    from_file,
    from_json,
)
from agentx.messages.frozen import freeze


def _one(members: dict[str, Any], name: str = "x") -> AgentDefinition:
    (definition,) = from_json(freeze({name: members}), "sdk")
    return definition


def test_a_full_definition() -> None:
    d = _one(
        {
            "description": "d",
            "prompt": "p",
            "tools": ["Read", "Grep"],
            "disallowedTools": ["Bash"],
            "model": "haiku",
            "maxTurns": 3,
            "background": True,
        }
    )
    assert d == AgentDefinition(
        name="x",
        description="d",
        prompt="p",
        tools=("Read", "Grep"),
        disallowed_tools=("Bash",),
        model="haiku",
        max_turns=3,
        background=True,
        source="sdk",
    )


def test_inherit_and_nulls_mean_the_default() -> None:
    d = _one({"description": "d", "prompt": "", "model": "inherit", "tools": None})
    assert d.model is None and d.tools is None and d.prompt == ""


@pytest.mark.parametrize(
    ("members", "problem"),
    [
        ({"prompt": "p"}, "has no description"),
        ({"description": "d"}, "has no prompt"),
        ({"description": " ", "prompt": "p"}, "description must not be empty"),
        ({"description": 1, "prompt": "p"}, "description must be a string"),
        ({"description": "d", "prompt": "p", "tools": "Read"}, "tools must be a list"),
        ({"description": "d", "prompt": "p", "tools": [1]}, "tools must be a list"),
        ({"description": "d", "prompt": "p", "maxTurns": 0}, "maxTurns must be a positive"),
        ({"description": "d", "prompt": "p", "maxTurns": True}, "maxTurns must be a positive"),
        ({"description": "d", "prompt": "p", "background": "yes"}, "background must be"),
        ({"description": "d", "prompt": "p", "model": ""}, "model must be"),
        ({"description": "d", "prompt": "p", "skills": ["s"]}, "'skills'"),
        ({"description": "d", "prompt": "p", "mcpServers": ["s"]}, "'mcpServers'"),
        ({"description": "d", "prompt": "p", "permissionMode": "plan"}, "'permissionMode'"),
        ({"description": "d", "prompt": "p", "bogus": 1}, "'bogus'"),
    ],
)
def test_what_is_refused(members: dict[str, Any], problem: str) -> None:
    with pytest.raises(DefinitionError, match=problem):
        _one(members)


@pytest.mark.parametrize("name", ["", "-x", "a b", "x\n", "é", "a" * (LIMITS["name"] + 1)])
def test_bad_names(name: str) -> None:
    with pytest.raises(DefinitionError, match="agent name"):
        _one({"description": "d", "prompt": "p"}, name)


def test_names_at_their_bound_and_other_spellings() -> None:
    for name in ("a" * LIMITS["name"], "code-reviewer", "plugin:name", "v1.2_x"):
        assert _one({"description": "d", "prompt": "p"}, name).name == name


@pytest.mark.parametrize(
    ("member", "limit_key"),
    [("description", "description"), ("prompt", "prompt")],
)
def test_text_bounds_at_the_limit_and_one_past(member: str, limit_key: str) -> None:
    members = {"description": "d", "prompt": "p"}
    members[member] = "x" * LIMITS[limit_key]
    _one(members)
    members[member] += "x"
    with pytest.raises(DefinitionError, match="longer than"):
        _one(members)


def test_counts_at_the_limit_and_one_past() -> None:
    tools = [f"T{i}" for i in range(LIMITS["tools"])]
    _one({"description": "d", "prompt": "p", "tools": tools})
    with pytest.raises(DefinitionError, match="more than"):
        _one({"description": "d", "prompt": "p", "tools": [*tools, "one"]})
    agents = {f"a{i}": {"description": "d", "prompt": "p"} for i in range(LIMITS["agents"])}
    assert len(from_json(freeze(agents), "flag")) == LIMITS["agents"]
    agents["one-more"] = {"description": "d", "prompt": "p"}
    with pytest.raises(DefinitionError, match="more than"):
        from_json(freeze(agents), "flag")
    _one({"description": "d", "prompt": "p", "maxTurns": MAX_TURNS_LIMIT})
    with pytest.raises(DefinitionError, match="at most"):
        _one({"description": "d", "prompt": "p", "maxTurns": MAX_TURNS_LIMIT + 1})


@pytest.mark.parametrize("value", [[], "x", 1, None])
def test_agents_must_be_an_object(value: Any) -> None:
    with pytest.raises(DefinitionError, match="must be an object"):
        from_json(freeze(value), "sdk")


def test_an_agent_file() -> None:
    text = (
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep , Glob\n"
        "model: sonnet\ncolor: blue\n---\n\nYou review.\n\nCarefully.\n"
    )
    d = from_file(text, "project")
    assert d.name == "reviewer" and d.source == "project"
    assert d.tools == ("Read", "Grep", "Glob")
    assert d.model == "sonnet"
    assert d.prompt == "You review.\n\nCarefully."


def test_an_agent_file_with_a_yaml_list() -> None:
    d = from_file("---\nname: a\ndescription: d\ntools:\n  - Read\n  - Bash\n---\nP", "user")
    assert d.tools == ("Read", "Bash")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter", "no front matter"),
        ("---\nname: a\ndescription: d\n", "no front matter"),
        ("---\n: [\n---\nP", "not valid YAML"),
        ("---\n- a\n---\nP", "must be a mapping"),
        ("---\ndescription: d\n---\nP", "agent name"),
        ("---\nname: a\n---\nP", "has no description"),
        ("---\nname: a\ndescription: 2024-01-01\n---\nP", "must be a string"),
        ("---\nname: a\ndescription: d\ntools: [[1]]\n---\nP", "tools must be"),
        ("---\nname: a\ndescription: d\ntools: &x [*x]\n---\nP", "not valid YAML|tools must"),
    ],
)
def test_bad_agent_files(text: str, problem: str) -> None:
    with pytest.raises(DefinitionError, match=problem):
        from_file(text, "project")


def test_precedence_later_layers_win_whole() -> None:
    user = AgentDefinition(name="a", description="u", prompt="u", tools=("Read",), source="user")
    project = AgentDefinition(name="a", description="p", prompt="p", source="project")
    flag = AgentDefinition(name="general-purpose", description="f", prompt="f", source="flag")
    merged = combine(((GENERAL_PURPOSE,), (user,), (project,), (flag,), ()))
    assert merged["a"] is project and merged["a"].tools is None
    assert merged["general-purpose"] is flag
