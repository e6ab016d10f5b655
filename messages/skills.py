"""Skills: one ``SKILL.md`` read into a skill, the ``skills`` allowlist and
what the model reads when it invokes one (DEC-TURN-3, DEC-PROFILE-2), without
IO. The ``Skill`` tool's description, which lists them, is
:func:`agentx.tools.specs.skill_spec`'s.

A skill is a folder ``.claude/skills/<dir>/`` whose ``SKILL.md`` is Markdown
with YAML front matter: ``name`` (default: the folder's name) and
``description`` (what it is for and when to use it); the body is what the
model gets when it invokes the ``Skill`` tool. Claude Code's bounds: a name
of at most :data:`MAX_NAME_CHARS` lower-case letters, digits and hyphens, a
description of at most :data:`MAX_DESCRIPTION_CHARS` characters. The
``skills`` option (``initialize``'s ``skills``: a list of names) keeps only
the skills it names; unknown names are ignored, as Claude Code does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from msgspec import Struct

MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 1024
#: Names a ``skills`` allowlist may hold at most.
MAX_ALLOWLIST: Final = 1000
_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class SkillError(ValueError):
    """A SKILL.md that cannot be used; the message says why (never its text)."""


class Skill(Struct, frozen=True, kw_only=True):
    name: str
    description: str
    body: str
    #: The skill's folder, as the model is told it (its files are relative to it).
    base_dir: str
    source: str


def parse_skill(text: str, *, folder_name: str, base_dir: str, source: str) -> Skill:
    """One skill from its ``SKILL.md`` text, or :class:`SkillError`."""
    # DEC-CLI-3: an agent file's reader loads only when a skill is read.
    from agentx.messages.agents.definitions import split_front_matter  # noqa: PLC0415

    parts = split_front_matter(text)
    if parts is None:
        raise SkillError("it has no front matter (a '---' line, YAML, a '---' line)")
    front, body = parts
    import yaml  # noqa: PLC0415 (only when skills exist)

    try:
        meta: Any = yaml.safe_load(front)
    except yaml.YAMLError:
        raise SkillError("its front matter is not valid YAML") from None
    if not isinstance(meta, dict):
        raise SkillError("its front matter must be a mapping of keys to values")
    name = meta.get("name", folder_name)
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS or not _NAME.fullmatch(name):
        raise SkillError(
            f"its name must be at most {MAX_NAME_CHARS} lower-case letters, digits and hyphens"
        )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("it has no description")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillError(f"its description is longer than {MAX_DESCRIPTION_CHARS} characters")
    return Skill(
        name=name,
        description=" ".join(description.split()),
        body=body,
        base_dir=base_dir,
        source=source,
    )


def allowlist_problem(value: object) -> str | None:
    """``initialize``'s ``skills``: a list of skill names (the SDKs send a
    list; ``"all"`` is the Python SDK's option value, never sent)."""
    if not isinstance(value, Sequence) or isinstance(value, str):
        return "must be a list of skill names"
    if len(value) > MAX_ALLOWLIST:
        return f"lists more than {MAX_ALLOWLIST} skills"
    if not all(isinstance(name, str) and name for name in value):
        return "must be a list of non-empty strings"
    return None


def allowed(skills: dict[str, Skill], names: Sequence[str] | None) -> dict[str, Skill]:
    """The skills the allowlist keeps (all without one); a plugin-qualified
    name's ``:name`` suffix matches too."""
    if names is None:
        return skills
    wanted = {name.rsplit(":", 1)[-1] for name in names}
    return {name: skill for name, skill in skills.items() if name in wanted}


def invocation(skill: Skill, args: str | None) -> str:
    """What the model reads when it invokes ``skill``."""
    text = f"Skill {skill.name} (base directory: {skill.base_dir})\n\n{skill.body}"
    return f"{text}\n\nARGUMENTS: {args}" if args else text
