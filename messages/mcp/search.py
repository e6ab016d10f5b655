"""Tool search for large MCP tool sets (DEC-SET-2, DEC-TURN-3), as Claude Code's
``ToolSearch``.

Sans-IO. When the MCP tools' schemas would take a large share of the
context, they are deferred: the model is offered the built-in tools, a
``ToolSearch`` tool that names every deferred tool in its description, and
the MCP tools it has already loaded. ``ToolSearch`` takes a query and
returns the full schemas of the matching tools, which every later request
offers too (the session keeps them loaded).

The rule, from Claude Code's ``ENABLE_TOOL_SEARCH``: ``auto`` (the default)
defers when the MCP tools' estimated tokens (their names, descriptions and
schemas, :func:`~agentx.messages.context_usage.estimate_tokens`) pass 10 %
of the model's context window; ``auto:N`` uses N % (0..100); ``true``
always defers; ``false`` never does. Any other value is the default.

A query is ``select:<name>[,<name>...]`` (exact names, the ``mcp__`` prefix
optional) or keywords: each word scores 3 when it is a word of the tool's
name (split at ``_`` and ``-``), 2 when it is part of the name and 1 when
it is in the description; a word written ``+word`` must match; the best
``max_results`` (default 5, at most 20) with a positive score are returned,
ties in the tools' order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from msgspec import Struct

from agentx.messages.context_usage import estimate_tokens
from agentx.messages.frozen import FrozenDict

TOOL_NAME: Final = "ToolSearch"
DEFAULT_PERCENT: Final = 10
DEFAULT_RESULTS: Final = 5
MAX_RESULTS: Final = 20
MAX_QUERY_CHARS: Final = 500
#: How many deferred names the tool's description lists (the rest are counted).
MAX_LISTED: Final = 500

INPUT_SCHEMA: Final = FrozenDict(
    type="object",
    properties=FrozenDict(
        query=FrozenDict(
            type="string",
            description='Keywords, or "select:<tool name>[,<tool name>...]" for exact names',
        ),
        max_results=FrozenDict(
            type="integer",
            description=f"Tools to load (default {DEFAULT_RESULTS}, at most {MAX_RESULTS})",
        ),
    ),
    required=("query",),
    additionalProperties=False,
)


class SearchMode(Struct, frozen=True, kw_only=True):
    kind: Literal["auto", "always", "never"] = "auto"
    percent: int = DEFAULT_PERCENT


def search_mode(value: str | None) -> SearchMode:
    """``ENABLE_TOOL_SEARCH`` (module doc)."""
    text = (value or "").strip().lower()
    if text in ("true", "1"):
        return SearchMode(kind="always")
    if text in ("false", "0"):
        return SearchMode(kind="never")
    if text.startswith("auto:") and text[5:].isdigit() and int(text[5:]) <= 100:
        return SearchMode(percent=int(text[5:]))
    return SearchMode()


def spec_chars(name: str, description: str, schema: Mapping[str, Any]) -> int:
    """What one tool spec costs, in characters of its JSON."""
    return len(name) + len(description) + len(json.dumps(schema, ensure_ascii=False))


def deferred(chars: int, context_window: int, mode: SearchMode) -> bool:
    """Whether MCP tool specs of ``chars`` characters are deferred."""
    if chars == 0 or mode.kind == "never":
        return False
    if mode.kind == "always":
        return True
    return estimate_tokens(chars) * 100 > context_window * mode.percent


def description(names: Sequence[str]) -> str:
    """The ``ToolSearch`` description: what it does and every deferred name."""
    listed = "\n".join(names[:MAX_LISTED])
    more = f"\n(and {len(names) - MAX_LISTED} more)" if len(names) > MAX_LISTED else ""
    return (
        "Loads the full definitions of tools that are available but not yet offered. "
        'Search with keywords, or load tools by name with "select:<name>,<name>"; the '
        "tools found can be called from the next step on. Deferred tools:\n" + listed + more
    )


class SearchInput(Struct, frozen=True, kw_only=True):
    query: str
    max_results: int


def parse_input(tool_input: Mapping[str, Any]) -> SearchInput | str:
    """The call's input, or what is wrong with it."""
    query, limit = tool_input.get("query"), tool_input.get("max_results", DEFAULT_RESULTS)
    if not isinstance(query, str) or not query.strip():
        return "query must be a non-empty string"
    if len(query) > MAX_QUERY_CHARS:
        return f"query must be at most {MAX_QUERY_CHARS} characters"
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
        return f"max_results must be an integer from 1 to {MAX_RESULTS}"
    if set(tool_input) - {"query", "max_results"}:
        return "only query and max_results are accepted"
    return SearchInput(query=query.strip(), max_results=limit)


_WORD = re.compile(r"[a-z0-9]+")


def search(query: str, tools: Sequence[tuple[str, str]], max_results: int) -> tuple[str, ...]:
    """The names among ``tools`` (name, description) that match ``query``."""
    if query.lower().startswith("select:"):
        wanted = [w.strip() for w in query[7:].split(",") if w.strip()]
        names = {name for name, _ in tools}
        chosen: list[str] = []
        for word in wanted:
            for name in (word, f"mcp__{word}"):
                if name in names and name not in chosen:
                    chosen.append(name)
                    break
        return tuple(chosen[:max_results])
    terms = [t for t in query.lower().split() if t.strip("+")]
    required = [t[1:] for t in terms if t.startswith("+")]
    words = [t.lstrip("+") for t in terms]
    scored: list[tuple[int, int, str]] = []
    for index, (name, text) in enumerate(tools):
        lowered, parts = name.lower(), set(_WORD.findall(name.lower()))
        body = text.lower()
        if any(r not in lowered and r not in body for r in required):
            continue
        score = sum(
            3 if w in parts else 2 if w in lowered else 1 if w in body else 0 for w in words
        )
        if score > 0:
            scored.append((-score, index, name))
    return tuple(name for _, _, name in sorted(scored)[:max_results])


def result_text(found: Sequence[tuple[str, str, Mapping[str, Any]]], query: str) -> str:
    """The tool result: each found tool's full definition, one JSON a line."""
    if not found:
        return f"No deferred tool matches {query!r}."
    lines = [
        json.dumps(
            {"name": name, "description": text, "input_schema": schema},
            ensure_ascii=False,
            sort_keys=True,
        )
        for name, text, schema in found
    ]
    return f"Loaded {len(found)} tool(s); call them from the next step on:\n" + "\n".join(lines)
