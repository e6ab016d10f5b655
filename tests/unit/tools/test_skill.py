"""Skills (DEC-TURN-3, DEC-PROFILE-2 ``skills``): the SKILL.md core at its
bounds, the loader over real files (a link out of the boundary, a FIFO, one
byte past the size bound: one WARNING each, never read), the ``Skill`` tool
and its ``Skill(name)`` rules."""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Any

import pytest

from agentx.agents.skills import load_skills
from agentx.config.start_files import START_FILE_LIMITS
from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import PermissionRules, parse_rule, rule_problem
from agentx.messages.skills import (
    MAX_DESCRIPTION_CHARS,
    MAX_NAME_CHARS,
    SkillError,
    allowed,
    allowlist_problem,
    parse_skill,
)
from agentx.tools.base import ToolContext
from agentx.tools.registry import builtin_tools, offers_skill, skill_tool
from agentx.tools.specs import skill_spec
from agentx.turns.cancel import CancelScope


def _md(name: str | None = "greet", description: str = "Say hello.", body: str = "Wave.") -> str:
    front = [] if name is None else [f"name: {name}"]
    return "---\n" + "\n".join([*front, f"description: {description}"]) + f"\n---\n{body}\n"


def _parse(text: str) -> Any:
    return parse_skill(text, folder_name="dir-name", base_dir="/s", source="project")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter", "no front matter"),
        ("---\n[1, 2\n---\nbody", "not valid YAML"),
        ("---\n- a\n---\nbody", "mapping"),
        (_md(name="Bad_Name"), "lower-case"),
        (_md(name="a" * (MAX_NAME_CHARS + 1)), "at most 64"),
        (_md(description=""), "no description"),
        (_md(description="d" * (MAX_DESCRIPTION_CHARS + 1)), "longer than 1024"),
    ],
)
def test_parse_refuses(text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=problem):
        _parse(text)


def test_parse_at_the_bounds_and_defaults() -> None:
    skill = _parse(_md(name="a" * MAX_NAME_CHARS, description="d" * MAX_DESCRIPTION_CHARS))
    assert skill.name == "a" * MAX_NAME_CHARS and skill.body == "Wave."
    assert _parse(_md(name=None)).name == "dir-name"


def test_allowlist_and_listing() -> None:
    skills = {
        skill.name: skill for skill in (_parse(_md("greet")), _parse(_md("deploy", "Ship it.")))
    }
    assert list(allowed(skills, ["greet", "plugin:deploy", "nope"])) == ["greet", "deploy"]
    assert list(allowed(skills, [])) == [] and allowed(skills, None) == skills
    text = skill_spec(allowed(skills, ["greet"]).values()).description
    assert "- greet: Say hello." in text and "deploy" not in text
    assert "No skills are available" in skill_spec(()).description
    assert allowlist_problem(["a"]) is None
    assert allowlist_problem("all") is not None and allowlist_problem([1]) is not None
    assert allowlist_problem(["a"] * 1001) is not None and allowlist_problem(["a"] * 1000) is None


def _skill(root: Path, folder: str, text: str) -> Path:
    path = root / ".claude" / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_loader_sources_precedence_and_hostile_files(tmp_path: Path) -> None:
    home, cwd, outside = tmp_path / "home", tmp_path / "work", tmp_path / "outside"
    outside.mkdir()
    _skill(home, "greet", _md("greet", "user greeting"))
    _skill(cwd, "greet", _md("greet", "project greeting"))
    _skill(cwd, "deploy", _md("deploy", "Ship it."))
    secret = outside / "SKILL.md"
    secret.write_text(_md("leak", "never read"))
    linked = cwd / ".claude" / "skills" / "linked"
    linked.mkdir()
    (linked / "SKILL.md").symlink_to(secret)
    fifo_dir = cwd / ".claude" / "skills" / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "SKILL.md")
    huge = _skill(cwd, "huge", "")
    with huge.open("wb") as handle:
        handle.truncate(START_FILE_LIMITS["skill file"] + 1)
    exact = _skill(cwd, "exact", _md("exact"))
    with exact.open("ab") as handle:
        handle.write(b" " * (START_FILE_LIMITS["skill file"] - exact.stat().st_size))
    (cwd / ".claude" / "skills" / "empty").mkdir()
    warnings: list[str] = []
    found = load_skills(cwd, home, ("user", "project"), warnings.append)
    assert sorted(found) == ["deploy", "exact", "greet"]
    assert found["greet"].description == "project greeting"
    assert len(warnings) == 3, warnings
    assert any("linked/SKILL.md: leads out of" in w for w in warnings)
    assert any("fifo/SKILL.md" in w and "not a regular file" in w for w in warnings)
    assert any("huge/SKILL.md" in w for w in warnings)
    assert not any("never read" in w for w in warnings)
    only_user = load_skills(cwd, home, ("user",), warnings.append)
    assert only_user["greet"].description == "user greeting" and "deploy" not in only_user


def test_the_tool_lists_restricts_and_runs(tmp_path: Path) -> None:
    _skill(tmp_path, "greet", _md("greet", body="Say hi to $NAME."))
    _skill(tmp_path, "deploy", _md("deploy", "Ship it."))
    tool = skill_tool(tmp_path, tmp_path / "nohome", ("project",))
    assert not tool.loaded  # nothing read before the spec is needed
    tool.restrict(("greet",))
    assert "- greet:" in tool.spec.description and "deploy" not in tool.spec.description
    ctx = ToolContext(cwd=tmp_path, env={})
    result = tool.run({"skill": "greet", "args": "Ada"}, ctx, CancelScope())
    assert not result.is_error
    assert "Say hi to $NAME." in result.content and "ARGUMENTS: Ada" in result.content
    refused = tool.run({"skill": "deploy"}, ctx, CancelScope())
    assert refused.is_error and "unknown skill 'deploy'" in refused.content
    assert tool.run({"skill": "greet", "x": 1}, ctx, CancelScope()).is_error


def test_tools_selection() -> None:
    assert offers_skill(None) and offers_skill(["default"]) and offers_skill(["Skill"])
    assert not offers_skill(["Read"])
    assert [t.name for t in builtin_tools(["Skill", "Read"])] == ["Read"]


@pytest.mark.parametrize(
    ("rule", "skill", "behavior"),
    [
        ("Skill(greet)", "greet", "allow"),
        ("Skill(greet)", "deploy", "ask"),
        ("Skill", "x", "allow"),
    ],
)
def test_skill_rules(rule: str, skill: str, behavior: str) -> None:
    parsed = parse_rule(rule)
    assert rule_problem(parsed) is None
    decision = evaluate(
        "Skill",
        {"skill": skill},
        read_only=False,
        paths=(),
        rules=PermissionRules(allow=(parsed,)),
        mode="default",
        cwd=PurePath("/w"),
    )
    assert decision.behavior == behavior
