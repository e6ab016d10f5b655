"""The wrappers a Bash permission rule sees through (DEC-PERM-PATH).

``env``, ``sudo``, ``timeout``, ``xargs``, ``flock``... run another program;
:data:`WRAPPERS` maps each to the reader of its options (getopt style, one
:class:`Options` value per wrapper), which finds where the wrapped program
starts. An option the reader does not know makes the line
:class:`~agentx.messages.bash_words.Opaque`: the caller fails closed.

Shells (:data:`SHELLS`) and the runners of :data:`COMMAND_OPTION_RUNNERS`
(``su -c``, ``flock -c``...) take a body of shell text instead:
:func:`shell_body` and :func:`command_options` find it, and the caller parses
it again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from agentx.messages.bash_words import Opaque, Word, executed_variable, shown

#: Programs that take a ``-c`` body.
SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash"})
#: Programs whose ``-c``/``--command`` value is a command line for a shell.
COMMAND_OPTION_RUNNERS: Final = frozenset({"su", "runuser", "flock", "script"})
#: The extra arguments ``xargs`` appends: unknown, possibly none.
XARGS_INPUT: Final = Word(value=None, fixed=False, raw="")


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
            if executed_variable((argv[index].value or "").split("=", 1)[0]):
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
            return Opaque(f"an option the matcher does not know: {shown(text)}")
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


# --- shell bodies ---------------------------------------------------------------


def command_options(args: list[Word]) -> list[Word]:
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


def shell_body(args: list[Word]) -> Word | Opaque | None:
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
