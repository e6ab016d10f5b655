"""The simple commands of a Bash command line, for Bash permission rules (DEC-PERM-PATH).

The line is parsed with the tree-sitter Bash grammar (``tree-sitter-bash``);
nothing here splits shell text by hand. Every ``command`` node of the tree is a
simple command, wherever it sits: pipelines, lists, subshells, groups,
functions, loops, command and process substitutions, arithmetic, ``[[ ]]``
tests, heredoc bodies, array subscripts, assignment values.

Each simple command is reduced to its words after quote removal, variable
assignments dropped and the program normalised to its base name
(``/usr/bin/curl``, ``c\\url``, ``"curl"``, ``'cu'rl`` are all ``curl``). The
wrappers in :data:`~agentx.messages.bash.wrapper_table.WRAPPERS` (``env``,
``sudo``, ``timeout``, ``xargs``, ``taskset``, ``chroot``...) are seen through: the command
keeps one *layer* per program it passes through, so ``sudo -u x curl y`` has
the layers ``sudo -u x curl y`` and ``curl y``. A shell's ``-c`` body
(``bash -c``, ``sh -c``, ``su -c``, ``flock -c``...), a shell's input when the
line spells it as a literal (:mod:`agentx.messages.bash.shells`), the command
line ``watch``, ``parallel`` or ``sg`` hands to ``sh -c``, an ``alias`` value
and a ``trap`` action are parsed again, and the command of a ``find -exec`` is a
simple command of its own, at most :data:`MAX_SHELL_DEPTH` levels deep. The
words are read by :mod:`agentx.messages.bash.words`.

Whatever the matcher cannot see through makes the whole line :class:`Opaque`:
a parse error, ``eval``, ``source``/``.``, a variable or a substitution in
program position, a shell running a script file or an input the line does not
spell, a wrapper whose arguments cannot be read, an assignment to a variable
bash executes (``BASH_ENV``, ``PS4``...), too deep a nesting. The caller fails closed on it.

The grammar is imported on the first parse, not at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Final

from msgspec import Struct

from agentx.messages.bash.shells import (
    COMMAND_OPTION_RUNNERS,
    SHELL_STARTERS,
    SHELLS,
    command_options,
    shell_source,
    stdin_literal,
)
from agentx.messages.bash.words import (
    Opaque,
    Word,
    base_name,
    executed_variable,
    joined,
    node_text,
    read_word,
    shown,
    unescaped,
)
from agentx.messages.bash.wrapper_table import SHELL_WHEN_EMPTY, WRAPPERS
from agentx.messages.bash.wrappers import XARGS_INPUT, ShellText

if TYPE_CHECKING:
    from tree_sitter import Language, Node

#: The escapes bash removes from a backquoted substitution's body before running it.
_BACKQUOTE_ESCAPE: Final = re.compile(r"\\([$`\\])")
#: How many shell bodies (``bash -c``, ``alias``, ``trap``) may nest in one another.
MAX_SHELL_DEPTH: Final = 8

#: Programs whose argument is shell text run by the current shell, which the
#: matcher cannot follow.
OPAQUE_PROGRAMS: Final = frozenset({"eval", "source", "."})
#: ``find`` actions whose arguments are a command.
_FIND_ACTIONS: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: A builtin option that makes the command reach past the line: ``hash -p``
#: renames a program, ``enable -f`` loads a builtin from a file, ``-C`` of
#: ``mapfile``/``readarray``/``compgen``/``complete`` runs a command string.
_OPAQUE_OPTIONS: Final = {
    "hash": "p",
    "enable": "f",
    "mapfile": "C",
    "readarray": "C",
    "compgen": "C",
    "complete": "C",
}
#: Nodes that are one simple command, and a command with its redirections:
#: bash ends them at an unescaped line break.
_SIMPLE: Final = frozenset(
    {"command", "declaration_command", "unset_command", "redirected_statement"}
)
#: Leaves that bash ends at an unescaped line break.
_ONE_LINE: Final = frozenset(
    {"word", "number", "variable_name", "special_variable_name", "file_descriptor"}
    | {"test_operator", "extglob_pattern"}
)


class SimpleCommand(Struct, frozen=True):
    """A simple command: ``argv`` with the program of each layer normalised.

    ``starts`` holds the index in ``argv`` of each layer's program, outermost
    first; ``starts[-1]`` is the program that runs. ``shell`` marks a shell
    running a ``-c`` body: the body's commands are listed on their own.
    """

    argv: tuple[Word, ...]
    starts: tuple[int, ...] = (0,)
    shell: bool = False

    def layers(self) -> Iterator[tuple[tuple[Word, ...], int]]:
        """Each layer's words and the index in them of the program that runs."""
        for start in self.starts:
            yield self.argv[start:], self.starts[-1] - start


