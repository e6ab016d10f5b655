"""``acceptEdits``'s file commands: which Bash lines it may run unasked
(DEC-PERM-MODE, DEC-PERM-PATH).

Claude Code 2.1.332's ``acceptEdits`` also allows "common filesystem
commands" (its BashTool mode check: ``mkdir``, ``touch``, ``rm``, ``rmdir``,
``mv``, ``cp``, ``sed``). agentx allows a line in ``acceptEdits`` (and
``auto``) only when it can read it whole, and answers here which paths the
line touches; the caller then admits each path as the file tools' own paths
are admitted (inside the working directories after symlinks, no deny or ask
rule), and asks otherwise. :func:`edit_operands` returns None (ask) for:

- a line the parser cannot see through (:class:`Opaque`), or any
  redirection (``>``, ``<`` anywhere in the text: its target is a write or
  read the commands' words do not show), or any variable assignment or
  function definition (``PATH=/tmp/x rm a`` runs another ``rm``);
- a simple command that is not one of :data:`FILE_COMMANDS`, or that runs
  through a wrapper or a shell;
- a word bash would expand (a variable, a substitution, a glob, a brace, a
  tilde): its value is not known;
- an option outside the small grammar below (``rm --no-preserve-root``,
  ``cp -L``), a missing option value;
- ``sed`` without ``-i`` (not an edit) or with a script other than one
  ``s`` or ``y`` command without the ``w``/``e`` flags (sed scripts can
  write other files and run commands);
- a command without a path.

Everything after ``--`` is a path. Sans-IO: the paths come back as the line
spells them; resolving them is the caller's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from msgspec import Struct

from agentx.messages.bash.commands import (
    CommandLine,
    SimpleCommand,
    parse_command_line,
    parse_tree,
)
from agentx.messages.bash.words import Opaque, Word

#: Claude Code's acceptEdits file commands.
FILE_COMMANDS: Final = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
#: The commands that remove or move what a path names (never a working directory itself).
REMOVING: Final = frozenset({"rm", "rmdir", "mv"})


class Grammar(Struct, frozen=True):
    """One command's options: flags, options taking a value, and those whose
    value is a path (long names without the dashes)."""

    flags: frozenset[str]
    valued: frozenset[str] = frozenset()
    path_valued: frozenset[str] = frozenset()


def _g(flags: str, valued: str = "", path_valued: str = "") -> Grammar:
    return Grammar(
        flags=frozenset(flags.split()),
        valued=frozenset(valued.split()),
        path_valued=frozenset(path_valued.split()),
    )


#: GNU coreutils' and sed's options that agentx reads (anything else asks).
GRAMMARS: Final[Mapping[str, Grammar]] = {
    "mkdir": _g("p v parents verbose", "m mode"),
    "touch": _g("a c m h no-create no-dereference", "d t date", "r reference"),
    "rm": _g("f r R d v i I force recursive dir verbose"),
    "rmdir": _g("p v parents verbose ignore-fail-on-non-empty"),
    "mv": _g(
        "f i n v u T force no-clobber verbose update no-target-directory", "", "t target-directory"
    ),
    "cp": _g(
        "r R a p f i n v u T P recursive archive force no-clobber verbose update "
        "no-dereference no-target-directory",
        "",
        "t target-directory",
    ),
    "sed": _g("i E r n s z in-place regexp-extended quiet silent separate", "e expression"),
}

#: One ``s`` command (any delimiter but a letter, digit, backslash or newline)
#: with flags that neither write a file nor run a command, or one ``y``.
_SED_SCRIPT = re.compile(
    r"s(?P<d>[^\w\\\n])(?:(?!(?P=d))[^\\\n]|\\[^\n])*(?P=d)"
    r"(?:(?!(?P=d))[^\\\n]|\\[^\n])*(?P=d)[gpiImM0-9]*"
    r"|y(?P<e>[^\w\\\n])(?:(?!(?P=e))[^\\\n]|\\[^\n])*(?P=e)"
    r"(?:(?!(?P=e))[^\\\n]|\\[^\n])*(?P=e)"
)


class Operand(Struct, frozen=True):
    """A path one file command touches, as the line spells it."""

    program: str
    path: str

    @property
    def removes(self) -> bool:
        return self.program in REMOVING


def edit_operands(command: str) -> tuple[Operand, ...] | None:
    """Every path the line touches, when it is made of file commands only
    (see the module docstring); None: not for ``acceptEdits`` to allow."""
    if "<" in command or ">" in command or _defines(command):
        return None
    line = parse_command_line(command)
    if isinstance(line, Opaque) or not isinstance(line, CommandLine) or not line.commands:
        return None
    operands: list[Operand] = []
    for simple in line.commands:
        paths = _paths(simple)
        if not paths:
            return None
        operands.extend(paths)
    return tuple(operands)


#: Syntax that changes what a later command name means or where it is looked up.
_DEFINING: Final = frozenset(
    {"variable_assignment", "declaration_command", "function_definition", "unset_command"}
)


def _defines(command: str) -> bool:
    """True when the line assigns a variable or defines a function (or does
    not parse: the caller then asks anyway)."""
    tree = parse_tree(command)
    if isinstance(tree, Opaque):
        return True
    stack = [tree[0]]
    while stack:
        node = stack.pop()
        if node.type in _DEFINING:
            return True
        stack.extend(node.children)
    return False


def _paths(simple: SimpleCommand) -> tuple[Operand, ...] | None:
    if simple.shell or simple.starts != (0,):
        return None
    words = simple.argv
    if not all(word.fixed and word.value is not None for word in words):
        return None
    program = words[0].value
    if program not in FILE_COMMANDS:
        return None
    read = _read_arguments(program, words[1:])
    if read is None:
        return None
    operands, options = read
    if program == "sed":
        return _sed(operands, options)
    return tuple(Operand(program=program, path=path) for path in operands) or None


class _Options(Struct):
    seen: set[str]
    values: list[tuple[str, str]]


def _read_arguments(program: str, words: tuple[Word, ...]) -> tuple[list[str], _Options] | None:
    """Operands (paths, and path-valued option values) and options, or None
    for anything outside the command's grammar."""
    grammar = GRAMMARS[program]
    options = _Options(seen=set(), values=[])
    operands: list[str] = []
    index = 0
    ended = False
    while index < len(words):
        text = words[index].value or ""
        index += 1
        if ended or text == "-" or not text.startswith("-"):
            operands.append(text)
            continue
        if text == "--":
            ended = True
            continue
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if name in grammar.flags and not eq:
                options.seen.add(name)
                continue
            if name not in grammar.valued | grammar.path_valued:
                return None
            if not eq:
                if index >= len(words):
                    return None
                value, index = words[index].value or "", index + 1
            _option_value(name, value, grammar, options, operands)
            continue
        letters = text[1:]
        for position, letter in enumerate(letters):
            if letter in grammar.flags:
                options.seen.add(letter)
                continue
            if letter not in grammar.valued | grammar.path_valued:
                return None
            value = letters[position + 1 :]
            if not value:
                if index >= len(words):
                    return None
                value, index = words[index].value or "", index + 1
            _option_value(letter, value, grammar, options, operands)
            break
    return operands, options


def _option_value(
    name: str, value: str, grammar: Grammar, options: _Options, operands: list[str]
) -> None:
    options.seen.add(name)
    if name in grammar.path_valued:
        operands.append(value)
    else:
        options.values.append((name, value))


def _sed(operands: list[str], options: _Options) -> tuple[Operand, ...] | None:
    """``sed -i`` with one ``s``/``y`` script: the files it edits."""
    if not options.seen & {"i", "in-place"}:
        return None
    scripts = [value for name, value in options.values if name in ("e", "expression")]
    if not scripts:
        if not operands:
            return None
        scripts, operands = [operands[0]], operands[1:]
    if not operands or not all(_SED_SCRIPT.fullmatch(script) for script in scripts):
        return None
    return tuple(Operand(program="sed", path=path) for path in operands)
