"""The simple commands of a Bash command line, for Bash permission rules (DEC-PERM-PATH).

The line is parsed with the tree-sitter Bash grammar (``tree-sitter-bash``);
nothing here splits shell text by hand. Every ``command`` node of the tree is a
simple command, wherever it sits: pipelines, lists, subshells, groups,
functions, loops, command and process substitutions, arithmetic, ``[[ ]]``
tests, heredoc bodies, array subscripts, assignment values.

Each simple command is reduced to its words after quote removal, variable
assignments dropped and the program normalised to its base name
(``/usr/bin/curl``, ``c\\url``, ``"curl"``, ``'cu'rl`` are all ``curl``). The
wrappers in :data:`WRAPPERS` (``env``, ``sudo``, ``timeout``, ``xargs``, ``flock``...) are
seen through: the command keeps one *layer* per program it passes through, so
``sudo -u x curl y`` has the layers ``sudo -u x curl y`` and ``curl y``. A
shell's ``-c`` body (``bash -c``, ``sh -c``, ``su -c``, ``flock -c``...), an ``alias`` value and a
``trap`` action are parsed again, and the command of a ``find -exec`` is a
simple command of its own, at most :data:`MAX_SHELL_DEPTH` levels deep.

Whatever the matcher cannot see through makes the whole line :class:`Opaque`:
a parse error, ``eval``, ``source``/``.``, a variable or a substitution in
program position, an assignment to a variable bash executes (``BASH_ENV``,
``PS4``...), too deep a nesting. The caller fails closed on it.

The grammar is imported on the first parse, not at start-up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tree_sitter import Language, Node

#: How many shell bodies (``bash -c``, ``alias``, ``trap``) may nest in one another.
MAX_SHELL_DEPTH: Final = 8

#: How much of the command a reason quotes.
SHOWN_CHARS: Final = 40
#: Programs whose argument is shell text run by the current shell, which the
#: matcher cannot follow.
OPAQUE_PROGRAMS: Final = frozenset({"eval", "source", "."})
#: Programs that take a ``-c`` body.
SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash"})
#: Programs whose ``-c``/``--command`` value is a command line for a shell.
COMMAND_OPTION_RUNNERS: Final = frozenset({"su", "runuser", "flock", "script"})
#: ``find`` actions whose arguments are a command.
_FIND_ACTIONS: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
#: Variables whose value bash itself runs or expands later.
_EXECUTED_VARIABLES: Final = frozenset(
    {"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS"}
)
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
#: Unquoted characters that make bash expand a word (globs, extglob, braces).
_PATTERN = re.compile(r"[*?\[({]")
#: Nodes that are one simple command: bash ends them at an unescaped line break.
_SIMPLE: Final = frozenset({"command", "declaration_command", "unset_command"})
#: Leaves that bash ends at an unescaped line break.
_ONE_LINE: Final = frozenset(
    {"word", "number", "variable_name", "special_variable_name", "file_descriptor"}
    | {"test_operator", "extglob_pattern"}
)


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a simple command.

    ``value`` is the text after quote removal, ``None`` when an expansion or a
    substitution decides it; ``fixed`` says bash passes exactly ``value`` (no
    expansion, glob, brace or tilde); ``raw`` is the source text.
    """

    value: str | None
    fixed: bool
    raw: str


#: The extra arguments ``xargs`` appends: unknown, possibly none.
XARGS_INPUT: Final = Word(value=None, fixed=False, raw="")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
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


@dataclass(frozen=True, slots=True)
class CommandLine:
    """Every simple command of a line the matcher saw through."""

    commands: tuple[SimpleCommand, ...]


@dataclass(frozen=True, slots=True)
class Opaque:
    """A line the matcher cannot see through, and why."""

    reason: str


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
    program = _base_name(words[0])
    return None if program is None else (program, *words[1:])


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
            if node.type in _ONE_LINE and "\n" in _unescaped(_text(node)):
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
        if name is not None and _executed_variable(_text(name).split("[", 1)[0]):
            return Opaque(f"an assignment to {_shown(_text(name))}, which bash runs")
        return None
    if kind in ("declaration_command", "unset_command"):
        keyword = _text(node.children[0])
        words = (_word(child) for child in node.children[1:] if child.is_named)
        out.append(SimpleCommand(argv=(Word(keyword, True, keyword), *words)))
        return None
    if kind == "command":
        return _command(node, depth, out)
    if kind == "redirected_statement":
        body = node.child_by_field_name("body")
        if (body is None or body.type != "command") and _redirect_words(node):
            return Opaque("words after a redirection that belong to no command")
    return None


def _executed_variable(name: str) -> bool:
    return name in _EXECUTED_VARIABLES or name.startswith("BASH_FUNC_")


