"""The one strict JSON decoder (WIRE-014, DECISIONS section 1): frozen values,
one pass, closed rules; every member occurrence on request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.strict_json import (
    DUPLICATE_MEMBER,
    DuplicateMember,
    Members,
    NonFiniteNumber,
    NumberOverflow,
    StrictJSONError,
    decode,
    decode_members,
    loads_strict,
)

SCALARS = st.none() | st.booleans() | st.integers() | st.text()
JSON_VALUES = st.recursive(
    SCALARS | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _mutable_inside(value: Any) -> bool:
    if isinstance(value, list) or (isinstance(value, dict) and type(value) is not FrozenDict):
        return True
    if isinstance(value, dict):
        return any(_mutable_inside(v) for v in value.values())
    if isinstance(value, tuple):
        return any(_mutable_inside(v) for v in value)
    return False


@given(JSON_VALUES)
def test_round_trip_is_the_frozen_value(value: Any) -> None:
    loaded = loads_strict(json.dumps(value))
    assert loaded == freeze(value)
    assert not _mutable_inside(loaded)


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ('{"a": 1, "a": 2}', DUPLICATE_MEMBER),
        ('{"a": 1, "\\u0061": 2}', DUPLICATE_MEMBER),
        ('[{"x": [{"y": 1, "y": 1}]}]', DUPLICATE_MEMBER),
        ('{"a": NaN}', "non-finite number NaN is not JSON"),
        ('{"a": -Infinity}', "non-finite number -Infinity is not JSON"),
        ('{"a": 1e400}', "number overflows to infinity"),
        ('{"a": ', "invalid JSON"),
        (b'{"a": "\xff"}', "invalid UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "nesting too deep"),
    ],
    ids=[
        "duplicate",
        "escape-equivalent-duplicate",
        "duplicate-at-depth",
        "nan",
        "infinity",
        "overflow",
        "truncated",
        "bad-utf8",
        "too-deep",
    ],
)
def test_refusals_are_bounded_reasons(document: str | bytes, reason: str) -> None:
    with pytest.raises(StrictJSONError) as caught:
        loads_strict(document)
    assert caught.value.reason == reason


def test_arrays_nested_in_arrays_and_objects_are_tuples() -> None:
    loaded = loads_strict('{"a": [[1, {"b": [2, [3]]}]], "c": {"d": []}}')
    assert loaded == {"a": ((1, {"b": (2, (3,))}),), "c": {"d": ()}}
    assert type(loaded["a"][0][1]) is FrozenDict


def test_members_keep_every_occurrence_in_document_order() -> None:
    value = decode_members('{"a": 1, "\\u0061": [{"b": 2}], "c": {}}')
    assert value == Members((("a", 1), ("a", [Members((("b", 2),))]), ("c", Members(()))))
    assert value.duplicated
    assert not value.items[1][1][0].duplicated


@pytest.mark.parametrize(
    ("document", "refusal"),
    [
        ('{"a": 1, "a": 2}', DuplicateMember),
        ("[NaN]", NonFiniteNumber),
        ('{"a": 1e400}', NumberOverflow),
    ],
    ids=["duplicate", "nan", "overflow"],
)
def test_decode_refuses_with_a_typed_reason(document: str, refusal: type[StrictJSONError]) -> None:
    with pytest.raises(refusal):
        decode(document)


def test_decode_members_keeps_duplicates_but_refuses_numbers() -> None:
    assert decode_members('{"a": 1, "a": 2}').duplicated
    with pytest.raises(NonFiniteNumber) as caught:
        decode_members('{"a": 1, "a": -Infinity}')
    assert caught.value.constant == "-Infinity"
    with pytest.raises(NumberOverflow):
        decode_members('{"a": -1e400}')
