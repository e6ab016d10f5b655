"""``AskUserQuestion`` (WIRE-PERM-042, DEC-PERM-MODE): its bounds at the
limit and one past, the answer the model reads, and that it always asks."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import pytest

from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import MODES, Mode, PermissionRules, parse_rule
from agentx.messages.user_questions import (
    MAX_OPTIONS,
    MAX_QUESTIONS,
    answer_text,
    questions_problem,
)


def _question(text: str = "Which?", options: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "question": text,
        "header": "Pick",
        "options": [{"label": f"o{i}", "description": f"d{i}"} for i in range(options)],
        "multiSelect": False,
        **extra,
    }


def _ask(*questions: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"questions": list(questions), **extra}


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        (_ask(_question()), None),
        (_ask(*(_question(f"q{i}?") for i in range(MAX_QUESTIONS))), None),
        (_ask(*(_question(f"q{i}?") for i in range(MAX_QUESTIONS + 1))), "1 to 4 questions"),
        (_ask(), "1 to 4 questions, not 0"),
        (_ask(_question(options=MAX_OPTIONS)), None),
        (_ask(_question(options=MAX_OPTIONS + 1)), "2 to 4 options, not 5"),
        (_ask(_question(options=1)), "2 to 4 options, not 1"),
        (_ask(_question(options=1000)), "not 1000"),
        (_ask(_question("same"), _question("same")), "question texts must be unique"),
        (
            _ask({**_question(), "options": [{"label": "a", "description": ""}] * 2}),
            "labels must be unique",
        ),
        (_ask(_question(color="red")), "unexpected member 'color'"),
        (_ask({"question": "q", "header": "h", "options": []}), "missing member 'multiSelect'"),
        (_ask(_question(multiSelect="yes")), "multiSelect must be a boolean"),
        ({"questions": "q"}, "must be an array"),
        (_ask(_question(), answers={"Which?": 3}), "an answer must be"),
        (_ask(_question(), answers=["x"]), "answers must be an object"),
    ],
)
def test_bounds(tool_input: dict[str, Any], problem: str | None) -> None:
    found = questions_problem(tool_input)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_answer_text_names_each_answer() -> None:
    tool_input = _ask(
        _question("Lib?"),
        _question("Features?", multiSelect=True),
        _question("Skipped?"),
        answers={"Lib?": "o1", "Features?": ["o0", "o1"], "Unasked?": "x"},
        annotations={"Lib?": {"notes": "fast one"}},
    )
    text = answer_text(tool_input)
    assert '"Lib?" = "o1" (user notes: fast one)' in text
    assert '"Features?" = "o0, o1"' in text
    assert '"Skipped?" = "(no answer)"' in text
    assert "Unasked" not in text


def test_no_answers_says_so() -> None:
    assert "gave no answers" in answer_text(_ask(_question()))


def _decide(mode: Mode, rules: PermissionRules, tool_input: dict[str, Any]) -> tuple[str, str]:
    decision = evaluate(
        "AskUserQuestion",
        tool_input,
        read_only=True,
        paths=(),
        rules=rules,
        mode=mode,
        cwd=PurePath("/w"),
    )
    return decision.behavior, decision.reason


@pytest.mark.parametrize("mode", MODES)
def test_it_always_asks_whatever_the_mode_or_allow_rule(mode: Mode) -> None:
    allow = PermissionRules(allow=(parse_rule("AskUserQuestion"),))
    behavior, _ = _decide(mode, allow, _ask(_question()))
    assert behavior == ("deny" if mode == "dontAsk" else "ask")


def test_a_deny_rule_and_bad_input_deny_without_asking() -> None:
    deny = PermissionRules(deny=(parse_rule("AskUserQuestion"),))
    assert _decide("default", deny, _ask(_question()))[0] == "deny"
    behavior, reason = _decide(
        "bypassPermissions", PermissionRules(), _ask(_question(options=1000))
    )
    assert behavior == "deny" and "not 1000" in reason
