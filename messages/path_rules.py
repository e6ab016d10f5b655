"""Path rules: Claude Code's gitignore-style grammar for ``Read(...)`` and
``Edit(...)`` (and the other path tools') specifiers (DEC-PERM-PATH).

A specifier is one gitignore pattern (the gitignore(5) rules, matched with
``pathspec``) taken against a root given by its first characters:

- ``//path``: the filesystem root (``Read(//etc/**)`` is ``/etc/**``);
- ``~/path`` (and ``~`` alone): the user's home directory;
- ``/path``: the root of the settings source that holds the rule: the project
  (the session cwd) for project, local, flag and policy settings, the
  ``$AGENTX_HOME`` folder for user settings, the cwd for session rules. A deny
  or ask rule so spelt also matches the absolute path ``/path``, so a rule
  written for the filesystem root never fails open;
- ``path`` or ``./path``: the session cwd.

Within its root a pattern follows gitignore: one without a slash but at its
end matches a name at any depth (``Read(.env)`` covers ``sub/.env``); one with
a slash is anchored; ``*`` and ``?`` stay within a name and ``**`` crosses
folders; a folder (``Read(dir)``, ``Read(dir/)``) covers everything below it.
A path outside the root never matches.

:func:`path_problem` names what makes a specifier unable to match anything
(the caller refuses such a rule at start-up): a ``!`` negation, a ``..``
segment, ``~user``, a Bash ``:*`` suffix.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

from msgspec import Struct

if TYPE_CHECKING:
    from pathlib import PurePath

    from pathspec import GitIgnoreSpec

#: The root of a ``//`` pattern.
FILESYSTEM_ROOT: Final = "/"


class PathPattern(Struct, frozen=True):
    """One gitignore ``pattern`` and the folder it is taken against (``None``: the cwd)."""

    root: str | None
    pattern: str


def path_problem(content: str) -> str | None:
    """Why the path specifier ``content`` can match nothing; ``None`` when it can."""
    text = content.strip()
    if text.startswith("!"):
        return "a gitignore negation (!) matches nothing on its own"
    if text.endswith(":*"):
        return ":* belongs to Bash rules; a path rule is a gitignore pattern"
    if text.startswith("~") and text != "~" and not text.startswith("~/"):
        return "~user is not supported; ~/ is the home directory"
    if ".." in text.split("/"):
        return "a pattern with a .. segment reaches above its root and matches nothing"
    return None


def rooted(content: str) -> str | None:
    """Which root a specifier names: ``home``, ``source`` or ``None`` (cwd or ``/``)."""
    text = content.strip()
    if text == "~" or text.startswith("~/"):
        return "home"
    if text.startswith("/") and not text.startswith("//"):
        return "source"
    return None


@lru_cache(maxsize=512)
def path_patterns(content: str, anchor: str | None, *, for_allow: bool) -> tuple[PathPattern, ...]:
    """The patterns ``content`` stands for; ``anchor`` is the home or source root
    it was resolved with (see :func:`rooted`)."""
    text = content.strip()
    if text.startswith("//"):
        return (PathPattern(FILESYSTEM_ROOT, _whole(text[1:])),)
    if text == "~" or text.startswith("~/"):
        if anchor is None:
            # Unresolved home: nothing to allow, and everything to deny or ask (fail closed).
            return () if for_allow else (PathPattern(FILESYSTEM_ROOT, "**"),)
        return (PathPattern(anchor, _whole(text[1:])),)
    if text.startswith("/"):
        own = PathPattern(anchor, _whole(text))
        return (own,) if for_allow else (own, PathPattern(FILESYSTEM_ROOT, _whole(text)))
    return (PathPattern(None, _whole(text.removeprefix("./"))),)


def _whole(pattern: str) -> str:
    """An empty pattern or a bare root stands for everything below the root."""
    return "**" if pattern.strip("/") == "" else pattern


def path_matches(
    content: str, anchor: str | None, path: PurePath, cwd: PurePath, *, for_allow: bool
) -> bool:
    """Whether the specifier matches the absolute ``path`` (see the module grammar)."""
    for pattern in path_patterns(content, anchor, for_allow=for_allow):
        root = PurePosixPath(pattern.root) if pattern.root is not None else PurePosixPath(cwd)
        target = PurePosixPath(path)
        if target == root:
            relative = ""
        elif target.is_relative_to(root):
            relative = target.relative_to(root).as_posix()
        else:
            continue
        spec = _spec(pattern.pattern)
        # The path as a file and as a folder: ``src/**`` also names ``src``.
        if relative and (spec.match_file(relative) or spec.match_file(relative + "/")):
            return True
        if not relative and pattern.pattern == "**":
            return True
    return False


@lru_cache(maxsize=512)
def _spec(pattern: str) -> GitIgnoreSpec:
    # Imported on the first path rule checked: start-up never pays for it.
    from pathspec import GitIgnoreSpec  # noqa: PLC0415

    return GitIgnoreSpec.from_lines([pattern])
