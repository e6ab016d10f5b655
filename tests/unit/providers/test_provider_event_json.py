"""json_object: provider JSON that may reach stdout (WIRE-013/014)."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.encode import encode_record
from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import loads_strict
from agentx.providers.event_json import json_object

DEEP = 5000
#: Any character, lone surrogates (which st.text leaves out) included.
TEXT = st.text(st.characters() | st.sampled_from(["\ud800", "\udc00", "\udbff"]), max_size=6)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": [1, {"b": [true, null]}]}', {"a": (1, {"b": (True, None)})}),
        ('{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),  # a surrogate pair is one character
        ('{"a": "\\\\ud800"}', {"a": "\\ud800"}),  # an escaped backslash, not an escape
        ('{"a": "caf\\u00e9", "b": "\\u003a"}', {"a": "café", "b": ":"}),
        ('{"a": 123456789012345678901234567890}', {"a": 123456789012345678901234567890}),
        ('{"a": 1e308, "b": -0.0}', {"a": 1e308, "b": -0.0}),
        (
            '{"a": {"b": 1}, "c": {"b": 2}}',
            {"a": {"b": 1}, "c": {"b": 2}},
        ),  # same name, not siblings
    ],
    ids=[
        "nested-arrays-frozen",
        "surrogate-pair",
        "escaped-backslash-u",
        "bmp-escapes",
        "big-int",
        "finite-floats",
        "same-name-in-different-objects",
    ],
)
def test_accepted(text: str, expected: dict[str, object]) -> None:
    value = json_object(text)
    assert value == expected
    assert isinstance(value, FrozenDict)
    assert value == loads_strict(text)  # exactly the strict decoder's value
    encode_record({"event": value})  # every accepted value can reach stdout


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": 1, "\\u0061": 2}',
        '{"x": {"a": 1, "a": 1}}',
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": -Infinity}',
        '{"a": 1e400}',
        '{"a": -1e400}',
        '{"a": ' + "[" * DEEP + "]" * DEEP + "}",
        '{"a": "\\ud800"}',
        '{"a": "\\udc00"}',
        '{"a": "\\ude00\\ud83d"}',
        '{"\\ud800": 1}',
        '{"a": 01}',
        '{"a": "\x01"}',
        '{"a": 1,}',
        '{"a": 1} {}',
        "[1, 2]",
        '"text"',
        "3",
        "",
    ],
    ids=[
        "duplicate-member",
        "escaped-duplicate-member",
        "nested-duplicate-member",
        "nan",
        "infinity",
        "minus-infinity",
        "overflow-1e400",
        "overflow-minus-1e400",
        "deep-nesting",
        "lone-high-surrogate",
        "lone-low-surrogate",
        "reversed-pair",
        "lone-surrogate-in-a-name",
        "leading-zero",
        "raw-control-character",
        "trailing-comma",
        "two-documents",
        "array",
        "string",
        "number",
        "empty",
    ],
)
def test_refused(text: str) -> None:
    assert json_object(text) is None


@given(
    st.dictionaries(
        TEXT,
        st.recursive(
            st.none() | st.booleans() | st.integers() | TEXT,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
            max_leaves=8,
        ),
        max_size=4,
    )
)
def test_any_text_refused_or_accepted_as_the_strict_decoder_reads_it(
    value: dict[str, object],
) -> None:
    """ASCII-escaped JSON of any strings (lone surrogates included): the strict
    decoder's value when a record can carry it, else refused."""
    text = json.dumps(value)  # ensure_ascii: every non-ASCII character is an escape
    strict = loads_strict(text)
    try:
        encode_record({"event": strict})
    except ValueError:
        assert json_object(text) is None
    else:
        assert json_object(text) == strict


def test_nesting_the_encoder_refuses_is_refused_even_when_the_decoder_reaches_it() -> None:
    """With a raised recursion limit the strict decoder accepts 2,000 levels;
    the encoder cannot write more than 1,024 (MAX_DEPTH), so neither may this."""
    text = '{"a": "\\u00e9", "b": ' + "[" * 2000 + "]" * 2000 + "}"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        assert loads_strict(text) is not None
        assert json_object(text) is None
    finally:
        sys.setrecursionlimit(limit)