class CommandLine(Struct, frozen=True):
    """Every simple command of a line the matcher saw through."""

    commands: tuple[SimpleCommand, ...]


# --- the grammar -------------------------------------------------------------


@cache
def _language() -> Language:
    # Imported on the first Bash rule check: start-up never pays for it.
    import tree_sitter  # noqa: PLC0415
    import tree_sitter_bash  # noqa: PLC0415

    return tree_sitter.Language(tree_sitter_bash.language())


def _parse(source: bytes) -> Node:
    import tree_sitter  # noqa: PLC0415

    # One parser per call: a parser is not safe to share between threads, and
    # making one costs well under a microsecond.
    return tree_sitter.Parser(_language()).parse(source).root_node


@lru_cache(maxsize=64)
def parse_command_line(text: str) -> CommandLine | Opaque:
    """The simple commands of ``text``, or :class:`Opaque` (never raises)."""
    commands: list[SimpleCommand] = []
    opaque = _collect(text, 0, commands)
    return opaque if opaque is not None else CommandLine(commands=tuple(commands))


@lru_cache(maxsize=64)
def parse_rule_command(text: str) -> tuple[Word, ...] | None:
    """The words of a rule's command (program normalised, no wrapper removed).

    ``None`` when ``text`` is not one simple command with a plain program.
    """
    tree = _tree(text)
    if isinstance(tree, Opaque) or tree[0].named_child_count != 1:
        return None
    node = tree[0].named_children[0]
    if node.type != "command":
        return None
    words = _command_words(node)
    if words is None:
        return None
    program = base_name(words[0])
    return None if program is None else (program, *words[1:])


def parse_tree(text: str) -> tuple[Node, bytes] | Opaque:
    """The syntax tree of ``text`` and its bytes, or :class:`Opaque` when it
    does not parse (for a core that needs more than the simple commands)."""
    return _tree(text)


def _tree(text: str) -> tuple[Node, bytes] | Opaque:
    if "\x00" in text:
        return Opaque("a NUL byte in the command")
    try:
        source = text.encode("utf-8")
    except UnicodeEncodeError:
        return Opaque("the command is not valid Unicode text")
    root = _parse(source)
    if root.has_error:
        return Opaque("the command does not parse")
    return root, source


def _collect(text: str, depth: int, out: list[SimpleCommand]) -> Opaque | None:
    if depth > MAX_SHELL_DEPTH:
        return Opaque(f"shell bodies nested more than {MAX_SHELL_DEPTH} deep")
    tree = _tree(text)
    if isinstance(tree, Opaque):
        return tree
    root, source = tree
    end = 0
    stack = [root]
    while stack:  # iterative, in source order: no depth limit of Python's
        node = stack.pop()
        if node.child_count == 0:
            if node.start_byte > end and source.startswith(b"\\", end):
                # A line continuation glued to a word joins it to the next.
                return Opaque("a line continuation inside a word")
            if node.type in _ONE_LINE and "\n" in unescaped(node_text(node)):
                # The grammar folded a line break into a word; bash ends the command there.
                return Opaque("a line break inside a word")
            end = node.end_byte
            continue
        children = node.children
        if node.type in _SIMPLE and _line_break_between(children, source):
            return Opaque("a line break inside a command")
        found = _visit(node, depth, out)
        if found is not None:
            return found
        stack.extend(reversed(children))
    return None


def _line_break_between(children: list[Node], source: bytes) -> bool:
    """Whether bash would end the command between two of its parts."""
    for before, after in pairwise(children):
        gap = source[before.end_byte : after.start_byte].replace(b"\\\n", b"")
        if b"\n" in gap:
            return True
    return False


