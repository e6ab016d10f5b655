"""How a wrapper's arguments are read to find what it runs (DEC-PERM-BASH-4).

``env``, ``sudo``, ``timeout``, ``taskset``, ``chroot``... run another program:
:data:`agentx.messages.bash.wrapper_table.WRAPPERS` maps each to a reader of
its options (getopt style, one :class:`Options` value per wrapper, or one of
the readers here), which finds where the wrapped program starts. A reader
returns the index of that program, ``None`` when the wrapper runs none,
:class:`ShellText` when it runs a shell command line it joins from its
arguments (``watch``, ``parallel``, ``sg``), or
:class:`~agentx.messages.bash.words.Opaque` when its arguments cannot be read:
an option the reader does not know, or a word in option or operand position
that bash expands. The caller fails closed on it (DEC-PERM-BASH-5).

Shells and their ``-c`` bodies are :mod:`agentx.messages.bash.shells`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from msgspec import Struct

from agentx.messages.bash.words import Opaque, Word, executed_variable, shown

#: The extra arguments ``xargs`` appends: unknown, possibly none.
XARGS_INPUT: Final = Word(value=None, fixed=False, raw="")


class ShellText(Struct, frozen=True):
    """A command line a wrapper hands to ``sh -c``, parsed again by the caller."""

    text: str


#: A wrapper's argument reader: from the index after the wrapper's name, the
#: index of the program it runs; ``None`` when it runs none; :class:`ShellText`
#: for a command line it runs through a shell; :class:`Opaque` when its
#: arguments cannot be read.
Skip = Callable[[list[Word], int], int | ShellText | Opaque | None]


class Options(Struct, frozen=True):
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
    #: Short options bundled with a value that cannot be told apart (``parallel -l``).
    ambiguous: str = ""

    def __call__(self, argv: list[Word], index: int) -> int | Opaque | None:
        index_or_stop = self.skip_options(argv, index)
        if not isinstance(index_or_stop, int):
            return index_or_stop
        index = index_or_stop
        for operand in argv[index : index + self.operands]:
            if operand.value is None or not operand.fixed:
                # An expansion may be no word or several: the program's place is unknown.
                return Opaque("a wrapper's argument is not a plain word")
        index += self.operands
        while self.assignments and index < len(argv) and _is_assignment(argv[index]):
            if executed_variable((argv[index].value or "").split("=", 1)[0]):
                return Opaque("an environment variable bash runs")
            index += 1
        return index

    def skip_options(self, argv: list[Word], index: int) -> int | Opaque | None:
        """The index after the options (and a ``--``)."""
        while index < len(argv):
            word = argv[index]
            text = word.value
            if text is None or not word.fixed:
                return Opaque("a wrapper's argument is not a plain word")
            if text == "--":
                return index + 1
            if not text.startswith("-") or text == "-":
                break
            step = self._option(text)
            if not isinstance(step, int):
                return step
            index += step
        return index

    def _option(self, text: str) -> int | Opaque | None:
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            if name in self.stops:
                return None
            if name in self.long_flags or (name in self.long_with_value and "=" in text):
                return 1
            if name in self.long_with_value:
                return 2
            return Opaque(f"an option the matcher does not know: {shown(text)}")
        if self.numbers and text[1:].isdigit():
            return 1
        for position, letter in enumerate(text[1:], start=1):
            if "-" + letter in self.stops:
                return None
            last = position == len(text) - 1
            if letter in self.ambiguous and last:
                return Opaque(f"an option whose value the matcher cannot tell: {shown(text)}")
            if letter in self.optional_value or letter in self.ambiguous:
                return 1
            if letter in self.with_value:
                return 2 if last else 1
            if letter not in self.flags:
                return Opaque(f"an option the matcher does not know: {shown(text)}")
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


def env(argv: list[Word], index: int) -> int | Opaque | None:
    """``env``: options, ``NAME=VALUE`` words, then the program; ``-S`` is opaque."""
    for word in argv[index:]:
        text = word.value or ""
        if not text.startswith("-"):
            break
        if _ENV_SPLIT.match(text):
            return Opaque("env -S splits a string the matcher cannot follow")
    return _env(argv, index)


# --- readers for wrappers getopt alone does not describe -----------------------


class NumberOperand(Struct, frozen=True):
    """Options, then an optional numeric operand (``chrt -f 10 cmd``, ``chrt -o cmd``)."""

    options: Options

    def __call__(self, argv: list[Word], index: int) -> int | Opaque | None:
        after = self.options(argv, index)
        if isinstance(after, int) and after < len(argv) and (argv[after].value or "").isdigit():
            return after + 1
        return after


class LongOnly(Struct, frozen=True):
    """Options spelt ``--name`` or ``--name=value`` only, plus a few short flags
    (``firejail``, ``valgrind``): one word each, whatever the name."""

    flags: str = ""

    def __call__(self, argv: list[Word], index: int) -> int | Opaque | None:
        while index < len(argv):
            word = argv[index]
            text = word.value
            if text is None or not word.fixed:
                return Opaque("a wrapper's argument is not a plain word")
            if text == "--":
                return index + 1
            if not text.startswith("-") or text == "-":
                break
            if not text.startswith("--") and any(c not in self.flags for c in text[1:]):
                return Opaque(f"an option the matcher does not know: {shown(text)}")
            index += 1
        return index


class LeadingOperand(Struct, frozen=True):
    """An operand before the options (``setarch ARCH [options] cmd``)."""

    options: Options

    def __call__(self, argv: list[Word], index: int) -> int | Opaque | None:
        if index < len(argv) and not (argv[index].value or "-").startswith("-"):
            if not argv[index].fixed:
                return Opaque("a wrapper's argument is not a plain word")
            index += 1
        return self.options(argv, index)


def after_marker(marker: str, operands: int = 0) -> Skip:
    """The program after ``marker`` (``gdb ... --args cmd``); none without it."""

    def skip(argv: list[Word], index: int) -> int | Opaque | None:
        for position in range(index, len(argv)):
            word = argv[position]
            if word.value is None or not word.fixed:
                return Opaque("a wrapper's argument is not a plain word")
            if word.value == marker:
                return position + 1 + operands
        return None

    return skip


def opaque_with(subcommands: frozenset[str], who: str) -> Skip:
    """A program that runs shell text it is given by one of ``subcommands``
    (``tmux new-session 'cmd'``, ``tmux send-keys``): opaque when any of its
    words is one, else the program itself."""

    def skip(argv: list[Word], index: int) -> Opaque | None:
        for word in argv[index:]:
            if word.value is None or not word.fixed or word.value in subcommands:
                return Opaque(f"{who} runs shell text the matcher cannot follow")
        return None

    return skip


def ip_netns_exec(argv: list[Word], index: int) -> int | Opaque | None:
    """``ip [-all] netns exec [NAME] cmd``: ``ip`` runs nothing else."""
    words = [w.value for w in argv[index:]]
    for position in range(len(words) - 1):
        if words[position] == "netns" and words[position + 1] == "exec":
            if any(w is None for w in words[: position + 2]):
                return Opaque("a wrapper's argument is not a plain word")
            every = any(w in ("-all", "-a") for w in words[:position])
            after = index + position + 2 + (0 if every else 1)
            if not every and (after > len(argv) or not argv[after - 1].fixed):
                return Opaque("a wrapper's argument is not a plain word")
            return after
    if any(w is None for w in words[:2]):
        return Opaque("a wrapper's argument is not a plain word")
    return None


def _joined(words: list[Word], who: str) -> ShellText | Opaque:
    """Words a wrapper joins with spaces into a line for ``sh -c``."""
    values: list[str] = []
    for word in words:
        if word.value is None or not word.fixed:
            # Its expansion is run by the shell again: what it becomes is unknown.
            return Opaque(f"{who} runs a word bash expands as shell text")
        values.append(word.value)
    return ShellText(" ".join(values))


_WATCH: Final = Options(
    flags="bcCegptwx",
    with_value="nq",
    optional_value="d",
    long_flags=frozenset(
        {"--beep", "--color", "--no-color", "--differences", "--errexit", "--chgexit"}
        | {"--precise", "--no-title", "--no-wrap", "--no-linewrap", "--exec"}
    ),
    long_with_value=frozenset({"--interval", "--equexit"}),
    stops=frozenset({"-h", "-v", "--help", "--version"}),
)


def watch(argv: list[Word], index: int) -> int | ShellText | Opaque | None:
    """``watch [options] cmd...``: the words joined and run by ``sh -c``;
    with ``-x``/``--exec`` run as they are."""
    after = _WATCH(argv, index)
    if not isinstance(after, int) or after >= len(argv):
        return after
    options = [w.value or "" for w in argv[index:after]]
    if any(o == "--exec" or (o[:1] == "-" and o[:2] != "--" and "x" in o) for o in options):
        return after
    return _joined(argv[after:], "watch")


_PARALLEL: Final = Options(
    flags="0kqruvXxmtgG",
    with_value="adEIjJLnPsSCNMW",
    optional_value="ei",
    ambiguous="l",
    long_flags=frozenset(
        {"--null", "--keep-order", "--quote", "--no-run-if-empty", "--ungroup", "--verbose"}
        | {"--xargs", "--bar", "--eta", "--progress", "--tag", "--line-buffer", "--lb"}
        | {"--dry-run", "--pipe", "--pipepart", "--files", "--group", "--shuf", "--silent"}
        | {"--transfer", "--cleanup", "--will-cite", "--no-notice", "--plus", "--fg", "--bg"}
        | {"--halt-on-error", "--keep", "--linebuffer", "--link", "--xapply", "--trc"}
    ),
    long_with_value=frozenset(
        {"--arg-file", "--delimiter", "--jobs", "--max-args", "--max-replace-args"}
        | {"--max-lines", "--max-chars", "--halt", "--joblog", "--results", "--timeout"}
        | {"--retries", "--delay", "--memfree", "--load", "--nice", "--tmpdir", "--block"}
        | {"--header", "--env", "--workdir", "--sshlogin", "--basefile", "--return", "--id"}
        | {"--colsep", "--trim", "--replace", "--tagstring", "--rpl", "--sshloginfile"}
        | {"--max-procs", "--eof", "--ssh", "--termseq", "--resume-failed", "--resume"}
    ),
    stops=frozenset({"--help", "--version", "--citation", "--number-of-cpus"}),
)
#: What ends a ``parallel`` command and starts its arguments.
_PARALLEL_ARGS: Final = frozenset({":::", "::::", ":::+", "::::+"})


def parallel(argv: list[Word], index: int) -> int | ShellText | Opaque | None:
    """``parallel [options] cmd... ::: args``: the command's words joined and
    run by a shell, with its arguments added where ``{}`` stands or at the end.

    No command means the arguments are the commands: opaque. The arguments,
    unknown words, are appended as an expansion, so a wrapper or shell left
    without its program (``parallel env ::: curl``) is opaque.
    """
    after = _PARALLEL(argv, index)
    if not isinstance(after, int):
        return after
    end = after
    while end < len(argv) and argv[end].value not in _PARALLEL_ARGS:
        end += 1
    if end == after:
        return Opaque("parallel runs its arguments as commands")
    line = _joined(argv[after:end], "parallel")
    if isinstance(line, Opaque) or "{" in line.text:
        return line
    return ShellText(line.text + " $PARALLEL_ARGUMENTS")


def sg(argv: list[Word], index: int) -> ShellText | Opaque | None:
    """``sg [-] GROUP [-c] cmd``: the command is run by ``sh -c``."""
    words = argv[index:]
    if words and words[0].value == "-":
        words = words[1:]
    if not words:
        return None
    if words[0].value is None or not words[0].fixed:
        return Opaque("a wrapper's argument is not a plain word")
    rest = words[1:]
    if rest and rest[0].value == "-c":
        rest = rest[1:]
    if not rest:
        return Opaque("sg starts a shell on its input")
    return _joined(rest, "sg")
