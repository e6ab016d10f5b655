"""Loading the skills (DEC-TURN-3, DEC-SET-1 sources, ``--setting-sources``).

Claude Code's locations, each read when its source is selected, when the
``Skill`` tool is first offered (the first turn, never at start):

- ``user``: ``~/.claude/skills/<dir>/SKILL.md``, inside ``~/.claude``;
- ``project``: ``<cwd>/.claude/skills/<dir>/SKILL.md``, inside the cwd.

A ``SKILL.md`` must resolve (symbolic links followed) inside its source's
root; one that leads out of it is left out, never read. Each is read with
:func:`~agentx.config.start_files.read_start_file` (a regular file of at
most ``START_FILE_LIMITS["skill file"]`` bytes, opened without blocking, so a
FIFO or a huge file is refused before a byte is loaded). At most
:data:`MAX_SKILLS` folders of one source are read, in name order. Every skill
that cannot be used is left out with one WARNING line naming it; the
session goes on. The parsing is :mod:`agentx.messages.skills`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file

if TYPE_CHECKING:
    from agentx.messages.skills import Skill

#: Skill folders read from one source at most (the rest: one WARNING line).
MAX_SKILLS: Final = 100


def skill_dirs(cwd: Path, user_home: Path) -> tuple[tuple[str, Path, Path], ...]:
    """(source, root, folder), from the lowest precedence to the highest."""
    claude = user_home / ".claude"
    return (("user", claude, claude / "skills"), ("project", cwd, cwd / ".claude" / "skills"))


def _inside(path: Path, root: Path) -> bool:
    try:
        return Path(os.path.realpath(path)).is_relative_to(Path(os.path.realpath(root)))
    except (OSError, ValueError):
        return False


def _folders(folder: Path, warn: Callable[[str], None]) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.is_dir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        warn(f"skills folder {folder}: cannot be listed ({exc.strerror}); its skills are left out")
        return []
    if len(names) > MAX_SKILLS:
        warn(f"skills folder {folder}: more than {MAX_SKILLS} skills; only the first are read")
    return names[:MAX_SKILLS]


def _read(path: Path, root: Path, source: str, warn: Callable[[str], None]) -> Skill | None:
    if not _inside(path, root):
        if os.path.lexists(path):
            warn(f"skill file {path}: leads out of {root}; it is left out")
        return None
    real = os.path.realpath(path)
    try:
        # Open what the check saw: the resolved path.
        data = read_start_file(real, START_FILE_LIMITS["skill file"], "skill file")
    except FileNotFoundError:
        return None
    except StartFileError as exc:
        warn(f"skill file {path}: {exc.problem}; it is left out")
        return None
    # DEC-CLI-3: the skill parser loads once there is a SKILL.md to read.
    from agentx.messages.skills import SkillError, parse_skill  # noqa: PLC0415

    try:
        return parse_skill(
            data.decode("utf-8", errors="replace"),
            folder_name=path.parent.name,
            base_dir=os.path.dirname(real),
            source=source,
        )
    except SkillError as exc:
        warn(f"skill file {path}: {exc}; it is left out")
        return None


def load_skills(
    cwd: Path, user_home: Path, sources: Iterable[str], warn: Callable[[str], None]
) -> dict[str, Skill]:
    """The usable skills of the selected sources by name: user first, then
    project (a later one of the same name replaces the earlier one)."""
    wanted = set(sources)
    found: dict[str, Skill] = {}
    for source, root, folder in skill_dirs(cwd, user_home):
        if source not in wanted:
            continue
        for name in _folders(folder, warn):
            skill = _read(folder / name / "SKILL.md", root, source, warn)
            if skill is not None:
                found[skill.name] = skill
    return found


__all__ = ["MAX_SKILLS", "load_skills", "skill_dirs"]
