"""The facts of the built-in system prompt's environment block, read at start
(DEC-CLI-5; :mod:`agentx.messages.system_prompt` writes the prompt).

Every path is shown as text a provider request can carry: a name that is not
valid UTF-8 keeps its readable parts and replaces the rest.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from agentx.messages.system_prompt import Environment

#: How many folders up a ``.git`` is looked for (a repository's root is rarely deeper).
_GIT_SEARCH_DEPTH = 64


def shown_path(path: Path | str) -> str:
    """``path`` as valid UTF-8 text (undecodable bytes become U+FFFD)."""
    raw = os.fsencode(str(path))
    return raw.decode("utf-8", errors="replace")


def in_git_repository(cwd: Path) -> bool:
    """Whether ``cwd`` or a folder above it holds ``.git`` (a folder, or the
    file a worktree or submodule has)."""
    folder = cwd
    for _ in range(_GIT_SEARCH_DEPTH):
        try:
            if (folder / ".git").exists():
                return True
        except OSError:
            return False
        if folder.parent == folder:
            return False
        folder = folder.parent
    return False


def read_environment(
    *,
    cwd: Path,
    additional_directories: Sequence[Path],
    environ: Mapping[str, str],
    model: str,
    today: date,
) -> Environment:
    return Environment(
        cwd=shown_path(cwd),
        additional_directories=tuple(shown_path(d) for d in additional_directories),
        platform=f"{platform.system()} {platform.release()}".strip(),
        shell=os.path.basename(environ.get("SHELL") or "bash"),
        today=today.isoformat(),
        model=model,
        is_git_repository=in_git_repository(cwd),
    )


__all__ = ["in_git_repository", "read_environment", "shown_path"]
