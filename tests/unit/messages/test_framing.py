"""LineFramer: LF-only splitting, blank lines, the EOF tail and the record limit
(spec "Framing and envelopes", WIRE-EOF-001, DECISIONS section 1)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.framing import MAX_RECORD_BYTES, FramingError, Line, LineFramer

THREE = b'{"type":"keep_alive","n":1}\n{"type":"keep_alive","n":"\xe2\x80\xa8"}\n{"n":3}'


def frame(chunks: list[bytes], *, limit: int = MAX_RECORD_BYTES) -> list[Line]:
    framer = LineFramer(limit)
    lines: list[Line] = []
    for chunk in chunks:
        lines.extend(framer.feed(chunk))
    lines.extend(framer.close())
    return lines


def pairs(lines: list[Line]) -> list[tuple[int, bytes]]:
    return [(line.number, line.data) for line in lines]


EXPECTED_THREE = [
    (1, b'{"type":"keep_alive","n":1}'),
    (2, b'{"type":"keep_alive","n":"\xe2\x80\xa8"}'),
    (3, b'{"n":3}'),
]


def test_scenario_1_every_two_way_split_without_final_newline() -> None:
    for offset in range(len(THREE) + 1):
        assert pairs(frame([THREE[:offset], THREE[offset:]])) == EXPECTED_THREE, offset


def test_scenario_1_every_three_way_split() -> None:
    data = THREE + b"\n"
    for first in range(len(data) + 1):
        for second in range(first, len(data) + 1, 7):
            chunks = [data[:first], data[first:second], data[second:]]
            assert pairs(frame(chunks)) == EXPECTED_THREE, (first, second)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", [], id="empty"),
        pytest.param(b"{}\n", [(1, b"{}")], id="one-terminated"),
        pytest.param(b"{}", [(1, b"{}")], id="one-unterminated"),
        pytest.param(b"{}\r\n{}\r\n", [(1, b"{}\r"), (2, b"{}\r")], id="crlf-keeps-cr"),
        pytest.param(b"{}\r{}\r", [(1, b"{}\r{}\r")], id="cr-only-is-one-line"),
        pytest.param(b"\n\n{}\n \t\r\n{}", [(3, b"{}"), (5, b"{}")], id="blank-lines-counted"),
        pytest.param(b"   ", [], id="whitespace-only-tail"),
        pytest.param(b"\x0c\n", [(1, b"\x0c")], id="formfeed-is-not-blank"),
        pytest.param(b" {}\n", [(1, b" {}")], id="leading-space-kept"),
        pytest.param(
            '{"a":"x\u2028y\u2029z\x85"}\n'.encode(),
            [(1, '{"a":"x\u2028y\u2029z\x85"}'.encode())],
            id="u2028-u2029-nel-do-not-split",
        ),
    ],
)
def test_split_on_lf_only(data: bytes, expected: list[tuple[int, bytes]]) -> None:
    assert pairs(frame([data])) == expected
    assert pairs(frame([data[i : i + 1] for i in range(len(data))])) == expected


@pytest.mark.parametrize(
    ("chunks", "passes"),
    [
        pytest.param([b"x" * 16 + b"\n"], True, id="complete-at-limit"),
        pytest.param([b"x" * 17 + b"\n"], False, id="complete-one-past"),
        pytest.param([b"x" * 16], True, id="tail-at-limit"),
        pytest.param([b"x" * 17], False, id="tail-one-past"),
        pytest.param([b"x" * 8, b"x" * 8, b"\n"], True, id="grown-tail-at-limit"),
        pytest.param([b"x" * 8, b"x" * 9], False, id="grown-tail-one-past"),
        pytest.param([b"x" * 8, b"x" * 8 + b"\n"], True, id="joined-at-limit"),
        pytest.param([b"x" * 8, b"x" * 9 + b"\n"], False, id="joined-one-past"),
        pytest.param([b"x" * 16 + b"\r\n"], False, id="cr-counts"),
    ],
)
def test_record_limit(chunks: list[bytes], passes: bool) -> None:
    if passes:
        assert [len(line.data) for line in frame(chunks, limit=16)] == [16]
    else:
        with pytest.raises(FramingError) as caught:
            frame(chunks, limit=16)
        assert caught.value.line_number == 1
        assert caught.value.reason == "record exceeds 16 bytes"


def test_default_limit_is_8_mib_exactly() -> None:
    at_limit = b"x" * MAX_RECORD_BYTES
    assert MAX_RECORD_BYTES == 8_388_608
    assert [len(line.data) for line in frame([at_limit, b"\n"])] == [MAX_RECORD_BYTES]
    with pytest.raises(FramingError):
        frame([at_limit, b"x"])


def test_endless_line_fails_as_soon_as_the_tail_passes_the_limit() -> None:
    framer = LineFramer(1024)
    assert pairs(framer.feed(b"{}\n" + b"x" * 1000)) == [(1, b"{}")]
    with pytest.raises(FramingError) as caught:
        framer.feed(b"x" * 25)
    assert caught.value.line_number == 2
    assert caught.value.preceding == ()


def test_lines_before_an_oversized_line_are_handed_over_with_the_error() -> None:
    framer = LineFramer(4)
    with pytest.raises(FramingError) as caught:
        framer.feed(b"{}\n\n[1]\nxxxxx\n{}\n")
    assert caught.value.line_number == 4
    assert pairs(list(caught.value.preceding)) == [(1, b"{}"), (3, b"[1]")]


def test_failure_latches() -> None:
    framer = LineFramer(2)
    with pytest.raises(FramingError):
        framer.feed(b"xxx")
    with pytest.raises(FramingError) as again:
        framer.feed(b"\n{}\n")
    assert again.value.line_number == 1
    with pytest.raises(FramingError):
        framer.close()


def test_line_is_frozen() -> None:
    line = Line(number=1, data=b"{}")
    with pytest.raises(AttributeError):
        line.number = 2  # type: ignore[misc]


records = st.lists(
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")), min_size=0, max_size=12
)


@given(records=records, final_newline=st.booleans(), cuts=st.lists(st.integers(0, 400)))
def test_any_chunking_yields_the_same_lines(
    records: list[bytes], final_newline: bool, cuts: list[int]
) -> None:
    data = b"\n".join(records) + (b"\n" if final_newline else b"")
    whole = pairs(frame([data]))
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    chunks = [data[a:b] for a, b in pairwise(bounds)]
    assert pairs(frame(chunks)) == whole
    expected = [
        (number, record) for number, record in enumerate(records, start=1) if record.strip(b" \t\r")
    ]
    assert whole == expected
