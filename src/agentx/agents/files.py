"""Loading the agent files (DEC-TURN-3, DEC-SET-1 sources, ``--setting-sources``).

Claude Code's locations, each read when its source is selected, at the
session's first turn (never at start):

- ``user``: ``~/.claude/agents/*.md``, inside ``~/.claude``;
- ``project``: ``<cwd>/.claude/agents/*.md``, inside the cwd.

A file must resolve (symbolic links followed) inside its source's root; one
that leads out of it is left out. Each is read with
:func:`~agentx.config.start_files.read_start_file` (a regular file of at most
``START_FILE_LIMITS["agent file"]`` bytes, opened without blocking, so a FIFO
or a huge file is refused before a byte is loaded). At most
:data:`MAX_AGENT_FILES` files of one folder are read, in name order. Every
file that cannot be used is left out with one WARNING line naming it, and
the session goes on; the definitions are
:mod:`agentx.messages.agents.definitions`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file

if TYPE_CHECKING:
    from agentx.messages.agents.definitions import AgentDefinition, AgentSource

#: Files read from one agents folder at most (the rest: one WARNING line).
MAX_AGENT_FILES: Final = 100


def agent_dirs(cwd: Path, user_home: Path) -> tuple[tuple[AgentSource, Path, Path], ...]:
    """(source, root, folder), from the lowest precedence to the highest."""
    claude = user_home / ".claude"
    return (
        ("user", claude, claude / "agents"),
        ("project", cwd, cwd / ".claude" / "agents"),
    )


def _inside(path: Path, root: Path) -> bool:
    try:
        resolved = Path(os.path.realpath(path))
        return resolved.is_relative_to(Path(os.path.realpath(root)))
    except (OSError, ValueError):
        return False


def _names(folder: Path, warn: Callable[[str], None]) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if e.name.endswith(".md"))
    except FileNotFoundError:
        return []
    except OSError as exc:
        warn(f"agent folder {folder}: cannot be listed ({exc.strerror}); its agents are left out")
        return []
    if len(names) > MAX_AGENT_FILES:
        warn(
            f"agent folder {folder}: more than {MAX_AGENT_FILES} agent files; "
            f"only the first {MAX_AGENT_FILES} by name are read"
        )
    return names[:MAX_AGENT_FILES]


def _read(
    path: Path, root: Path, source: AgentSource, warn: Callable[[str], None]
) -> AgentDefinition | None:
    if not _inside(path, root):
        warn(f"agent file {path}: leads out of {root}; it is left out")
        return None
    try:
        # Open what the check saw: the resolved path.
        data = read_start_file(
            os.path.realpath(path), START_FILE_LIMITS["agent file"], "agent file"
        )
    except FileNotFoundError:
        return None
    except StartFileError as exc:
        warn(f"agent file {path}: {exc.problem}; it is left out")
        return None
    # DEC-CLI-3: the definitions load once there is an agent file to read.
    from agentx.messages.agents.definitions import DefinitionError, from_file  # noqa: PLC0415

    try:
        return from_file(data.decode("utf-8", errors="replace"), source)
    except DefinitionError as exc:
        warn(f"agent file {path}: {exc}; it is left out")
        return None


def load_agent_files(
    cwd: Path, user_home: Path, sources: Iterable[str], warn: Callable[[str], None]
) -> tuple[AgentDefinition, ...]:
    """The definitions of the selected sources' agent files that could be
    used: user files first, then project files (a later one of the same name
    wins, :func:`agentx.messages.agents.definitions.combine`)."""
    wanted = set(sources)
    found: list[AgentDefinition] = []
    for source, root, folder in agent_dirs(cwd, user_home):
        if source not in wanted:
            continue
        for name in _names(folder, warn):
            definition = _read(folder / name, root, source, warn)
            if definition is not None:
                found.append(definition)
    return tuple(found)


__all__ = ["MAX_AGENT_FILES", "agent_dirs", "load_agent_files"]
