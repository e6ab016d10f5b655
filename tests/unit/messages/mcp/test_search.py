"""Tool search's rule, input and query language (DEC-SET-2)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.mcp.search import (
    DEFAULT_RESULTS,
    MAX_LISTED,
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    SearchInput,
    SearchMode,
    deferred,
    description,
    parse_input,
    result_text,
    search,
    search_mode,
)


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        (None, SearchMode()),
        ("", SearchMode()),
        ("auto", SearchMode()),
        ("true", SearchMode(kind="always")),
        ("1", SearchMode(kind="always")),
        ("FALSE", SearchMode(kind="never")),
        ("auto:25", SearchMode(percent=25)),
        ("auto:0", SearchMode(percent=0)),
        ("auto:100", SearchMode(percent=100)),
        ("auto:101", SearchMode()),
        ("auto:-1", SearchMode()),
        ("maybe", SearchMode()),
    ],
)
def test_search_mode(value: str | None, mode: SearchMode) -> None:
    assert search_mode(value) == mode


@pytest.mark.parametrize(
    ("chars", "window", "mode", "expected"),
    [
        # 10 % of 1,000 tokens is 100 tokens = 400 characters (4 a token).
        (400, 1000, SearchMode(), False),
        (401, 1000, SearchMode(), True),
        (0, 1000, SearchMode(kind="always"), False),
        (1, 10**6, SearchMode(kind="always"), True),
        (10**9, 1000, SearchMode(kind="never"), False),
        (4, 1000, SearchMode(percent=0), True),
        (4000, 1000, SearchMode(percent=100), False),
        (4001, 1000, SearchMode(percent=100), True),
    ],
)
def test_deferred_at_the_threshold(
    chars: int, window: int, mode: SearchMode, expected: bool
) -> None:
    assert deferred(chars, window, mode) is expected


TOOLS = [
    ("mcp__gh__create_issue", "Create an issue in a repository"),
    ("mcp__gh__list_issues", "List the issues of a repository"),
    ("mcp__db__query", "Run a SQL query; issues nothing"),
    ("mcp__db__create_table", "Create a table"),
]


@pytest.mark.parametrize(
    ("query", "limit", "expected"),
    [
        ("select:mcp__db__query", 5, ("mcp__db__query",)),
        ("select:db__query,gh__list_issues", 5, ("mcp__db__query", "mcp__gh__list_issues")),
        ("select:nothing", 5, ()),
        ("select:mcp__db__query,mcp__db__query", 5, ("mcp__db__query",)),
        ("issue", 5, ("mcp__gh__create_issue", "mcp__gh__list_issues", "mcp__db__query")),
        ("create", 5, ("mcp__gh__create_issue", "mcp__db__create_table")),
        ("create", 1, ("mcp__gh__create_issue",)),
        ("create +table", 5, ("mcp__db__create_table",)),
        ("sql", 5, ("mcp__db__query",)),
        ("zebra", 5, ()),
        ("+", 5, ()),
    ],
)
def test_search(query: str, limit: int, expected: tuple[str, ...]) -> None:
    assert search(query, TOOLS, limit) == expected


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"query": "x"}, SearchInput(query="x", max_results=DEFAULT_RESULTS)),
        ({"query": " x ", "max_results": MAX_RESULTS}, SearchInput(query="x", max_results=20)),
        ({"query": "x", "max_results": MAX_RESULTS + 1}, "max_results must be"),
        ({"query": "x", "max_results": 0}, "max_results must be"),
        ({"query": "x", "max_results": True}, "max_results must be"),
        ({"query": ""}, "query must be a non-empty string"),
        ({"query": 3}, "query must be a non-empty string"),
        ({"query": "q" * MAX_QUERY_CHARS}, SearchInput(query="q" * 500, max_results=5)),
        ({"query": "q" * (MAX_QUERY_CHARS + 1)}, "at most 500 characters"),
        ({"query": "x", "other": 1}, "only query and max_results"),
    ],
)
def test_parse_input(tool_input: dict[str, Any], expected: object) -> None:
    got = parse_input(tool_input)
    if isinstance(expected, str):
        assert isinstance(got, str) and expected in got
    else:
        assert got == expected


def test_description_lists_names_up_to_the_bound() -> None:
    names = [f"mcp__s__t{i}" for i in range(MAX_LISTED + 2)]
    text = description(names)
    assert f"mcp__s__t{MAX_LISTED - 1}" in text and f"mcp__s__t{MAX_LISTED}\n" not in text
    assert text.endswith("(and 2 more)")
    assert "(and" not in description(names[:MAX_LISTED])


def test_result_text() -> None:
    schema = {"type": "object"}
    text = result_text([("mcp__a__b", "does b", schema)], "b")
    assert text.splitlines()[1] == (
        '{"description": "does b", "input_schema": {"type": "object"}, "name": "mcp__a__b"}'
    )
    assert "No deferred tool matches" in result_text([], "zzz")
