"""decode_line: the strict JSON layer, duplicate members by depth, and every
row of DECISIONS section 1 (WIRE-001/002/014/021, scenario 20)."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.decode import (
    FatalDecodeError,
    InboundRecord,
    decode_line,
    parse_object,
)
from agentx.messages.framing import Line, LineFramer
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound import KeepAlive, UnknownRecord
from agentx.messages.inbound_control import (
    ControlRequest,
    ControlResponse,
    InvalidControlRequest,
    UncorrelatableControl,
)
from agentx.messages.inbound_import import AttachmentCommit
from agentx.messages.inbound_user import InvalidUserRecord, TextPart, UserRecord
from agentx.messages.strict_json import DUPLICATE_MEMBER, MAX_DEPTH

SECRET = "sk-live-SECRET-0123456789"


def decode(data: bytes, number: int = 7) -> InboundRecord:
    return decode_line(Line(number=number, data=data))


def fatal(data: bytes) -> FatalDecodeError:
    with pytest.raises(FatalDecodeError) as caught:
        decode(data)
    assert caught.value.line_number == 7
    assert len(caught.value.message) <= 120
    assert SECRET not in str(caught.value)
    return caught.value


def nested(depth: int) -> bytes:
    """A keep_alive record whose total nesting (envelope included) is ``depth``."""
    inner = b"[]" if depth >= 2 else b""
    for _ in range(depth - 2):
        inner = b'{"k":' + inner + b"}"
    return b'{"type":"keep_alive","x":' + inner + b"}" if depth >= 2 else b'{"type":"keep_alive"}'


# --- DECISIONS section 1, row 1: fatal JSON-layer problems ------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b'{"type":"user","x":"\xff"}', "invalid UTF-8", id="invalid-utf8"),
        pytest.param(b'{"x":"\xc0\xaf"}', "invalid UTF-8", id="overlong-utf8"),
        pytest.param(b'{"x":"\xed\xa0\x80"}', "invalid UTF-8", id="encoded-surrogate"),
        pytest.param(b'\xef\xbb\xbf{"type":"keep_alive"}', "byte order mark", id="utf8-bom"),
        pytest.param('{"type":"keep_alive"}'.encode("utf-16"), "invalid UTF-8", id="utf16-bom"),
        pytest.param(
            '{"type":"keep_alive"}'.encode("utf-16-be"), "invalid JSON", id="utf16-no-bom"
        ),
        pytest.param(b'{"type":"keep_alive"', "invalid JSON", id="unterminated"),
        pytest.param(b'{"type":"keep_alive"}{}', "invalid JSON", id="extra-data"),
        pytest.param(b'{"type":"keep_alive","x":NaN}', "NaN", id="nan"),
        pytest.param(b'{"type":"keep_alive","x":Infinity}', "NaN", id="infinity"),
        pytest.param(b'{"type":"keep_alive","x":-Infinity}', "NaN", id="neg-infinity"),
        pytest.param(b'{"type":"keep_alive","x":1e400}', "infinity", id="overflow"),
        pytest.param(b'{"type":"keep_alive","x":-1e400}', "infinity", id="neg-overflow"),
        pytest.param(b'{"type":"keep_alive","x":' + b"1" * 5000 + b"}", "number", id="int-5000"),
        pytest.param(b'{"type":"keep_alive","x":"\\ud800"}', "surrogate", id="lone-high"),
        pytest.param(b'{"type":"keep_alive","x":"\\uDC00"}', "surrogate", id="lone-low"),
        pytest.param(b'{"type":"keep_alive","\\udc00":1}', "surrogate", id="lone-in-name"),
        pytest.param(b'{"type":"keep_alive","x":"\\ude00\\ud83d"}', "surrogate", id="reversed"),
        pytest.param(b'{"type":"keep_alive","x":"\\\\\\ud800"}', "surrogate", id="after-bs"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "nesting", id="deep-100000"),
        pytest.param(b'{"a":' * 100_000, "nesting", id="deep-unclosed"),
        pytest.param(nested(MAX_DEPTH + 1), "nesting", id="depth-65"),
        pytest.param(b'["type","keep_alive"]', "JSON object", id="top-array"),
        pytest.param(b'"keep_alive"', "JSON object", id="top-string"),
        pytest.param(b"{}", "string type", id="no-type"),
        pytest.param(b'{"type":7}', "string type", id="non-string-type"),
        pytest.param(b'{"type":null}', "string type", id="null-type"),
    ],
)
def test_fatal_json_layer(data: bytes, message: str) -> None:
    assert message in fatal(data).message


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(nested(MAX_DEPTH), id="depth-64"),
        pytest.param(b'{"type":"keep_alive","x":"\\ud83d\\ude00"}', id="surrogate-pair"),
        pytest.param(b'{"type":"keep_alive","x":"\\\\ud800"}', id="escaped-backslash"),
        pytest.param(b'{"type":"keep_alive","x":"' + b"[" * 200 + b'"}', id="brackets-in-str"),
        pytest.param(b'{"type":"keep_alive","x":"\\"[[[' + b"{" * 70 + b'"}', id="quote-esc"),
        pytest.param(b'{"type":"keep_alive","x":1e308}', id="largest-finite"),
        pytest.param(b'{"type":"keep_alive","x":' + b"1" * 4300 + b"}", id="int-4300"),
        pytest.param(b' \t{"type":"keep_alive"} \r', id="json-whitespace"),
        pytest.param('{"type":"keep_alive","x":"a\u2028b"}'.encode(), id="raw-u2028"),
    ],
)
def test_accepted_edge_values(data: bytes) -> None:
    assert decode(data) == KeepAlive(line=7)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"type":"keep_alive"} x', id="extra-after-space"),
        pytest.param('{"type":"keep_alive"}\r{}', id="extra-after-cr"),
        pytest.param(' \t{"type":"keep_alive"}]', id="leading-whitespace-extra"),
        pytest.param(" \r", id="whitespace-only"),
        pytest.param("  ]", id="no-value-after-whitespace"),
        pytest.param("}", id="no-value"),
        pytest.param('{"type":"keep_alive",}', id="trailing-comma"),
        pytest.param('\t{"type":"keep_alive","x":[1,]}', id="array-after-whitespace"),
    ],
)
def test_invalid_json_diagnostic_is_the_stdlib_one(text: str) -> None:
    """Whatever path the decoder takes, the diagnostic names the stdlib's own
    message and column."""
    with pytest.raises(json.JSONDecodeError) as stdlib:
        json.loads(text)
    message = stdlib.value.msg.removesuffix(" at")
    assert fatal(text.encode()).message == f"invalid JSON: {message} at column {stdlib.value.colno}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{"type":"x","a":"open',
            "invalid JSON: Unterminated string starting at column 17",
            id="unterminated-string",
        ),
        pytest.param(
            '{"type":"x","a":"\x01"}',
            "invalid JSON: Invalid control character at column 18",
            id="control-character",
        ),
    ],
)
def test_invalid_json_diagnostic_reads_as_a_sentence(text: str, message: str) -> None:
    """The stdlib's messages that end in "at" do not stutter ("at at column")."""
    assert fatal(text.encode()).message == message


