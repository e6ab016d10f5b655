"""Shells and the shell text they run, for Bash permission rules
(DEC-PERM-BASH-4, DEC-PERM-BASH-5).

A shell (:data:`SHELLS`) runs one of three scripts:

- a ``-c`` body (``bash -c 'curl x'``): parsed again like the line;
- a script file (``bash file.sh``, ``sh -- ./x``): opaque, the matcher cannot
  read it;
- its standard input (``bash``, ``sh -s``, ``bash -``): parsed again when that
  input is a literal the line itself spells (:func:`stdin_literal`: a heredoc
  whose body bash does not expand, a herestring of one plain word, a directly
  preceding ``echo``/``printf`` of plain words in the same pipeline), and
  opaque otherwise (``sh < file``, ``cat x | bash``, ``curl ... | sh``, an
  unquoted heredoc with an expansion).

The runners of :data:`COMMAND_OPTION_RUNNERS` take a ``-c``/``--command``
body (:func:`command_options`); without one ``su`` and ``script`` start a
shell of their own on the input, which is opaque (:data:`SHELL_STARTERS`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, Literal

from agentx.messages.bash.words import Opaque, Word, joined, node_text, shown

if TYPE_CHECKING:
    from tree_sitter import Node

#: Programs that run a ``-c`` body, a script file or their input as shell text.
SHELLS: Final = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "ksh93"}
    | {"pdksh", "oksh", "loksh", "fish", "csh", "tcsh", "busybox-sh"}
)
#: Programs whose ``-c``/``--command`` value is a command line for a shell.
COMMAND_OPTION_RUNNERS: Final = frozenset({"su", "runuser", "flock", "script"})
#: Programs that, without a ``-c`` body, start a shell reading the input.
SHELL_STARTERS: Final = frozenset({"su", "script", "newgrp"})

#: Where a shell's script comes from: its ``-c`` body, or its input.
Source = Word | Literal["stdin"]

#: printf escapes a literal input may use, and what they print.
_PRINTF_ESCAPES: Final = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}
_PRINTF_TOKEN: Final = re.compile(r"\\(.)|%(.)", re.DOTALL)


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


def shell_source(name: str, args: list[Word]) -> Source | Opaque:
    """Where the shell ``name`` run with ``args`` takes its script from."""
    index, has_c, has_s = 0, False, False
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
        has_s = has_s or (text[0] == "-" and "s" in text)
        index += 1 + sum(text.count(letter) for letter in "oO")
    if has_c:
        if index < len(args):
            return args[index]
        return Opaque(f"{name} -c without the text it runs")
    if has_s or index >= len(args):
        return "stdin"
    return Opaque(f"{name} runs the script file {shown(args[index].raw)}")


# --- the input a shell reads ------------------------------------------------------


def stdin_literal(node: Node) -> str | Opaque:
    """The input the simple command ``node`` reads, when the line spells it out.

    Only the command's own heredoc or herestring, or an ``echo``/``printf`` of
    plain words directly before it in its pipeline: anything else (a file, a
    pipe from another program, the input of an enclosing group or loop) is
    opaque.
    """
    redirects = list(node.children_by_field_name("redirect"))
    parent = node.parent
    if parent is not None and parent.type == "redirected_statement":
        redirects += parent.children_by_field_name("redirect")
    inputs = [r for r in redirects if _reads_input(r)]
    if len(inputs) > 1:
        return Opaque("a shell with more than one input redirection")
    if inputs:
        return _redirect_literal(inputs[0])
    piped = node if parent is None or parent.type != "redirected_statement" else parent
    outer = piped.parent
    if outer is None or outer.type != "pipeline":
        return Opaque("a shell reading an input the line does not spell")
    before = piped.prev_named_sibling
    if before is None or before.type != "command":
        return Opaque("a shell reading a pipe the matcher cannot follow")
    return _printed(before)


def _reads_input(redirect: Node) -> bool:
    if redirect.type in ("heredoc_redirect", "herestring_redirect"):
        return True
    if redirect.type != "file_redirect":
        return False
    descriptor = redirect.child_by_field_name("descriptor")
    operators = [c.type for c in redirect.children if not c.is_named]
    reads = any(op in ("<", "<&", "<>", "<&-") for op in operators)
    return reads and (descriptor is None or node_text(descriptor) == "0")


def _redirect_literal(redirect: Node) -> str | Opaque:
    if redirect.type == "herestring_redirect":
        words = joined([c for c in redirect.children if c.is_named])
        if len(words) != 1 or words[0].value is None or not words[0].fixed:
            return Opaque("a herestring bash expands")
        return words[0].value + "\n"
    if redirect.type != "heredoc_redirect":
        return Opaque("a shell reading a file")
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    body = next((c for c in redirect.children if c.type == "heredoc_body"), None)
    if start is None:
        return Opaque("a heredoc the matcher cannot read")
    text = "" if body is None else node_text(body)
    delimiter = node_text(start)
    quoted = any(mark in delimiter for mark in ("'", '"', "\\"))
    if not quoted and any(mark in text for mark in ("$", "`", "\\")):
        return Opaque("a heredoc whose body bash expands")
    if any(c.type == "<<-" for c in redirect.children):
        text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
    return text


def _printed(command: Node) -> str | Opaque:
    """What ``echo``/``printf`` of plain words prints; opaque for any other command."""
    name = command.child_by_field_name("name")
    arguments = command.children_by_field_name("argument")
    if name is None or command.children_by_field_name("redirect"):
        return Opaque("a shell reading a pipe the matcher cannot follow")
    words = joined([*name.named_children, *arguments])
    if any(w.value is None or not w.fixed for w in words):
        return Opaque("a shell reading a pipe of words bash expands")
    values = [w.value or "" for w in words]
    program, args = values[0], values[1:]
    if program == "echo":
        newline = "\n"
        while args and args[0] in ("-n", "-E"):
            newline = "" if args[0] == "-n" else newline
            args = args[1:]
        text = " ".join(args)
        if "\\" in text or (args and args[0].startswith("-")):
            return Opaque("an echo whose output the matcher cannot tell")
        return text + newline
    if program == "printf" and len(args) == 1:
        return _printf(args[0])
    return Opaque("a shell reading a pipe the matcher cannot follow")


def _printf(text: str) -> str | Opaque:
    out: list[str] = []
    end = 0
    for match in _PRINTF_TOKEN.finditer(text):
        out.append(text[end : match.start()])
        end = match.end()
        if match[2] is not None:
            if match[2] != "%":
                return Opaque("a printf whose output the matcher cannot tell")
            out.append("%")
            continue
        escape = _PRINTF_ESCAPES.get(match[1])
        if escape is None:
            return Opaque("a printf whose output the matcher cannot tell")
        out.append(escape)
    out.append(text[end:])
    return "".join(out)
