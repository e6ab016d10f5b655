"""The structured output core (DEC-CLI-5 ``--json-schema``; spec "Success
result"/"Error result"): schema checks, validation verdicts, retry counting."""

from __future__ import annotations

import re

import jsonschema
import pytest

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.structured_output import (
    ACCEPTED,
    MAX_PROBLEM_CHARS,
    MAX_RETRIES,
    PATTERN_TIMEOUT,
    Delivered,
    Exhausted,
    Remind,
    StructuredTurn,
    schema_problem,
    validation_problem,
)


def re_search(pattern: str, text: str) -> bool:
    """The library's own matching, for benign patterns."""
    return re.search(pattern, text) is not None


PERSON = freeze(
    {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name"],
        "additionalProperties": False,
    }
)


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (PERSON, None),
        ({}, None),
        ({"properties": {"a": {"type": "string"}}}, None),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, None),
        ({"type": "array"}, "must describe an object"),
        ({"type": ["object", "null"]}, "must describe an object"),
        ({"type": "object", "properties": {"a": {"type": "nonsense"}}}, "not valid"),
        ({"type": "object", "required": "name"}, "not valid"),
        ([1, 2], "must be a JSON object"),
        ("object", "must be a JSON object"),
    ],
)
def test_schema_problem(schema: object, problem: str | None) -> None:
    got = schema_problem(freeze(schema))
    if problem is None:
        assert got is None
    else:
        assert got is not None and problem in got


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"name": "Ada"}, None),
        ({"name": "Ada", "age": 36}, None),
        ({}, "'name' is a required property"),
        ({"name": 3}, "at name: 3 is not of type 'string'"),
        ({"name": "Ada", "age": -1}, "at age:"),
        ({"name": "Ada", "extra": 1}, "Additional properties"),
        ({"name": 1, "age": "x"}, "(2 errors in all)"),
    ],
)
def test_validation_problem(value: object, fragment: str | None) -> None:
    got = validation_problem(PERSON, freeze(value), re_search)
    if fragment is None:
        assert got is None
    else:
        assert got is not None and fragment in got


def test_a_schema_nothing_satisfies_refuses_every_value() -> None:
    never = freeze({"type": "object", "not": {}})
    assert schema_problem(never) is None
    for value in ({}, {"a": 1}, {"name": "Ada"}):
        assert validation_problem(never, freeze(value), re_search) is not None


