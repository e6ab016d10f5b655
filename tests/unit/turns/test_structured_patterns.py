"""A structured-output schema's regular expressions cannot freeze the host
(DECISIONS section 8, DEC-CLI-5 ``--json-schema``): every match runs in the
``regex`` module under one budget per validation, with the interpreter lock
released. A pattern that backtracks catastrophically on the model's input is
a failed attempt; ordinary patterns on long inputs are answered as before.
"""

from __future__ import annotations

import threading

import pytest

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.structured_output import ACCEPTED, PATTERN_TIMEOUT
from agentx.turns.structured import OutputSchema, bounded_search

#: ``(a|aa)+$`` on ``a`` * n + ``!`` takes about 1.6**n steps in a backtracking engine.
HOSTILE = "^(a|aa)+$"
HOSTILE_INPUT = "a" * 60 + "!"
BUDGET_S = 0.2


def _schema(**members: object) -> OutputSchema:
    return OutputSchema(freeze({"type": "object", **members}), budget_s=BUDGET_S)


def _answer(schema: OutputSchema, value: object) -> tuple[str, bool]:
    _, answer = schema.answer(OutputSchema.new_turn(), freeze(value))
    return answer.content, answer.is_error


@pytest.mark.parametrize(
    ("members", "value"),
    [
        pytest.param(
            {"properties": {"s": {"pattern": HOSTILE}}}, {"s": HOSTILE_INPUT}, id="pattern"
        ),
        pytest.param(
            {"propertyNames": {"pattern": HOSTILE}}, {HOSTILE_INPUT: 1}, id="property-names"
        ),
        pytest.param(
            {"patternProperties": {HOSTILE: {"type": "string"}}},
            {HOSTILE_INPUT: 1},
            id="pattern-properties",
        ),
        pytest.param(
            {"patternProperties": {HOSTILE: {}}, "additionalProperties": False},
            {HOSTILE_INPUT: 1},
            id="additional-properties",
        ),
    ],
)
def test_a_catastrophic_pattern_is_a_failed_attempt(members: object, value: object) -> None:
    content, is_error = _answer(_schema(**members), value)  # type: ignore[arg-type]
    assert is_error and PATTERN_TIMEOUT in content


def test_the_budget_is_shared_by_every_match_of_one_validation() -> None:
    """Past the budget no further match runs, however cheap."""
    search = bounded_search(0.0)
    with pytest.raises(TimeoutError):
        search("a", "a")


def test_ordinary_patterns_on_a_long_input_are_answered_within_the_budget() -> None:
    schema = _schema(
        properties={"id": {"pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}},
        patternProperties={"^x-": {"type": "integer"}},
    )
    long_id = "-".join(["abc123"] * 20_000)  # about 140 KB
    assert _answer(schema, {"id": long_id, "x-n": 1}) == (ACCEPTED, False)
    content, is_error = _answer(schema, {"id": long_id + "-", "x-n": 1})
    assert is_error and "does not match" in content


def test_a_match_lets_other_threads_run() -> None:
    """The interpreter lock is released while a pattern runs: another thread
    (the writer, an interrupt) gets on meanwhile."""
    ran = threading.Event()
    stop = threading.Event()

    def other() -> None:
        while not stop.is_set():
            ran.set()

    thread = threading.Thread(target=other)
    thread.start()
    try:
        ran.clear()
        with pytest.raises(TimeoutError):
            bounded_search(BUDGET_S)(HOSTILE, HOSTILE_INPUT)
        assert ran.is_set()
    finally:
        stop.set()
        thread.join()


def test_a_schema_of_unevaluated_and_pattern_properties_is_refused() -> None:
    with pytest.raises(ValueError, match="unevaluatedProperties"):
        OutputSchema(
            FrozenDict(
                type="object",
                patternProperties=freeze({"^a": {}}),
                unevaluatedProperties=False,
            )
        )