# --- one simple command -------------------------------------------------------


def _command(node: Node, depth: int, out: list[SimpleCommand]) -> Opaque | None:
    words = _command_words(node)
    if words is None:
        return Opaque("a command the matcher cannot read")
    return _unwrap([*words, *_joined(_trailing_words(node))], depth, out)


def _unwrap(argv: list[Word], depth: int, out: list[SimpleCommand]) -> Opaque | None:
    """List one simple command, seeing through its wrappers to the program that runs."""
    starts: list[int] = []
    index = 0
    while True:
        program = _base_name(argv[index])
        if program is None:
            return Opaque(f"the program {_shown(argv[index].raw)} is not a plain word")
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
            return _with_bodies(name, argv, tuple(starts), depth, out)
        if name in COMMAND_OPTION_RUNNERS and _command_options(argv[index + 1 :]):
            return _with_bodies(name, argv, tuple(starts), depth, out)
        skip = WRAPPERS.get(name)
        if skip is None:
            break
        after = skip(argv, index + 1)
        if isinstance(after, Opaque):
            return after
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
    name: str, argv: list[Word], starts: tuple[int, ...], depth: int, out: list[SimpleCommand]
) -> Opaque | None:
    """A shell's ``-c`` body, an ``alias`` value or a ``trap`` action, parsed again."""
    args = argv[starts[-1] + 1 :]
    if name == "alias":
        bodies = [w for w in args if w.value is None or "=" in w.value]
        texts = [None if w.value is None else w.value.split("=", 1)[1] for w in bodies]
    elif name == "trap":
        action = args[1:] if args and args[0].value == "--" else args
        first = action[0].value if action else "-"
        texts = [] if first is not None and first.startswith("-") else [first]
    elif name in COMMAND_OPTION_RUNNERS:
        texts = [body.value for body in _command_options(args)]
    else:
        body = _shell_body(args)
        if isinstance(body, Opaque):
            return body
        texts = [] if body is None else [None if body.value is None else body.value]
    shell = (name in SHELLS or name in COMMAND_OPTION_RUNNERS) and bool(texts)
    out.append(SimpleCommand(argv=tuple(argv), starts=starts, shell=shell))
    for text in texts:
        if text is None:
            return Opaque(f"the text {name} runs is not a plain word")
        found = _collect(text, depth + 1, out)
        if found is not None:
            return found
    return None


def _command_options(args: list[Word]) -> list[Word]:
    """Every ``-c``/``--command``/``--session-command`` value (``su``, ``runuser``, ...).

    All of them: the options are permuted and the last one wins.
    """
    bodies: list[Word] = []
    for index, word in enumerate(args):
        text = word.value or ""
        following = args[index + 1 : index + 2]
        if text in ("-c", "--command", "--session-command"):
            bodies.extend(following)
        elif text.startswith(("--command=", "--session-command=")):
            bodies.append(Word(text.split("=", 1)[1], word.fixed, word.raw))
        elif text.startswith("-") and not text.startswith("--") and "c" in text:
            attached = text[text.index("c") + 1 :]
            bodies.extend([Word(attached, word.fixed, word.raw)] if attached else following)
    return bodies


def _shell_body(args: list[Word]) -> Word | Opaque | None:
    """The ``-c`` body of a shell's arguments; ``None`` when it runs a file or stdin."""
    index, has_c = 0, False
    while index < len(args):
        word = args[index]
        text = word.value
        if text is None or not word.fixed:
            return Opaque("a shell option is not a plain word")
        if text in ("-", "--") or not text.startswith(("-", "+")):
            index += text in ("-", "--")
            break
        if text.startswith("--"):
            index += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        has_c = has_c or (text[0] == "-" and "c" in text)
        index += 1 + sum(text.count(letter) for letter in "oO")
    if not has_c:
        return None
    return args[index] if index < len(args) else None


def _command_words(node: Node) -> tuple[Word, ...] | None:
    name = node.child_by_field_name("name")
    if name is None or name.named_child_count != 1:
        return None
    return _joined([name.named_children[0], *node.children_by_field_name("argument")])


def _joined(nodes: list[Node]) -> tuple[Word, ...]:
    """Words of adjacent nodes as bash reads them: with nothing between, one word.

    tree-sitter-bash sometimes splits one word in two (``'sh -c '\\curl``).
    """
    words: list[Word] = []
    end = -1
    for node in nodes:
        word = _word(node)
        if node.start_byte == end and words:
            last = words[-1]
            value = None if last.value is None or word.value is None else last.value + word.value
            word = Word(value, last.fixed and word.fixed, last.raw + word.raw)
            words[-1] = word
        else:
            words.append(word)
        end = node.end_byte
    return tuple(words)


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


