"""Bash permission rules matched on the parsed command line (DEC-SET-2, DEC-PERM-PATH).

A rule's content is a command: ``Bash(git status)`` matches exactly that
command, ``Bash(git status:*)`` and ``Bash(git status *)`` (Claude Code's
newer spelling) that command and any continuing it with more words. A ``*``
anywhere else (``Bash(git * main)``, ``Bash(* --version)``, ``Bash(ls*)``)
matches any text, spaces included, against the words of a simple command
joined by spaces, as Claude Code matches it. The rule's command is parsed
like the command line, so its program is a base name too
(``Bash(/usr/bin/curl:*)`` is ``Bash(curl:*)``); its wrappers are kept
(``Bash(sudo:*)`` names ``sudo``).

- A deny or ask rule matches when it matches any layer of any simple command
  (:mod:`agentx.messages.bash.commands`): ``sudo -u x curl y`` is matched by
  ``Bash(sudo:*)`` and by ``Bash(curl:*)``. A word bash expands (a variable, a
  substitution, a glob) may be anything: it matches whatever the rule says from
  there on. A line the matcher cannot see through matches every deny and ask rule.
- An allow rule set lets a line run when every simple command in it is allowed
  by one of the rules, and never a line the matcher cannot see through. A rule
  allows a simple command through its innermost layer, or through an outer one
  when the rule's words reach the program that runs (``Bash(timeout 60 make:*)``
  allows ``timeout 60 make all``, ``Bash(env:*)`` does not allow ``env curl``).
  A shell running a ``-c`` body needs no rule of its own: its body's commands do.
- A rule whose content is not one simple command with a plain program (a list,
  a pipeline) keeps the literal comparison: it denies or asks for that exact
  text (or that text continued, for ``:*``) and allows nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from msgspec import Struct

from agentx.messages.bash.commands import (
    CommandLine,
    SimpleCommand,
    parse_command_line,
    parse_rule_command,
)
from agentx.messages.bash.words import Opaque, Word


class _Pattern(Struct, frozen=True):
    words: tuple[Word, ...] | None
    text: str
    prefix: bool
    #: A ``*`` other than a trailing ``:*`` or `` *``: the whole text as a regex.
    wildcard: re.Pattern[str] | None = None
    #: The text before the first ``*`` of a wildcard rule.
    lead: str = ""


def _prefix_text(spec: str) -> str | None:
    """The command of a prefix rule (``cmd:*`` or ``cmd *``), else ``None``."""
    stripped = spec.strip()
    for suffix in (":*", " *"):
        if stripped.endswith(suffix) and "*" not in stripped[: -len(suffix)]:
            return stripped[: -len(suffix)].strip()
    return None


def bash_rule_problem(spec: str) -> str | None:
    """Why ``Bash(spec)`` can match nothing; ``None`` when it can (DEC-SET-2)."""
    text = _prefix_text(spec)
    if text is not None and not text:
        return "a prefix rule with no command"
    if ":*" in spec.strip()[:-2]:
        return ":* may only end a Bash rule"
    return None


@lru_cache(maxsize=256)
def _pattern(spec: str) -> _Pattern:
    text = _prefix_text(spec)
    if text is not None:
        return _Pattern(words=parse_rule_command(text), text=text, prefix=True)
    text = spec.strip()
    if "*" not in text:
        return _Pattern(words=parse_rule_command(text), text=text, prefix=False)
    program, _, rest = text.partition(" ")
    if "*" not in program and "/" in program:
        text = program.rsplit("/", 1)[-1] + (" " + rest if rest else "")
    regex = re.compile(".*".join(re.escape(part) for part in text.split("*")), re.DOTALL)
    return _Pattern(words=None, text=text, prefix=False, wildcard=regex, lead=text.split("*")[0])


def opaque_reason(command: str) -> str | None:
    """Why the matcher cannot see through ``command``; ``None`` when it can."""
    line = parse_command_line(command)
    return line.reason if isinstance(line, Opaque) else None


def deny_matches(spec: str, command: str) -> bool:
    """Whether the deny or ask rule ``Bash(spec)`` matches ``command``."""
    line = parse_command_line(command)
    if isinstance(line, Opaque):
        return True
    pattern = _pattern(spec)
    if pattern.wildcard is not None:
        return any(
            _wild_deny(words, pattern) for simple in line.commands for words, _ in simple.layers()
        )
    if pattern.words is None:
        text = command.strip()
        return text == pattern.text or (pattern.prefix and text.startswith(pattern.text + " "))
    return any(
        _deny_layer(words, pattern.words, prefix=pattern.prefix)
        for simple in line.commands
        for words, _ in simple.layers()
    )


def allowing(specs: Sequence[str], command: str) -> tuple[str, ...] | None:
    """The allow rules (contents) that together let ``command`` run, or ``None``."""
    line = parse_command_line(command)
    if isinstance(line, CommandLine):
        used: list[str] = []
        for simple in line.commands:
            if simple.shell:
                continue
            spec = next((s for s in specs if _allows(simple, _pattern(s))), None)
            if spec is None:
                return None
            if spec not in used:
                used.append(spec)
        if used:
            return tuple(used)
    return None


def _allows(simple: SimpleCommand, pattern: _Pattern) -> bool:
    if pattern.wildcard is not None:
        # The program that runs and its words, every one exactly as bash passes it.
        words = simple.argv[simple.starts[-1] :]
        values = [w.value for w in words if w.value is not None and w.fixed]
        return (
            len(values) == len(words) and pattern.wildcard.fullmatch(" ".join(values)) is not None
        )
    rule = pattern.words
    if rule is None:
        return False
    for words, program in simple.layers():
        if len(rule) > program and _allow_layer(words, rule, prefix=pattern.prefix):
            return True
    return False


def _same(word: Word, rule: Word) -> bool:
    return (word.value is not None and word.value == rule.value) or word.raw == rule.raw


def _allow_layer(words: tuple[Word, ...], rule: tuple[Word, ...], *, prefix: bool) -> bool:
    if len(words) < len(rule) or (not prefix and len(words) != len(rule)):
        return False
    return all(_same(word, wanted) for word, wanted in zip(words, rule, strict=False))


def _deny_layer(words: tuple[Word, ...], rule: tuple[Word, ...], *, prefix: bool) -> bool:
    for index, wanted in enumerate(rule):
        if index >= len(words):
            return False
        if not words[index].fixed:
            return True  # an expansion may become the rest of the rule's words
        if not _same(words[index], wanted):
            return False
    # Past the rule's words an exact rule still matches words that may expand to nothing.
    return prefix or all(not word.fixed for word in words[len(rule) :])


def _wild_deny(words: tuple[Word, ...], pattern: _Pattern) -> bool:
    """A wildcard rule on one layer; a word bash expands may become the rest of the rule."""
    assert pattern.wildcard is not None
    values: list[str] = []
    for word in words:
        if word.value is None or not word.fixed:
            known = "".join(value + " " for value in values)
            return pattern.lead.startswith(known) or known.startswith(pattern.lead)
        values.append(word.value)
    return pattern.wildcard.fullmatch(" ".join(values)) is not None