@pytest.mark.parametrize("around", [" ", "\t", "\r", " \t\r ", "\n"], ids=repr)
@pytest.mark.parametrize("where", ["before", "after", "both"])
def test_json_whitespace_around_the_record(around: str, where: str) -> None:
    body = '{"type":"user","message":{"content":[{"type":"text","text":"x"}]},'
    body += '"parent_tool_use_id":null}'
    before = around if where != "after" else ""
    after = around if where != "before" else ""
    record = decode(f"{before}{body}{after}".encode())
    assert isinstance(record, UserRecord)
    assert record.content == (TextPart(text="x"),)


def test_depth_counts_arrays_and_objects_alike() -> None:
    arrays = b'{"type":"keep_alive","x":' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    assert decode(arrays) == KeepAlive(line=7)
    too_deep = b'{"type":"keep_alive","x":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"
    assert "nesting" in fatal(too_deep).message


def test_diagnostics_never_echo_content() -> None:
    for data in (
        f'{{"type":"keep_alive","k":"{SECRET}" x}}'.encode(),
        f'{{"type":"keep_alive","{SECRET}":1,"{SECRET}":2}}'.encode(),
        f'{{"type":"attachment_import","version":1,"operation":"{SECRET}"}}'.encode(),
        f'{{"{SECRET}":NaN}}'.encode(),
    ):
        fatal(data)


# --- WIRE-014: duplicate members by depth (scenario 20) -------------------