def _visit(node: Node, depth: int, out: list[SimpleCommand]) -> Opaque | None:
    kind = node.type
    if kind == "variable_assignment":
        name = node.child_by_field_name("name")
        if name is not None and executed_variable(node_text(name).split("[", 1)[0]):
            return Opaque(f"an assignment to {shown(node_text(name))}, which bash runs")
        return None
    if kind in ("declaration_command", "unset_command"):
        keyword = node_text(node.children[0])
        words = (read_word(child) for child in node.children[1:] if child.is_named)
        out.append(SimpleCommand(argv=(Word(keyword, True, keyword), *words)))
        return None
    if kind == "command":
        return _command(node, depth, out)
    if kind == "command_substitution":
        return _backquoted(node, depth, out)
    if kind == "redirected_statement":
        body = node.child_by_field_name("body")
        if (body is None or body.type != "command") and _redirect_words(node):
            return Opaque("words after a redirection that belong to no command")
    return None


def _backquoted(node: Node, depth: int, out: list[SimpleCommand]) -> Opaque | None:
    r"""A backquoted substitution whose body escapes a backquote, ``$`` or a
    backslash, parsed again as bash runs it.

    Inside backquotes bash removes a backslash before `` ` ``, ``$`` or ``\``
    and then runs the body (bash(1), "Command Substitution"): ``echo `echo
    \`curl\``` runs ``curl``, where the grammar reads ``\`curl\``` as a
    plain word. The unescaped body is one more nesting level, like a ``bash
    -c`` body.
    """
    children = node.children
    if len(children) < 2 or children[0].type != "`" or children[-1].type != "`":
        return None
    body = node_text(node)[1:-1]
    if _BACKQUOTE_ESCAPE.search(body) is None:
        return None
    return _collect(_BACKQUOTE_ESCAPE.sub(r"\1", body), depth + 1, out)


# --- one simple command -------------------------------------------------------


def _command(node: Node, depth: int, out: list[SimpleCommand]) -> Opaque | None:
    words = _command_words(node)
    if words is None:
        return Opaque("a command the matcher cannot read")
    argv = [*words, *joined(_trailing_words(node))]
    return _unwrap(argv, depth, out, lambda: stdin_literal(node))


#: The input of a simple command, read only for a shell that runs it (DEC-PERM-BASH-5).
Stdin = Callable[[], "str | Opaque"]


def _no_stdin() -> Opaque:
    return Opaque("a shell reading an input the line does not spell")


def _unwrap(
    argv: list[Word], depth: int, out: list[SimpleCommand], stdin: Stdin = _no_stdin
) -> Opaque | None:
    """List one simple command, seeing through its wrappers to the program that runs."""
    starts: list[int] = []
    index = 0
    while True:
        program = base_name(argv[index])
        if program is None:
            return Opaque(f"the program {shown(argv[index].raw)} is not a plain word")
        argv[index] = program
        starts.append(index)
        name = program.value
        assert name is not None
        if name in OPAQUE_PROGRAMS:
            return Opaque(f"{name} runs text the matcher cannot see")
        letter = _OPAQUE_OPTIONS.get(name)
        if letter is not None and any(_has_short_option(w, letter) for w in argv[index + 1 :]):
            return Opaque(f"{name} -{letter} reaches past the command line")
        if name in SHELLS or name in ("alias", "trap"):
            return _with_bodies(name, argv, tuple(starts), depth, out, stdin=stdin)
        if name in COMMAND_OPTION_RUNNERS and command_options(argv[index + 1 :]):
            return _with_bodies(name, argv, tuple(starts), depth, out, stdin=stdin)
        if name in SHELL_STARTERS:
            return Opaque(f"{name} starts a shell the matcher cannot see")
        skip = WRAPPERS.get(name)
        if skip is None:
            break
        after = skip(argv, index + 1)
        if isinstance(after, Opaque):
            return after
        if isinstance(after, ShellText):
            # DEC-PERM-BASH-4: ``watch``, ``parallel``, ``sg`` run their words through ``sh -c``.
            out.append(SimpleCommand(argv=tuple(argv), starts=tuple(starts), shell=True))
            return _collect(after.text, depth + 1, out)
        if after is not None and after >= len(argv) and name in SHELL_WHEN_EMPTY:
            return Opaque(f"{name} without a program starts a shell on its input")
        if after is None or after >= len(argv):
            break
        if name == "xargs":
            argv.append(XARGS_INPUT)
        index = after
    out.append(SimpleCommand(argv=tuple(argv), starts=tuple(starts)))
    if argv[index].value == "find":
        return _find_commands(argv[index + 1 :], depth, out)
    return None


