"""``CLAUDE_ENV_FILE``, read without a shell (DECISIONS section 3, DEC-HOOK-2, DEC-AUTH-3).

Claude Code gives ``SessionStart`` hooks a file to write ``export`` lines to
and sources it before each Bash command. agentx never sources it: it reads
the file once, after the event's hooks have finished, with this parser, and
the variables join the session's environment for Bash (a Bash command can
therefore not add variables for later commands by writing to the file).

The grammar is the part of ``sh`` such lines use, without expansion:
``[export ]NAME=VALUE`` per line, blank lines and ``#`` comments skipped;
VALUE is a plain word (no blank, quote, ``$``, backquote, backslash, ``;``,
``&``, ``|``, ``<``, ``>``, ``(`` or ``)``), a single-quoted text, or a
double-quoted text with no ``$`` or backquote whose only escapes are
``\\"``, ``\\\\``, ``\\$`` and ``\\```. Any other line is refused and named.

Refused names (:func:`refused_name`): what changes how programs are found
or loaded, or what a shell runs on its own (``PATH``, ``LD_*``, ``DYLD_*``,
``BASH_ENV``, ``ENV``, ``BASH_FUNC_*``, ``PROMPT_COMMAND``, ``SHELLOPTS``,
``BASHOPTS``, ``IFS``, ``PS4``, ``CDPATH``, ``GCONV_PATH``), agentx's own
(``AGENTX_*``, ``CLAUDE_*``) and the credential variables; a value holding a
literal of the session's credential union is dropped as the child
environment scrub drops it. ``PATH`` changes stay the job of the settings'
``env``: Bash rules name programs and the sandbox starts its launcher
through it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from msgspec import Struct

#: The most bytes agentx reads of the file; a longer file is refused whole.
MAX_ENV_FILE_BYTES: Final = 64 * 1024
#: The most variables one file sets.
MAX_ENV_VARIABLES: Final = 256

_LINE: Final = re.compile(r"(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)")
_PLAIN: Final = re.compile(r"[^\s'\"$`\\;&|<>()]*")
_SINGLE: Final = re.compile(r"'([^']*)'")
_DOUBLE: Final = re.compile(r'"((?:[^"\\$`]|\\["\\$`])*)"')
_ESCAPE: Final = re.compile(r"\\([\"\\$`])")
_REFUSED: Final = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "PS4",
        "CDPATH",
        "GCONV_PATH",
    }
)
_REFUSED_PREFIXES: Final = ("LD_", "DYLD_", "BASH_FUNC_", "AGENTX_", "CLAUDE_")


class EnvFile(Struct, frozen=True, kw_only=True):
    """What a file sets, and one line per thing refused (each a WARN line)."""

    variables: tuple[tuple[str, str], ...] = ()
    refused: tuple[str, ...] = ()


def refused_name(name: str, credential_names: Iterable[str] = ()) -> bool:
    """May the file not set ``name``? (see the module docstring)"""
    return (
        name in _REFUSED
        or name.startswith(_REFUSED_PREFIXES)
        or name in frozenset(credential_names)
    )


def _value(text: str) -> str | None:
    text = text.rstrip(" \t\r")
    for grammar, unescape in ((_SINGLE, False), (_DOUBLE, True), (_PLAIN, False)):
        found = grammar.fullmatch(text)
        if found is not None:
            raw = found.group(1) if grammar is not _PLAIN else found.group(0)
            return _ESCAPE.sub(r"\1", raw) if unescape else raw
    return None


def parse_env_file(
    data: bytes,
    *,
    secrets: Iterable[str] = (),
    credential_names: Iterable[str] = (),
) -> EnvFile:
    """The variables ``data`` sets, in order (a later line wins), without
    any name :func:`refused_name` refuses or any value holding a literal of
    ``secrets``. ``data`` past :data:`MAX_ENV_FILE_BYTES` or not UTF-8 sets
    nothing."""
    if len(data) > MAX_ENV_FILE_BYTES:
        return EnvFile(refused=(f"the file exceeds {MAX_ENV_FILE_BYTES} bytes; nothing is set",))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return EnvFile(refused=("the file is not UTF-8; nothing is set",))
    literals = tuple(s for s in secrets if s)
    names = frozenset(credential_names)
    found: dict[str, str] = {}
    refused: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(" \t\r")
        if not stripped or stripped.startswith("#"):
            continue
        matched = _LINE.fullmatch(stripped)
        value = None if matched is None else _value(matched.group(2))
        if matched is None or value is None or "\0" in stripped:
            refused.append(f"line {number} is not NAME=VALUE without expansion")
            continue
        name = matched.group(1)
        if refused_name(name, names):
            refused.append(f"line {number}: {name} may not be set this way")
        elif any(lit in value for lit in literals):
            refused.append(f"line {number}: {name} holds a credential agentx holds")
        elif name not in found and len(found) >= MAX_ENV_VARIABLES:
            refused.append(f"line {number}: more than {MAX_ENV_VARIABLES} variables")
        else:
            found.pop(name, None)
            found[name] = value
    return EnvFile(variables=tuple(found.items()), refused=tuple(refused))