ENVELOPE_DUPLICATES = [
    pytest.param(b'{"type":"keep_alive","type":"keep_alive"}', id="outer-plain"),
    pytest.param(b'{"type":"keep_alive","\\u0074ype":"keep_alive"}', id="outer-escape"),
    pytest.param(b'{"type":"keep_alive","a/b":1,"a\\/b":2}', id="outer-solidus"),
    pytest.param(
        '{"type":"keep_alive","\U0001f600":1,"\\ud83d\\ude00":2}'.encode(), id="outer-pair"
    ),
    pytest.param(b'{"type":"keep_alive","x":{"y":{"z":1,"z":2}}}', id="depth-3"),
    pytest.param(b'{"type":"keep_alive","x":[{"k":1},{"k":1,"k":2}]}', id="in-array"),
    pytest.param(
        b'{"type":"user","message":{"role":"user","content":"a","\\u0063ontent":"b"},'
        b'"parent_tool_use_id":null}',
        id="user-message",
    ),
    pytest.param(
        b'{"type":"attachment_import","version":1,"operation":"commit",'
        b'"upload_id":"upl_a","upload\\u005fid":"upl_b"}',
        id="operation-payload",
    ),
    pytest.param(
        b'{"type":"control_response","response":{"subtype":"success","request_id":"r",'
        b'"response":{"behavior":"allow","behavior":"deny"}}}',
        id="nested-response",
    ),
    pytest.param(
        b'{"type":"control_response","response":{"subtype":"error","request_id":"r",'
        b'"error":"e","pending_permission_requests":[{"type":"control_request",'
        b'"request_id":"p","request":{"subtype":"can_use_tool","tool_name":"A",'
        b'"tool_name":"B"}}]}}',
        id="pending-permission-requests",
    ),
    pytest.param(
        b'{"type":"control_request","request_id":"r","\\u0072equest_id":"s",'
        b'"request":{"subtype":"interrupt"}}',
        id="control-request-id-ambiguous",
    ),
    pytest.param(
        b'{"type":"control_request","type":"control_request","request_id":"r",'
        b'"request":{"subtype":"interrupt","a":1,"a":2}}',
        id="control-type-ambiguous",
    ),
    pytest.param(
        b'{"type":"control_request","request":{"subtype":"interrupt","a":1,"a":2}}',
        id="control-no-request-id",
    ),
    pytest.param(
        b'{"type":"control_request","request_id":"r","meta":{"a":1,"a":2},'
        b'"request":{"subtype":"interrupt"}}',
        id="control-sibling-of-request",
    ),
    pytest.param(
        b'{"type":"control_request","request_id":"r","meta":{"x":{"a":1,"a":2},"x":1},'
        b'"request":{"subtype":"interrupt"}}',
        id="control-dropped-sibling",
    ),
]


@pytest.mark.parametrize("data", ENVELOPE_DUPLICATES)
def test_duplicate_member_is_fatal(data: bytes) -> None:
    assert fatal(data).message == DUPLICATE_MEMBER


@pytest.mark.parametrize(
    "request_json",
    [
        pytest.param(b'{"subtype":"interrupt","subtype":"initialize"}', id="request-plain"),
        pytest.param(b'{"subtype":"interrupt","\\u0073ubtype":"x"}', id="request-escape"),
        pytest.param(
            b'{"subtype":"can_use_tool","input":{"path":"a","p\\u0061th":"b"}}', id="depth-2"
        ),
        pytest.param(b'{"subtype":"x","list":[[{"k":1,"k":2}]]}', id="in-nested-array"),
        pytest.param(b'{"subtype":"x","a":{"k":1,"k":2},"a":1}', id="dropped-inside"),
        pytest.param(b"[{},{},{}]".replace(b"{}", b'{"k":1,"k":2}'), id="request-array"),
    ],
)
def test_duplicate_inside_request_is_a_correlated_error(request_json: bytes) -> None:
    data = b'{"type":"control_request","request_id":"req-9","request":' + request_json + b"}"
    assert decode(data) == InvalidControlRequest(line=7, request_id="req-9", error=DUPLICATE_MEMBER)


def test_duplicate_detection_still_applies_every_other_json_rule() -> None:
    data = b'{"type":"control_request","request_id":"r","request":{"a":1,"a":NaN}}'
    assert "NaN" in fatal(data).message


def test_parse_object_rejects_duplicates_wherever_they_are() -> None:
    line = Line(number=3, data=b'{"request":{"a":1,"a":2}}')
    with pytest.raises(FatalDecodeError, match=DUPLICATE_MEMBER):
        parse_object(line)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b'{"type":"keep_alive","a":1,"A":2}', KeepAlive(line=7), id="case-differs"),
        pytest.param(
            '{"type":"keep_alive","\u00e9":1,"e\u0301":2}'.encode(),
            KeepAlive(line=7),
            id="nfc-nfd-distinct",
        ),
        pytest.param(
            b'{"type":"user","message":"hi","parent_tool_use_id":null,'
            b'"session_id":"s","sessionId":"t","is_replay":false,"isReplay":false}',
            None,
            id="alias-pairs",
        ),
    ],
)
def test_distinct_names_are_not_duplicates(data: bytes, expected: InboundRecord | None) -> None:
    record = decode(data)
    if expected is None:
        assert isinstance(record, UserRecord)
        assert record.session_id == "s"
        assert len(record.warnings) == 2
    else:
        assert record == expected