def test_an_unresolvable_reference_is_a_failed_attempt_not_a_crash() -> None:
    schema = freeze({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/x"}}})
    got = validation_problem(schema, freeze({"a": 1}), re_search)
    assert got is not None and "could not be applied" in got


def test_the_verdict_is_bounded() -> None:
    schema = freeze({"type": "object", "properties": {"a": {"const": "x" * 10_000}}})
    got = validation_problem(schema, freeze({"a": "y" * 10_000}), re_search)
    assert got is not None and len(got) == MAX_PROBLEM_CHARS and got.endswith("…")


# --- regular expressions go through the caller's bounded search (DECISIONS section 8)

PATTERNED = [
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+-[0-9]+$"}}},
    {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}},
    {
        "type": "object",
        "properties": {"a": {}},
        "patternProperties": {"^x-": {}, "^y": {}},
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
    {"type": "object", "additionalProperties": {"type": "string"}, "patternProperties": {"^n": {}}},
    {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
]
INSTANCES = [
    {},
    {"id": "abc-12"},
    {"id": "ABC"},
    {"x-one": 1, "x-two": "t"},
    {"a": 1, "x-b": 2, "yes": 3, "zed": 4},
    {"a": 1, "b": 2, "c": 3},
    {"n1": 5, "other": 6, "Upper": "u"},
]


@pytest.mark.parametrize("schema", PATTERNED)
@pytest.mark.parametrize("value", INSTANCES)
def test_bounded_keywords_give_the_library_s_own_verdict(schema: object, value: object) -> None:
    """pattern, patternProperties and additionalProperties as rewritten to
    match through ``search`` say exactly what jsonschema itself says."""
    stock = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
    expected = None
    if stock:
        best = jsonschema.exceptions.best_match(stock)
        where = "/".join(str(part) for part in best.absolute_path) or "(root)"
        more = f" ({len(stock)} errors in all)" if len(stock) > 1 else ""
        expected = f"at {where}: {best.message}{more}"
    assert validation_problem(freeze(schema), freeze(value), re_search) == expected


def test_every_match_goes_through_the_search() -> None:
    seen: list[tuple[str, str]] = []

    def spy(pattern: str, text: str) -> bool:
        seen.append((pattern, text))
        return re_search(pattern, text)

    schema = freeze(
        {
            "type": "object",
            "properties": {"s": {"pattern": "^p$"}},
            "patternProperties": {"^q": {}},
            "additionalProperties": False,
            "propertyNames": {"pattern": "^[sq]"},
        }
    )
    assert validation_problem(schema, freeze({"s": "p", "qq": 1}), spy) is None
    assert {("^p$", "p"), ("^q", "qq"), ("^q", "s"), ("^[sq]", "s"), ("^[sq]", "qq")} <= set(seen)


def test_a_search_that_gives_up_is_a_failed_attempt() -> None:
    def gives_up(pattern: str, text: str) -> bool:
        raise TimeoutError

    schema = freeze({"type": "object", "properties": {"s": {"pattern": "(a|aa)+$"}}})
    assert validation_problem(schema, freeze({"s": "a" * 50 + "!"}), gives_up) == PATTERN_TIMEOUT
    assert validation_problem(schema, freeze({"t": 1}), gives_up) is None  # no match needed


@pytest.mark.parametrize(
    ("schema", "refused"),
    [
        ({"patternProperties": {"^a": {}}, "unevaluatedProperties": False}, True),
        ({"allOf": [{"patternProperties": {"^a": {}}}], "unevaluatedProperties": False}, True),
        ({"unevaluatedProperties": False}, False),
        ({"patternProperties": {"^a": {}}, "additionalProperties": False}, False),
    ],
)
def test_unevaluated_properties_with_pattern_properties_is_refused(
    schema: object, refused: bool
) -> None:
    """The library would match those patterns with ``re``, unbounded."""
    got = schema_problem(freeze({"type": "object", **schema}))  # type: ignore[dict-item]
    assert (got is not None and "unevaluatedProperties" in got) == refused


def test_a_valid_call_delivers_the_payload() -> None:
    turn, answer = StructuredTurn().on_call(None, FrozenDict(name="Ada"))
    assert answer.content == ACCEPTED and not answer.is_error
    assert turn.on_end() == (turn, Delivered(FrozenDict(name="Ada")))


@pytest.mark.parametrize("failures", range(MAX_RETRIES + 2))
def test_invalid_calls_exhaust_after_max_retries(failures: int) -> None:
    """MAX_RETRIES failures leave one attempt; one more ends the turn."""
    turn = StructuredTurn()
    for _ in range(failures):
        turn, answer = turn.on_call("at (root): bad", FrozenDict())
        assert answer.is_error
    assert turn.failures == failures
    assert turn.exhausted is (failures > MAX_RETRIES)
    assert (turn.verdict_after_tools() is not None) is (failures > MAX_RETRIES)
    if failures <= MAX_RETRIES:
        turn, answer = turn.on_call(None, FrozenDict(name="Ada"))
        assert not answer.is_error and turn.on_end()[1] == Delivered(FrozenDict(name="Ada"))


def test_the_last_allowed_failure_does_not_invite_another_call() -> None:
    turn = StructuredTurn(max_retries=0)
    turn, answer = turn.on_call("at (root): bad", FrozenDict())
    assert turn.exhausted and "again" not in answer.content


@pytest.mark.parametrize("ends", range(1, MAX_RETRIES + 3))
def test_answers_without_a_call_remind_then_exhaust(ends: int) -> None:
    turn = StructuredTurn()
    verdicts = []
    for _ in range(ends):
        turn, verdict = turn.on_end()
        verdicts.append(verdict)
    assert all(isinstance(v, Remind) for v in verdicts[: min(ends, MAX_RETRIES)])
    if ends > MAX_RETRIES:
        assert verdicts[MAX_RETRIES] == Exhausted(
            f"Failed to provide valid structured output after {MAX_RETRIES + 1} attempts"
        )
        # Once exhausted it stays so, without counting further.
        assert turn.failures == MAX_RETRIES + 1
        assert isinstance(verdicts[-1], Exhausted)


def test_mixed_failures_share_one_count() -> None:
    turn = StructuredTurn(max_retries=2)
    turn, _ = turn.on_call("bad", FrozenDict())
    turn, verdict = turn.on_end()
    assert isinstance(verdict, Remind)
    turn, _ = turn.on_call("bad", FrozenDict())
    assert turn.exhausted and turn.on_end()[1] == Exhausted(
        "Failed to provide valid structured output after 3 attempts"
    )


def test_a_payload_wins_over_later_failures() -> None:
    turn, _ = StructuredTurn(max_retries=0).on_call(None, FrozenDict(name="Ada"))
    turn, _ = turn.on_call("bad", FrozenDict())
    assert not turn.exhausted and turn.on_end()[1] == Delivered(FrozenDict(name="Ada"))


def test_each_turn_starts_afresh() -> None:
    """The count belongs to the turn: a new turn (a resumed session's
    first included) has used no retries."""
    assert StructuredTurn() == StructuredTurn(max_retries=MAX_RETRIES, failures=0, payload=None)
