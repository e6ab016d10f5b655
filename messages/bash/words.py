"""Words of a Bash command line as bash reads them (DEC-PERM-PATH).

A :class:`Word` is one word after quote removal, with whether bash passes it
exactly as written; :class:`Opaque` is the verdict on a line the matcher cannot
see through. The helpers read one tree-sitter-bash node as a word, join the
nodes the grammar splits out of one word, and normalise a program to its base
name. :mod:`agentx.messages.bash.commands` walks the tree with them and
:mod:`agentx.messages.bash.wrappers` reads wrapper options over them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from msgspec import Struct

if TYPE_CHECKING:
    from tree_sitter import Node

#: How much of the command a reason quotes.
SHOWN_CHARS: Final = 40
#: Variables whose value bash itself runs or expands later.
_EXECUTED_VARIABLES: Final = frozenset(
    {"BASH_ENV", "ENV", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4", "SHELLOPTS"}
)
#: Unquoted characters that make bash expand a word (globs, extglob, braces).
_PATTERN = re.compile(r"[*?\[({]")


class Word(Struct, frozen=True):
    """One word of a simple command.

    ``value`` is the text after quote removal, ``None`` when an expansion or a
    substitution decides it; ``fixed`` says bash passes exactly ``value`` (no
    expansion, glob, brace or tilde); ``raw`` is the source text.
    """

    value: str | None
    fixed: bool
    raw: str


class Opaque(Struct, frozen=True):
    """A line the matcher cannot see through, and why."""

    reason: str


def executed_variable(name: str) -> bool:
    """A variable whose value bash itself runs or expands later."""
    return name in _EXECUTED_VARIABLES or name.startswith("BASH_FUNC_")


def joined(nodes: list[Node]) -> tuple[Word, ...]:
    """Words of adjacent nodes as bash reads them: with nothing between, one word.

    tree-sitter-bash sometimes splits one word in two (``'sh -c '\\curl``).
    """
    words: list[Word] = []
    end = -1
    for node in nodes:
        word = read_word(node)
        if node.start_byte == end and words:
            last = words[-1]
            value = None if last.value is None or word.value is None else last.value + word.value
            word = Word(value, last.fixed and word.fixed, last.raw + word.raw)
            words[-1] = word
        else:
            words.append(word)
        end = node.end_byte
    return tuple(words)


def base_name(word: Word) -> Word | None:
    if word.value is None or not word.fixed:
        return None
    base = word.value.rsplit("/", 1)[-1]
    return Word(base, True, word.raw) if base else None


def shown(text: str) -> str:
    """Shell text quoted in a reason, cut to :data:`SHOWN_CHARS`."""
    return repr(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "...")


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def read_word(node: Node) -> Word:
    raw = node_text(node)
    kind = node.type
    if kind == "word":
        value = _unquoted(raw)
        fixed = not (_PATTERN.search(unescaped(raw)) or raw.startswith("~"))
        return Word(value, fixed, raw)
    if kind == "number":
        return Word(raw, True, raw)
    if kind == "raw_string":
        return Word(raw[1:-1], True, raw)
    if kind == "string" and all(c.type == "string_content" for c in node.named_children):
        return Word(_double_quoted(raw[1:-1]), True, raw)
    if kind == "concatenation":
        parts = [read_word(c) for c in node.children]
        if sum(len(p.raw) for p in parts) == len(raw) and all(p.value is not None for p in parts):
            return Word("".join(p.value or "" for p in parts), all(p.fixed for p in parts), raw)
    return Word(None, False, raw)


_UNQUOTED_ESCAPE = re.compile(r"\\(\n|.)", re.DOTALL)
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([\\$`\"\n])")


def _unquoted(raw: str) -> str:
    """Quote removal for an unquoted word: ``\\x`` is ``x``, ``\\<newline>`` nothing."""
    return _UNQUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], raw)


def unescaped(raw: str) -> str:
    """The characters of an unquoted word that bash still interprets."""
    return _UNQUOTED_ESCAPE.sub("", raw)


def _double_quoted(raw: str) -> str:
    """Inside double quotes a backslash escapes only ``\\ $ ` "`` and newline."""
    return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], raw)
