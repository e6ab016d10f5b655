"""Tool output cap (DEC-COMPAT-3), input helpers and the built-in registry (DEC-CLI-5)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.tools.base import MAX_OUTPUT_BYTES, encoded_size, output
from agentx.tools.registry import BUILTIN_NAMES, UnknownToolError, builtin_tools


@pytest.mark.parametrize(
    ("text", "expected"),
    [("abc", 3), ("é", 2), ('"', 2), ("\\", 2), ("\x00", 6), ("\n", 2), ("😀", 4), ("", 0)],
    ids=["ascii", "two-byte", "quote", "backslash", "nul", "newline", "astral", "empty"],
)
def test_encoded_size(text: str, expected: int) -> None:
    assert encoded_size(text) == expected


@pytest.mark.parametrize(
    ("unit", "count"),
    [
        ("a", MAX_OUTPUT_BYTES),
        ("a", MAX_OUTPUT_BYTES + 1),
        ("\x01", MAX_OUTPUT_BYTES // 6),
        ("\x01", MAX_OUTPUT_BYTES // 6 + 1),
        ("é", MAX_OUTPUT_BYTES // 2),
        ("é", MAX_OUTPUT_BYTES // 2 + 1),
    ],
    ids=["ascii-at", "ascii-past", "escaped-at", "escaped-past", "utf8-at", "utf8-past"],
)
def test_output_cap_at_and_past_limit(unit: str, count: int) -> None:
    text = unit * count
    result = output(text)
    size = encoded_size(text)
    if size <= MAX_OUTPUT_BYTES:
        assert result.content == text
    else:
        assert result.content.startswith(unit * 100)
        assert "[output truncated:" in result.content
        assert encoded_size(result.content) <= MAX_OUTPUT_BYTES


@given(st.text(max_size=300), st.integers(min_value=120, max_value=400))
def test_output_never_exceeds_limit(text: str, limit: int) -> None:
    result = output(text, limit=limit)
    assert encoded_size(result.content) <= limit
    assert len(json.dumps(result.content, ensure_ascii=False).encode()) - 2 <= limit
    if encoded_size(text) <= limit:
        assert result.content == text


def test_builtin_tools_default_all() -> None:
    assert tuple(t.name for t in builtin_tools(None)) == BUILTIN_NAMES
    assert set(BUILTIN_NAMES) >= {"Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebFetch"}


@pytest.mark.parametrize(
    ("names", "expected"),
    [([], ()), (["Read"], ("Read",)), (["Write", "Bash", "Write"], ("Bash", "Write"))],
    ids=["empty-means-none", "one", "builtin-order-dedup"],
)
def test_builtin_tools_selection(names: list[str], expected: tuple[str, ...]) -> None:
    assert tuple(t.name for t in builtin_tools(names)) == expected


def test_builtin_tools_unknown() -> None:
    with pytest.raises(UnknownToolError, match="'Nope'"):
        builtin_tools(["Read", "Nope"])


@pytest.mark.parametrize("tool", builtin_tools(None), ids=lambda t: t.name)
def test_specs_are_closed_schemas(tool: object) -> None:
    spec = tool.spec  # type: ignore[attr-defined]
    assert spec.name == tool.name  # type: ignore[attr-defined]
    assert spec.input_schema["additionalProperties"] is False
    assert set(spec.input_schema["required"]) <= set(spec.input_schema["properties"])
