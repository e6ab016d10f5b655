"""``Skill``: the model invokes a skill and reads its instructions
(DEC-TURN-3, DEC-PROFILE-2 ``skills``; :mod:`agentx.messages.skills`).

One tool per session: it knows the session's cwd, home and setting
sources, and reads the skills (:func:`agentx.agents.skills.load_skills`)
when its spec is first needed: the first turn, after the ``sdk`` profile's
``initialize`` (whose ``skills`` allowlist :meth:`SkillTool.restrict` sets)
and never at start. Its description lists each skill's name and
description; invoking one returns its ``SKILL.md`` body. Like Claude Code's
it asks unless a rule allows it: ``Skill`` allows every skill,
``Skill(name)`` one (the rule the Python SDK adds for each name in its
``skills`` option).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agentx.diagnostics import logger
from agentx.providers.base import CancelToken, ToolSpec
from agentx.tools.base import (
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_members,
    error,
    get_optional_str,
    get_str,
    invalid_input,
    output,
)
from agentx.tools.specs import skill_spec

if TYPE_CHECKING:
    from agentx.messages.skills import Skill


class SkillTool:
    name: Final = "Skill"
    read_only: Final = False

    def __init__(self, *, cwd: Path, user_home: Path, sources: Sequence[str]) -> None:
        self._cwd = cwd
        self._home = user_home
        self._sources = tuple(sources)
        self._lock = threading.Lock()
        self._allowlist: tuple[str, ...] | None = None
        self._skills: dict[str, Skill] | None = None
        self._spec: ToolSpec | None = None

    def restrict(self, names: Sequence[str]) -> None:
        """``initialize``'s ``skills``: only these are offered (before any turn)."""
        with self._lock:
            self._allowlist = tuple(names)
            self._spec = None

    def _available(self) -> dict[str, Skill]:
        with self._lock:
            if self._skills is None:
                from agentx.agents.skills import load_skills  # noqa: PLC0415

                self._skills = load_skills(self._cwd, self._home, self._sources, logger.warning)
            if self._allowlist is None:
                return self._skills
            from agentx.messages.skills import allowed  # noqa: PLC0415 - with an allowlist only

            return allowed(self._skills, self._allowlist)

    @property
    def spec(self) -> ToolSpec:
        spec = self._spec
        if spec is None:
            spec = skill_spec(self._available().values())
            self._spec = spec
        return spec

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Run the skill {get_str(input, 'skill')}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            name = get_str(input, "skill").strip().removeprefix("/")
            args = get_optional_str(input, "args")
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        skill = self._available().get(name)
        if skill is None:
            return error(f"Skill: unknown skill {name!r}")
        from agentx.messages.skills import invocation  # noqa: PLC0415 - loaded with the skill

        return output(invocation(skill, args))