def _find_commands(args: list[Word], depth: int, out: list[SimpleCommand]) -> Opaque | None:
    """The commands ``find -exec``/``-execdir``/``-ok``/``-okdir`` runs, up to ``;`` or ``+``."""
    index = 0
    while index < len(args):
        if args[index].value not in _FIND_ACTIONS:
            index += 1
            continue
        end = index + 1
        while end < len(args) and args[end].value not in (";", "+"):
            end += 1
        if end > index + 1:
            if depth >= MAX_SHELL_DEPTH:
                return Opaque(f"commands nested more than {MAX_SHELL_DEPTH} deep")
            found = _unwrap(args[index + 1 : end], depth + 1, out)
            if found is not None:
                return found
        index = end + 1
    return None


def _with_bodies(
    name: str,
    argv: list[Word],
    starts: tuple[int, ...],
    depth: int,
    out: list[SimpleCommand],
    *,
    stdin: Stdin,
) -> Opaque | None:
    """A shell's ``-c`` body or literal input, an ``alias`` value or a ``trap``
    action, parsed again (DEC-PERM-BASH-4/5)."""
    args = argv[starts[-1] + 1 :]
    if name == "alias":
        bodies = [w for w in args if w.value is None or "=" in w.value]
        texts = [None if w.value is None else w.value.split("=", 1)[1] for w in bodies]
    elif name == "trap":
        action = args[1:] if args and args[0].value == "--" else args
        first = action[0].value if action else "-"
        texts = [] if first is not None and first.startswith("-") else [first]
    elif name in COMMAND_OPTION_RUNNERS:
        texts = [body.value for body in command_options(args)]
    else:
        source = shell_source(name, args)
        if isinstance(source, Opaque):
            return source
        if source == "stdin":
            literal = stdin()
            if isinstance(literal, Opaque):
                return Opaque(f"{name} runs its input: {literal.reason}")
            texts = [literal]
        else:
            texts = [source.value]
    shell = (name in SHELLS or name in COMMAND_OPTION_RUNNERS) and bool(texts)
    out.append(SimpleCommand(argv=tuple(argv), starts=starts, shell=shell))
    for text in texts:
        if text is None:
            return Opaque(f"the text {name} runs is not a plain word")
        found = _collect(text, depth + 1, out)
        if found is not None:
            return found
    return None


def _command_words(node: Node) -> tuple[Word, ...] | None:
    name = node.child_by_field_name("name")
    if name is None or name.named_child_count != 1:
        return None
    return joined([name.named_children[0], *node.children_by_field_name("argument")])


def _trailing_words(node: Node) -> list[Node]:
    """Arguments the grammar files under the redirections after the command.

    ``bash -c 2>&1 'curl x'``: tree-sitter-bash reads ``'curl x'`` as a second
    target of ``2>&1``; bash passes it to ``bash`` as an argument.
    """
    parent = node.parent
    if parent is None or parent.type != "redirected_statement":
        return []
    return _redirect_words(parent)


def _redirect_words(statement: Node) -> list[Node]:
    words: list[Node] = []
    stack = statement.children_by_field_name("redirect")
    while stack:
        redirect = stack.pop()
        if redirect.type == "file_redirect":
            targets = redirect.children_by_field_name("destination")
            # The target is the first word, with whatever is glued to it.
            first = 1
            while first < len(targets) and targets[first].start_byte == targets[first - 1].end_byte:
                first += 1
            words.extend(targets[first:])
        elif redirect.type == "heredoc_redirect":
            words.extend(redirect.children_by_field_name("argument"))
            stack.extend(redirect.children_by_field_name("redirect"))
    return sorted(words, key=lambda word: word.start_byte)


def _has_short_option(word: Word, letter: str) -> bool:
    text = word.value or ""
    return text.startswith("-") and not text.startswith("--") and letter in text