def _base_name(word: Word) -> Word | None:
    if word.value is None or not word.fixed:
        return None
    base = word.value.rsplit("/", 1)[-1]
    return Word(base, True, word.raw) if base else None


def _has_short_option(word: Word, letter: str) -> bool:
    text = word.value or ""
    return text.startswith("-") and not text.startswith("--") and letter in text


# --- words ----------------------------------------------------------------------


def _shown(text: str) -> str:
    """Shell text quoted in a reason, cut to :data:`SHOWN_CHARS`."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "...")


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _word(node: Node) -> Word:
    raw = _text(node)
    kind = node.type
    if kind == "word":
        value = _unquoted(raw)
        fixed = not (_PATTERN.search(_unescaped(raw)) or raw.startswith("~"))
        return Word(value, fixed, raw)
    if kind == "number":
        return Word(raw, True, raw)
    if kind == "raw_string":
        return Word(raw[1:-1], True, raw)
    if kind == "string" and all(c.type == "string_content" for c in node.named_children):
        return Word(_double_quoted(raw[1:-1]), True, raw)
    if kind == "concatenation":
        parts = [_word(c) for c in node.children]
        if sum(len(p.raw) for p in parts) == len(raw) and all(p.value is not None for p in parts):
            return Word("".join(p.value or "" for p in parts), all(p.fixed for p in parts), raw)
    return Word(None, False, raw)


_UNQUOTED_ESCAPE = re.compile(r"\\(\n|.)", re.DOTALL)
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([\\$`\"\n])")


def _unquoted(raw: str) -> str:
    """Quote removal for an unquoted word: ``\\x`` is ``x``, ``\\<newline>`` nothing."""
    return _UNQUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], raw)


def _unescaped(raw: str) -> str:
    """The characters of an unquoted word that bash still interprets."""
    return _UNQUOTED_ESCAPE.sub("", raw)


def _double_quoted(raw: str) -> str:
    """Inside double quotes a backslash escapes only ``\\ $ ` "`` and newline."""
    return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], raw)


# --- wrappers -------------------------------------------------------------------

#: A wrapper's argument reader: from the index after the wrapper's name, the
#: index of the program it runs; ``None`` when it runs none; :class:`Opaque`
#: when its options cannot be read.
Skip = Callable[[list[Word], int], int | Opaque | None]


@dataclass(frozen=True, slots=True)
class Options:
    """A wrapper's option syntax (getopt style) and what follows the options."""

    flags: str = ""
    with_value: str = ""
    optional_value: str = ""
    long_flags: frozenset[str] = frozenset()
    long_with_value: frozenset[str] = frozenset()
    #: Options after which the wrapper runs no program.
    stops: frozenset[str] = frozenset()
    #: Operands between the options and the program (``timeout``'s duration).
    operands: int = 0
    #: ``NAME=VALUE`` arguments before the program (``env``, ``sudo``).
    assignments: bool = False
    #: A bare number is an option (``nice -5``).
    numbers: bool = False

    def __call__(self, argv: list[Word], index: int) -> int | Opaque | None:
        while index < len(argv):
            word = argv[index]
            text = word.value
            if text is None or not word.fixed:
                return Opaque("a wrapper's argument is not a plain word")
            if text == "--":
                index += 1
                break
            if not text.startswith("-") or text == "-":
                break
            step = self._option(text, argv, index)
            if not isinstance(step, int):
                return step
            index += step
        index += self.operands
        while self.assignments and index < len(argv) and _is_assignment(argv[index]):
            if _executed_variable((argv[index].value or "").split("=", 1)[0]):
                return Opaque("an environment variable bash runs")
            index += 1
        return index

    def _option(self, text: str, argv: list[Word], index: int) -> int | Opaque | None:
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            if name in self.stops:
                return None
            if name in self.long_flags or (name in self.long_with_value and "=" in text):
                return 1
            if name in self.long_with_value:
                return 2
            return Opaque(f"an option the matcher does not know: {_shown(text)}")
        if self.numbers and text[1:].isdigit():
            return 1
        for position, letter in enumerate(text[1:], start=1):
            if "-" + letter in self.stops:
                return None
            if letter in self.optional_value:
                return 1
            if letter in self.with_value:
                return 1 if position < len(text) - 1 else 2
            if letter not in self.flags:
                return Opaque(f"an option the matcher does not know: {_shown(text)}")
        return 1


def _is_assignment(word: Word) -> bool:
    # ``env`` takes any argument with ``=`` for one, even ``=x``.
    return "=" in (word.value or "")


def _env(argv: list[Word], index: int) -> int | Opaque | None:
    if index < len(argv) and argv[index].value == "-":  # ``env -`` is ``env -i``
        index += 1
    return _ENV_OPTIONS(argv, index)


_ENV_OPTIONS: Final = Options(
    flags="i0v",
    with_value="uC",
    long_flags=frozenset(
        {"--ignore-environment", "--null", "--debug", "--list-signal-handling"}
        | {"--default-signal", "--ignore-signal", "--block-signal"}
    ),
    long_with_value=frozenset({"--unset", "--chdir"}),
    assignments=True,
)

#: ``env -S``/``--split-string`` splits a string into a command line of its own.
_ENV_SPLIT: Final = re.compile(r"-[i0v]*S|--split-string")


def _env_checked(argv: list[Word], index: int) -> int | Opaque | None:
    for word in argv[index:]:
        text = word.value or ""
        if not text.startswith("-"):
            break
        if _ENV_SPLIT.match(text):
            return Opaque("env -S splits a string the matcher cannot follow")
    return _env(argv, index)


WRAPPERS: Final[dict[str, Skip]] = {
    "env": _env_checked,
    "command": Options(flags="p", stops=frozenset({"-v", "-V"})),
    "builtin": Options(),
    "exec": Options(flags="cl", with_value="a"),
    "nohup": Options(),
    # The keywords ``!``, ``time`` and ``coproc`` the grammar can read as programs
    # (``! ! X=1 cmd``) take a whole simple command, assignments included.
    "!": Options(assignments=True),
    "coproc": Options(assignments=True),
    "time": Options(
        flags="pavq",
        with_value="fo",
        long_flags=frozenset({"--portability", "--append", "--verbose", "--quiet"}),
        long_with_value=frozenset({"--format", "--output"}),
        assignments=True,
    ),
    "nice": Options(with_value="n", long_with_value=frozenset({"--adjustment"}), numbers=True),
    "timeout": Options(
        flags="vpf",
        with_value="ks",
        long_flags=frozenset({"--preserve-status", "--foreground", "--verbose"}),
        long_with_value=frozenset({"--kill-after", "--signal"}),
        operands=1,
    ),
    "xargs": Options(
        flags="0prtxo",
        with_value="adEILnPs",
        optional_value="eil",
        long_flags=frozenset(
            {"--null", "--interactive", "--no-run-if-empty", "--verbose", "--exit"}
            | {"--open-tty", "--eof", "--replace", "--max-lines"}
        ),
        long_with_value=frozenset(
            {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"}
            | {"--process-slot-var"}
        ),
    ),
    "setsid": Options(flags="cfw", long_flags=frozenset({"--ctty", "--fork", "--wait"})),
    "stdbuf": Options(
        with_value="ioe", long_with_value=frozenset({"--input", "--output", "--error"})
    ),
    "ionice": Options(
        flags="t",
        with_value="cn",
        long_flags=frozenset({"--ignore"}),
        long_with_value=frozenset({"--class", "--classdata"}),
        stops=frozenset({"-p", "-P", "-u", "--pid", "--pgid", "--uid"}),
    ),
    # ``runuser -u USER cmd...`` (``su``/``runuser -c`` is a shell body, read before this).
    "runuser": Options(
        flags="lmpP",
        with_value="ugGsw",
        long_flags=frozenset({"--login", "--preserve-environment", "--pty"}),
        long_with_value=frozenset(
            {"--user", "--group", "--supp-group", "--shell", "--whitelist-environment"}
        ),
    ),
    "doas": Options(flags="nsL", with_value="ua", stops=frozenset({"-C"})),
    # ``flock FILE cmd...`` (``flock -c`` is a shell body, read before this).
    "flock": Options(
        flags="sxeunoF",
        with_value="wE",
        long_flags=frozenset(
            {"--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close"}
            | {"--no-fork", "--verbose"}
        ),
        long_with_value=frozenset({"--wait", "--timeout", "--conflict-exit-code"}),
        operands=1,
    ),
    "sudo": Options(
        flags="AbBEHiKknPSsNh",
        with_value="ugCDprtTUR",
        long_flags=frozenset(
            {"--askpass", "--background", "--bell", "--preserve-env", "--set-home"}
            | {"--login", "--remove-timestamp", "--reset-timestamp", "--non-interactive"}
            | {"--preserve-groups", "--stdin", "--shell", "--help"}
        ),
        long_with_value=frozenset(
            {"--user", "--group", "--close-from", "--chdir", "--host", "--prompt"}
            | {"--role", "--type", "--command-timeout", "--other-user", "--chroot"}
        ),
        stops=frozenset({"-e", "-l", "-v", "-V", "--edit", "--list", "--validate", "--version"}),
        assignments=True,
    ),
}