# --- DECISIONS section 1, the other rows ------------------------------------


def test_attachment_import_schema_break_is_fatal() -> None:
    data = b'{"type":"attachment_import","version":1,"operation":"commit","upload_id":"x"}'
    assert "upload_id" in fatal(data).message
    ok = b'{"type":"attachment_import","version":1,"operation":"commit","upload_id":"upl_x"}'
    assert decode(ok) == AttachmentCommit(line=7, upload_id="upl_x")


def test_control_request_without_string_request_id_is_dropped() -> None:
    for request_id in (b"", b',"request_id":7', b',"request_id":null'):
        data = b'{"type":"control_request"' + request_id + b',"request":{"subtype":"x"}}'
        record = decode(data)
        assert isinstance(record, UncorrelatableControl)
        assert record.line == 7


def test_control_request_with_bad_payload_is_a_correlated_error() -> None:
    record = decode(b'{"type":"control_request","request_id":"r","request":{"x":1}}')
    assert isinstance(record, InvalidControlRequest)
    assert record.request_id == "r"


def test_semantically_invalid_user_record_is_an_input_error() -> None:
    data = b'{"type":"user","uuid":"u-1","message":{"role":"assistant","content":"x"},'
    data += b'"parent_tool_use_id":null}'
    assert decode(data) == InvalidUserRecord(line=7, uuid="u-1", reason="message role must be user")


def test_unknown_type_is_reported_for_a_warning() -> None:
    assert decode(b'{"type":"future_thing","x":[1]}') == UnknownRecord(line=7, type="future_thing")


# --- frozen values ------------------------------------------------------------


def test_decoded_payloads_are_frozen_all_the_way_down() -> None:
    record = decode(
        b'{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool",'
        b'"input":{"list":[1,[2,{"k":[3]}]],"obj":{"a":1}}}}'
    )
    assert isinstance(record, ControlRequest)
    payload = record.payload
    assert payload == {"input": {"list": (1, (2, {"k": (3,)})), "obj": {"a": 1}}}
    assert isinstance(payload["input"]["list"][1][1], FrozenDict)
    with pytest.raises(TypeError):
        payload["input"]["obj"]["a"] = 2
    with pytest.raises(TypeError):
        payload["input"].pop("list")
    with pytest.raises(TypeError):
        payload.update(x=1)
    with pytest.raises(AttributeError):
        record.request_id = "s"  # type: ignore[misc]


def test_control_response_raw_is_frozen() -> None:
    record = decode(
        b'{"type":"control_response","response":{"subtype":"success","request_id":"r",'
        b'"response":{"behavior":"allow","updatedInput":{"a":[1]}}}}'
    )
    assert isinstance(record, ControlResponse)
    assert record.response is not None
    with pytest.raises(TypeError):
        record.response["behavior"] = "deny"
    assert record.raw["response"]["response"]["updatedInput"]["a"] == (1,)


# --- property: chunking never changes the records ---------------------------

json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
stream_record = st.one_of(
    st.builds(lambda x: {"type": "keep_alive", "x": x}, json_value),
    st.builds(
        lambda text, rid: {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": text}]},
            "parent_tool_use_id": None,
            "uuid": rid,
        },
        st.text(max_size=30),
        st.text(max_size=6),
    ),
    st.builds(
        lambda rid, payload: {"type": "control_request", "request_id": rid, "request": payload},
        st.text(max_size=6),
        st.dictionaries(st.sampled_from(["subtype", "a", "b"]), json_value, max_size=3),
    ),
)


@given(
    records=st.lists(stream_record, min_size=1, max_size=6),
    ensure_ascii=st.booleans(),
    final_newline=st.booleans(),
    cuts=st.lists(st.integers(0, 2000), max_size=8),
)
def test_any_chunking_of_a_valid_stream_yields_the_same_records(
    records: list[dict[str, Any]], ensure_ascii: bool, final_newline: bool, cuts: list[int]
) -> None:
    lines = [json.dumps(r, ensure_ascii=ensure_ascii).encode() for r in records]
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    framer = LineFramer()
    decoded: list[InboundRecord] = []
    for start, end in pairwise(bounds):
        decoded.extend(decode_line(line) for line in framer.feed(data[start:end]))
    decoded.extend(decode_line(line) for line in framer.close())
    expected = [decode_line(Line(number=n, data=d)) for n, d in enumerate(lines, start=1)]
    assert decoded == expected
    assert [record.line for record in decoded] == list(range(1, len(records) + 1))
