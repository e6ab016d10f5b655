"""The outbound record encoder: framing, separator escaping, refusals (WIRE-013)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.encode import (
    LONE_SURROGATE,
    MAX_DEPTH,
    NON_FINITE,
    NOT_JSON,
    TOO_DEEP,
    EncodeError,
    encode_record,
    string_spellings,
)
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.raw_json import RAW_INVALID, RAW_NOT_ONE_LINE, RawJSON

CORPORA = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpora"


def _line_breaks(frame: bytes) -> int:
    """Line terminators a line-splitting consumer may honour: LF, CR, U+2028, U+2029."""
    text = frame.decode("utf-8")
    return sum(text.count(mark) for mark in ("\n", "\r", "\u2028", "\u2029"))


def _nested(depth: int) -> dict[str, Any]:
    """A record whose containers nest ``depth`` deep, the record itself included."""
    value: Any = 1
    for _ in range(depth - 1):
        value = [value]
    return {"v": value}


# Scenario 2: U+2028/U+2029 in assistant text stay inside one physical line.
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a\u2028b", id="line-separator"),
        pytest.param("a\u2029b", id="paragraph-separator"),
        pytest.param("\u2028\u2029\u2028", id="only-separators"),
        pytest.param("x\n\u2028y\r\u2029z\u0085", id="mixed-with-escaped-breaks"),
        pytest.param("\\u2028 literal \u2028 real", id="spelled-out-escape-kept"),
    ],
)
def test_scenario_2_separators_stay_on_one_line(text: str) -> None:
    record = freeze(
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": None,
            "session_id": "s1",
            "uuid": "u1",
        }
    )
    frame = encode_record(record)

    assert frame.endswith(b"\n")
    assert _line_breaks(frame) == 1
    assert json.loads(frame)["message"]["content"][0]["text"] == text


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param({"type": "keep_alive"}, b'{"type":"keep_alive"}\n', id="minimal"),
        pytest.param({"p": "a/b"}, b'{"p":"a/b"}\n', id="slash-not-escaped"),
        pytest.param(
            {"z": "<&>", "a": {"y": 1, "b": 2}},
            b'{"z":"<&>","a":{"y":1,"b":2}}\n',
            id="html-raw-member-order-kept-no-indent",
        ),
        pytest.param({"t": "caf\u00e9 \U0001f600"}, '{"t":"café 😀"}\n'.encode(), id="utf8-raw"),
        pytest.param({"t": 'q"\\\n\t\x00'}, b'{"t":"q\\"\\\\\\n\\t\\u0000"}\n', id="json-escapes"),
        pytest.param(
            FrozenDict(a=(1, 2.5, None, True), b=FrozenDict(c=())),
            b'{"a":[1,2.5,null,true],"b":{"c":[]}}\n',
            id="frozen-dict-and-tuples",
        ),
        pytest.param({"n": 2**64}, b'{"n":18446744073709551616}\n', id="big-int"),
        pytest.param({"s": "\u2028"}, b'{"s":"\\u2028"}\n', id="separator-escape"),
    ],
)
def test_exact_bytes(record: dict[str, Any], expected: bytes) -> None:
    assert encode_record(record) == expected


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        pytest.param({"x": math.nan}, NON_FINITE, id="nan"),
        pytest.param({"x": [math.inf]}, NON_FINITE, id="inf-nested"),
        pytest.param({"x": {"y": -math.inf}}, NON_FINITE, id="neg-inf-nested"),
        pytest.param({"x": "SECRET\ud800"}, LONE_SURROGATE, id="lone-high-surrogate-value"),
        pytest.param({"SECRET\udc00": 1}, LONE_SURROGATE, id="lone-low-surrogate-key"),
        pytest.param({"x": b"SECRET"}, NOT_JSON, id="bytes"),
        pytest.param({"x": {"SECRET"}}, NOT_JSON, id="set"),
        pytest.param({"x": 10**5000}, NOT_JSON, id="int-beyond-str-digits"),
        pytest.param(_nested(MAX_DEPTH + 1), TOO_DEEP, id="one-past-max-depth"),
    ],
)
def test_refusals_are_fixed_and_quote_nothing(record: dict[str, Any], reason: str) -> None:
    with pytest.raises(EncodeError) as caught:
        encode_record(record)

    assert str(caught.value) == reason
    assert "SECRET" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_max_depth_is_accepted() -> None:
    frame = encode_record(_nested(MAX_DEPTH))
    assert frame.count(b"[") == MAX_DEPTH - 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{"a":1,"a":2}', b'{"r":{"a":1,"a":2}}\n', id="duplicates-kept-verbatim"),
        pytest.param('{ "a" : [ 1 ] }', b'{"r":{ "a" : [ 1 ] }}\n', id="spacing-kept"),
        pytest.param('"x\u2028y"', b'{"r":"x\\u2028y"}\n', id="separator-escaped-inside"),
        pytest.param('"\\u0061"', b'{"r":"\\u0061"}\n', id="escape-spelling-kept"),
    ],
)
def test_raw_json_is_spliced_verbatim(text: str, expected: bytes) -> None:
    assert encode_record({"r": RawJSON(text=text)}) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param('{"a":\n1}', RAW_NOT_ONE_LINE, id="lf-whitespace"),
        pytest.param('{"a":\r1}', RAW_NOT_ONE_LINE, id="cr-whitespace"),
        pytest.param('{"a":1', RAW_INVALID, id="truncated"),
        pytest.param('{"a":1}{"b":2}', RAW_INVALID, id="two-values"),
        pytest.param('{"a":NaN}', RAW_INVALID, id="nan-literal"),
        pytest.param("[Infinity]", RAW_INVALID, id="infinity-literal"),
        pytest.param("", RAW_INVALID, id="empty"),
    ],
)
def test_raw_json_refuses_what_would_break_framing(text: str, reason: str) -> None:
    with pytest.raises(EncodeError, match=f"^{reason}$"):
        RawJSON(text=text)


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        pytest.param("abc", {b"abc"}, id="plain"),
        pytest.param('a"b', {b'a"b', b'a\\"b'}, id="quote"),
        pytest.param("caf\u00e9", {"café".encode(), b"caf\\u00e9"}, id="non-ascii"),
        pytest.param("x\u2028", {"x\u2028".encode(), b"x\\u2028"}, id="line-separator"),
        pytest.param("\ud800", {b"\\ud800"}, id="lone-surrogate-only-escaped"),
    ],
)
def test_string_spellings(literal: str, expected: set[bytes]) -> None:
    assert string_spellings(literal) == expected


_JSON_TEXT = st.text()  # hypothesis text excludes surrogates by default
_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _JSON_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(_JSON_TEXT, children, max_size=4)
    ),
    max_leaves=20,
)
_RECORDS = st.dictionaries(_JSON_TEXT, _JSON_VALUES, max_size=6)


@given(_RECORDS)
def test_round_trip_is_one_line(record: dict[str, Any]) -> None:
    frame = encode_record(record)

    assert json.loads(frame) == record
    assert frame.endswith(b"\n")
    assert _line_breaks(frame) == 1
    assert encode_record(freeze(record)) == frame


def _accepted_jsontestsuite_files() -> list[Path]:
    folder = CORPORA / "jsontestsuite"
    if not folder.is_dir():
        return []
    rows = (line.split("\t") for line in (folder / "stdlib_results.tsv").read_text().splitlines())
    names = [row[0] for row in rows if row[1] == "y" and row[7] == "accept"]
    return [folder / "test_parsing" / name for name in names]


@pytest.mark.parametrize("path", _accepted_jsontestsuite_files(), ids=lambda path: path.name)
def test_jsontestsuite_values_survive_encoding(path: Path) -> None:
    """Every value the conformance suite says a host accepts re-encodes to one equal line."""
    value = json.loads(path.read_bytes())
    frame = encode_record({"v": value})

    assert json.loads(frame) == {"v": value}
    assert _line_breaks(frame) == 1


def test_corpora_present() -> None:
    if not CORPORA.is_dir():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    assert _accepted_jsontestsuite_files(), "jsontestsuite manifest lists no accepted files"


@pytest.mark.parametrize(
    "name", ["raw_u2028_in_string.json", "raw_u2029_in_string.json", "raw_nel_u0085_in_string.json"]
)
def test_generated_raw_separators_are_escaped_on_output(name: str) -> None:
    path = CORPORA / "generated" / "json" / name
    if not path.is_file():
        pytest.skip(f"shared corpora not found at {CORPORA}")
    record = json.loads(path.read_bytes())
    frame = encode_record(record)

    assert json.loads(frame) == record
    assert _line_breaks(frame) == 1


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("/home/u/proj", "/home/u/proj"),
        ("/tmp/café", "/tmp/café"),
        ("/tmp/bad\udcff", "/tmp/bad\\xff"),
        ("/tmp/\udcc3(-split", "/tmp/\\xc3(-split"),
        ("/tmp/\udcc3\udca9", "/tmp/é"),
        ("/tmp/\udc28", "/tmp/\\udc28"),
    ],
    ids=["ascii", "utf8", "one-byte", "cut-sequence", "escaped-utf8", "not-a-byte"],
)
def test_fs_text_escapes_only_what_is_not_utf8(name: str, text: str) -> None:
    from agentx.messages.encode import encode_record, fs_text

    assert fs_text(name) == text
    assert encode_record({"cwd": fs_text(name)})  # always encodable


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("/home/u/proj", "/home/u/proj"),
        ("/tmp/café", "/tmp/café"),
        ("/tmp/bad\udcff", "/tmp/bad\\xff"),
        ("/tmp/bad\\xff", "/tmp/bad\\\\xff"),
        ("/tmp/a\\b", "/tmp/a\\\\b"),
        ("/tmp/a\\\udcff", "/tmp/a\\\\\\xff"),
        ("/tmp/\udc28", "/tmp/\\udc28"),
        ("/tmp/\\udc28", "/tmp/\\\\udc28"),
    ],
    ids=[
        "ascii",
        "utf8",
        "one-byte",
        "the-byte-spelled-out",
        "backslash",
        "backslash-then-byte",
        "not-a-byte",
        "not-a-byte-spelled-out",
    ],
)
def test_fs_key_keeps_plain_names_and_escapes_the_rest(name: str, key: str) -> None:
    """DEC-CLI-5 ``--continue``: the stored working directory names it alone;
    fs_text (display) gives the byte 0xff and ``\\xff`` spelled out the same text."""
    from agentx.messages.encode import encode_record, fs_key, fs_text

    assert fs_key(name) == key
    assert encode_record({"cwd": fs_key(name)})
    if name in ("/tmp/bad\udcff", "/tmp/bad\\xff"):
        assert fs_text(name) == "/tmp/bad\\xff"


@given(st.lists(st.binary(min_size=1, max_size=6), min_size=2, max_size=2, unique=True))
def test_fs_key_is_one_to_one_on_file_system_names(names: list[bytes]) -> None:
    from agentx.messages.encode import fs_key

    first, second = (os.fsdecode(name) for name in names)
    assert fs_key(first) != fs_key(second)
