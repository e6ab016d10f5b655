"""What a Bash permission prompt says the command runs (WIRE-PERM-003).

The ``description`` of a ``can_use_tool`` request for Bash is never the
model's own prose (its ``description`` input) and never the command's first
line: a ``curl ... | sh`` on line two, in a ``bash -c`` body or a heredoc fed
to a shell would be invisible. It lists every simple command of the parsed
line (:mod:`agentx.messages.bash.commands`), in source order, wrappers and
shell bodies included, separated by ``; ``, on one line (a line break inside a
word shows as ``\\n``).

Bounded by :data:`MAX_SUMMARY_CHARS`: past it each simple command shows only
the programs of its layers (``sudo curl``), and past that again the distinct
programs with how many simple commands there are; every program the line
runs is named at every size, up to the bound. A line the matcher cannot see
through says so, with the reason, before its text (cut in the middle past the
bound, so its end stays visible).
"""

from __future__ import annotations

from typing import Final

from agentx.messages.bash.commands import CommandLine, SimpleCommand, parse_command_line
from agentx.messages.bash.words import Opaque

#: The longest summary; the whole command is always in the request's ``input``.
MAX_SUMMARY_CHARS: Final = 1000
_CUT: Final = "…"


def _one_line(text: str) -> str:
    return text.replace("\n", "\\n").replace("\r", "\\r")


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_SUMMARY_CHARS else text[: MAX_SUMMARY_CHARS - 1] + _CUT


def _ends(head: str, text: str) -> str:
    """``head`` and ``text``, whose middle gives way past the bound: its start
    and its end stay visible (a ``| sh`` at the end of a long line too)."""
    if len(head) + len(text) <= MAX_SUMMARY_CHARS:
        return head + text
    room = MAX_SUMMARY_CHARS - len(head) - len(_CUT)
    return head + text[: room // 2] + _CUT + text[len(text) - (room - room // 2) :]


def _words(simple: SimpleCommand) -> str:
    return " ".join(_one_line(word.raw or (word.value or "")) for word in simple.argv if word.raw)


def _programs(simple: SimpleCommand) -> tuple[str, ...]:
    return tuple(_one_line(simple.argv[start].value or "") for start in simple.starts)


def command_summary(command: str) -> str:
    """The one-line prompt text for ``command`` (see the module docstring)."""
    line = parse_command_line(command)
    if isinstance(line, Opaque):
        return _ends(f"(cannot be checked: {line.reason}) ", _one_line(command.strip()))
    return _summary(line) or _bounded(_one_line(command.strip()))


def _summary(line: CommandLine) -> str:
    if not line.commands:  # only assignments or comments: the text is all there is
        return ""
    full = "; ".join(_words(simple) for simple in line.commands)
    if len(full) <= MAX_SUMMARY_CHARS:
        return full
    shapes = "; ".join(" ".join(_programs(simple)) + " …" for simple in line.commands)
    if len(shapes) <= MAX_SUMMARY_CHARS:
        return shapes
    distinct = dict.fromkeys(name for simple in line.commands for name in _programs(simple))
    return _bounded(f"{len(line.commands)} commands running: " + ", ".join(distinct))
