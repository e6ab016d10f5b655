"""The suite's one Hypothesis profile (tests/conftest.py): no test may depend on load."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).resolve().parents[1]


def test_the_loaded_profile_has_no_deadline() -> None:
    assert settings.default.deadline is None


def test_ci_runs_derandomized() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize is True
    assert ci.deadline is None


def _deadline_arguments(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "settings":
            for keyword in node.keywords:
                is_none = isinstance(keyword.value, ast.Constant) and keyword.value.value is None
                if keyword.arg == "deadline" and not is_none:
                    lines.append(node.lineno)
    return lines


def test_no_test_sets_a_deadline_of_its_own() -> None:
    offenders = []
    for path in TESTS.rglob("test_*.py"):
        for line in _deadline_arguments(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(TESTS)}:{line}")
    assert offenders == []


def test_the_deadline_check_sees_a_numeric_deadline() -> None:
    tree = ast.parse("@settings(max_examples=3, deadline=200)\ndef f(): pass\n")
    assert _deadline_arguments(tree) == [1]
