"""The stream-aware output guard (DEC-AUTH-6): table tests and properties."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentx.messages.encode import encode_record
from agentx.messages.frozen import freeze
from agentx.messages.guard import CredentialValidator, FailureKind
from agentx.messages.stream_guard import (
    MAX_CHANNELS,
    MAX_DELTA_DEPTH,
    MAX_OPEN_STREAMS,
    StreamGuard,
    stream_guard,
    unescape,
    utf16_units,
)

KEY = "SENTINEL_KEY_123"
Record = dict[str, Any]
CREDENTIAL = FailureKind.CREDENTIAL
LIMIT = FailureKind.STREAM_LIMIT


def event(payload: dict[str, Any], parent: str | None = None) -> Record:
    return {
        "type": "stream_event",
        "event": payload,
        "parent_tool_use_id": parent,
        "uuid": "u",
        "session_id": "s",
    }


def delta(index: int, kind: str, member: str, value: str, parent: str | None = None) -> Record:
    body = {"type": kind, member: value}
    return event({"type": "content_block_delta", "index": index, "delta": body}, parent)


def text(value: str, index: int = 0, parent: str | None = None) -> Record:
    return delta(index, "text_delta", "text", value, parent)


def thinking(value: str, index: int = 0) -> Record:
    return delta(index, "thinking_delta", "thinking", value)


def signature(value: str, index: int = 0) -> Record:
    return delta(index, "signature_delta", "signature", value)


def partial_json(value: str, index: int = 0) -> Record:
    return delta(index, "input_json_delta", "partial_json", value)


def start(index: int = 0, **block: Any) -> Record:
    block = block or {"type": "text", "text": ""}
    return event({"type": "content_block_start", "index": index, "content_block": block})


def stop(index: int = 0) -> Record:
    return event({"type": "content_block_stop", "index": index})


def message(kind: str) -> Record:
    return event({"type": kind})


def chunk(
    delta: dict[str, Any], index: int = 0, finish: str | None = None, chunk_id: str = "c"
) -> Record:
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    return event({"id": chunk_id, "object": "chat.completion.chunk", "choices": [choice]})


def responses(kind: str, item: str = "msg_1", seq: int = 0, **members: Any) -> Record:
    """A Responses API stream event (a shape the guard reads shape-agnostically)."""
    return event(
        {"type": kind, "item_id": item, "output_index": 0, "sequence_number": seq, **members}
    )


def output_text(value: str, item: str = "msg_1", seq: int = 0) -> Record:
    return responses("response.output_text.delta", item, seq, content_index=0, delta=value)


def content(value: str, index: int = 0) -> Record:
    return chunk({"content": value}, index)


def reasoning(value: str) -> Record:
    return chunk({"reasoning_content": value})


def arguments(value: str, call: int = 0) -> Record:
    part = {"index": call, "function": {"arguments": value}}
    return chunk({"tool_calls": [part]})


def verdicts(records: Sequence[Record], literals: Sequence[str] = (KEY,)) -> list[str | None]:
    guard = StreamGuard(literals)
    return [guard.check(freeze(r)) for r in records]


def test_each_delta_alone_passes_the_per_record_check() -> None:
    """The leak DEC-AUTH-6 closes: WIRE-013 sees nothing wrong in either frame."""
    validator = CredentialValidator([KEY])
    assert validator.check(encode_record(text("SENTINEL_")))
    assert validator.check(encode_record(text("KEY_123")))
    assert verdicts([text("SENTINEL_"), text("KEY_123")]) == [None, CREDENTIAL]


SPLIT = '{"command": "echo SENTINEL_\\u004bEY_123"}'


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        pytest.param([text("SENTINEL_"), text("KEY_123")], [None, CREDENTIAL], id="text-2-way"),
        pytest.param(
            [text("say SENT"), text("INEL_K"), text("EY_123 now")],
            [None, None, CREDENTIAL],
            id="text-3-way",
        ),
        pytest.param(
            [text("SENTINEL_KEY_12"), text("4"), text("3")], [None, None, None], id="near-miss"
        ),
        pytest.param(
            [thinking("SENTINEL_"), thinking("KEY_123")], [None, CREDENTIAL], id="thinking"
        ),
        pytest.param([signature("SENTINEL"), signature("_KEY_123")], [None, CREDENTIAL], id="sig"),
        pytest.param(
            [partial_json('{"q": "SENTINEL_'), partial_json('KEY_123"}')],
            [None, CREDENTIAL],
            id="tool-input-json",
        ),
        pytest.param(
            [partial_json(SPLIT[:29]), partial_json(SPLIT[29:])],
            [None, CREDENTIAL],
            id="tool-input-split-inside-an-escape",
        ),
        pytest.param(
            [partial_json(SPLIT[:28]), partial_json(SPLIT[28:])],
            [None, CREDENTIAL],
            id="tool-input-split-after-the-backslash",
        ),
        pytest.param(
            [partial_json('"\\u0053\\u0045NTINEL_'), partial_json('KEY\\u005f123"')],
            [None, CREDENTIAL],
            id="tool-input-escaped-spelling",
        ),
        pytest.param(
            [partial_json('"SENTINEL_\\\\u004bEY_123"')],
            [None],
            id="escaped-backslash-is-not-an-escape",
        ),
        pytest.param(
            [start(0, type="text", text="SENTINEL_"), text("KEY_123")],
            [None, CREDENTIAL],
            id="seeded-by-content-block-start",
        ),
        pytest.param(
            [text("SENTINEL_"), signature("zz"), text("KEY_123")],
            [None, None, CREDENTIAL],
            id="interleaved-delta-types-join-per-member",
        ),
        pytest.param(
            [thinking("SENTINEL_", index=0), thinking("KEY_123", index=1)],
            [None, None],
            id="a-new-block-index-starts-fresh",
        ),
        pytest.param(
            [partial_json("SENTINEL_"), stop(0), start(0), partial_json("KEY_123")],
            [None, None, None, None],
            id="content-block-stop-ends-the-block",
        ),
        pytest.param(
            [thinking("SENTINEL_"), start(0), thinking("KEY_123")],
            [None, None, None],
            id="content-block-start-restarts-the-block",
        ),
        pytest.param(
            [text("SENTINEL_", index=0), text("KEY_123", index=1)],
            [None, CREDENTIAL],
            id="text-blocks-of-one-message-join",
        ),
        pytest.param(
            [text("SENTINEL_"), start(0), text("KEY_123")],
            [None, None, CREDENTIAL],
            id="a-restarted-text-block-still-joins-the-message-text",
        ),
        pytest.param(
            [text("SENTINEL_"), stop(0), start(1), thinking("KEY_123", 1), text("KEY_123", 2)],
            [None, None, None, None, CREDENTIAL],
            id="text-blocks-join-across-other-blocks",
        ),
        pytest.param(
            [text("SENTINEL_", parent="a"), text("KEY_123", index=1, parent="b")],
            [None, None],
            id="text-blocks-of-different-parents",
        ),
        pytest.param(
            [text("SENTINEL_"), message("message_stop"), text("KEY_123")],
            [None, None, None],
            id="message-stop-ends-every-block",
        ),
        pytest.param(
            [text("SENTINEL_"), message("message_start"), text("KEY_123")],
            [None, None, None],
            id="message-start-ends-every-block",
        ),
        pytest.param(
            [text("SENTINEL_"), message("message_delta"), message("ping"), text("KEY_123")],
            [None, None, None, CREDENTIAL],
            id="other-events-keep-the-block",
        ),
        pytest.param(
            [
                text("SENTINEL_", parent="a"),
                text("KEY_123", parent="b"),
                text("KEY_123", parent="a"),
            ],
            [None, None, CREDENTIAL],
            id="per-parent-tool-use-id",
        ),
        pytest.param([content("SENTINEL_"), content("KEY_123")], [None, CREDENTIAL], id="openai"),
        pytest.param(
            [reasoning("SENTINEL_"), reasoning("KEY_123")],
            [None, CREDENTIAL],
            id="openai-reasoning",
        ),
        pytest.param(
            [chunk({"refusal": "SENTINEL_"}), chunk({"refusal": "KEY_123"})],
            [None, CREDENTIAL],
            id="openai-refusal",
        ),
        pytest.param(
            [arguments('{"a": "SENTINEL_', 0), arguments('{"b": "x', 1), arguments('KEY_123"}', 0)],
            [None, None, CREDENTIAL],
            id="openai-tool-arguments-per-call-index",
        ),
        pytest.param(
            [arguments('{"a": "SENTINEL_', 0), arguments('KEY_123"}', 1)],
            [None, None],
            id="openai-tool-calls-do-not-join",
        ),
        pytest.param(
            [content("SENTINEL_", 0), content("KEY_123", 1)], [None, None], id="openai-choices"
        ),
        pytest.param(
            [content("SENTINEL_"), chunk({}, finish="stop"), content("KEY_123")],
            [None, None, CREDENTIAL],
            id="openai-finish-reason-does-not-end-the-choice",
        ),
        pytest.param(
            [chunk({"content": "SENTINEL_"}, finish="stop"), content("KEY_123")],
            [None, CREDENTIAL],
            id="openai-split-across-the-finish-chunk",
        ),
        pytest.param(
            [content("SENTINEL_"), chunk({"content": "KEY_123"}, chunk_id="c2")],
            [None, None],
            id="openai-a-new-completion-ends-the-choice",
        ),
        pytest.param(
            [output_text("SENTINEL_", seq=1), output_text("KEY_123", seq=2)],
            [None, CREDENTIAL],
            id="responses-output-text",
        ),
        pytest.param(
            [
                output_text("SENTINEL_", "msg_1", 1),
                output_text("zz", "msg_2", 2),
                output_text("KEY_123", "msg_1", 3),
            ],
            [None, None, CREDENTIAL],
            id="responses-items-interleaved-join-per-item",
        ),
        pytest.param(
            [
                responses("response.function_call_arguments.delta", "fc_1", delta='{"k": "SENTI'),
                responses("response.function_call_arguments.delta", "fc_1", delta='NEL_KEY_123"'),
            ],
            [None, CREDENTIAL],
            id="responses-function-arguments",
        ),
        pytest.param(
            [
                output_text("SENTINEL_"),
                responses("response.output_text.done", content_index=0, text="SENTINEL_"),
                output_text("KEY_123"),
            ],
            [None, None, CREDENTIAL],
            id="responses-done-ends-the-channel-not-the-path",
        ),
        pytest.param(
            [output_text("SENTINEL_"), event({"type": "response.completed"}), output_text("KEY_1")],
            [None, None, None],
            id="responses-completed-ends-every-stream",
        ),
        pytest.param(
            [
                event({"candidates": [{"content": {"parts": [{"text": "SENTINEL_"}]}}]}),
                event({"candidates": [{"content": {"parts": [{"text": "KEY_123"}]}}]}),
            ],
            [None, CREDENTIAL],
            id="untyped-shape-nested-text",
        ),
        pytest.param(
            [
                event({"type": "x.delta", "v": "SENTINEL_"}),
                event({"type": "y.delta", "v": "KEY_123"}),
            ],
            [None, CREDENTIAL],
            id="future-shape-joins-per-member-path",
        ),
        pytest.param(
            [
                event({"type": "x.delta", "v": "SENTINEL_"}),
                event({"type": "x.delta", "w": "KEY_123"}),
            ],
            [None, None],
            id="future-shape-other-member-paths-do-not-join",
        ),
        pytest.param(
            [content("SENTINEL_"), chunk({}, index=1, finish="stop"), content("KEY_123")],
            [None, None, CREDENTIAL],
            id="openai-finish-of-another-choice",
        ),
        pytest.param(
            [text("SENTINEL_"), text("KEY_123"), {"type": "result", "result": "fine"}],
            [None, CREDENTIAL, CREDENTIAL],
            id="a-refusal-latches",
        ),
        pytest.param(
            [text("SENTINEL_"), {"type": "assistant", "message": {"content": "KEY_123"}}],
            [None, None],
            id="other-records-are-not-deltas",
        ),
    ],
)
def test_joined_deltas(records: list[Record], expected: list[str | None]) -> None:
    assert verdicts(records) == expected


@pytest.mark.parametrize(
    ("literal", "pieces"),
    [
        pytest.param('pa"ss', ["x pa\\", '"ss'], id="encoder-escaped-quote"),
        pytest.param("pässwörd", ["p\\u00e4ss", "w\\u00f6rd"], id="ascii-escaped"),
        pytest.param("pässwörd", ["p\\u00", "e4ssw\\u00f6rd"], id="ascii-escaped-split-in-escape"),
        pytest.param("k😀y", ["k\\ud83d", "\\ude00y"], id="surrogate-pair-escapes"),
        pytest.param("k😀y", ["k\\ud83d\\ude", "00y"], id="surrogate-pair-split-in-escape"),
        pytest.param("k😀y", ["k\\ud83d", "\\ude00", "y"], id="surrogate-pair-3-way"),
        pytest.param("k😀y", ["k😀", "y"], id="astral-raw"),
        pytest.param("tab\there", ["tab\\", "there"], id="escaped-control"),
        pytest.param("Z", ["abc", "xyZ"], id="one-character-literal"),
    ],
)
def test_json_escaped_spellings(literal: str, pieces: list[str]) -> None:
    """Raw or JSON-escaped, wherever the split falls (DEC-AUTH-6)."""
    for build in (text, partial_json, content, arguments):
        result = verdicts([build(p) for p in pieces], [literal])
        assert result == [None] * (len(pieces) - 1) + [CREDENTIAL], build.__name__


def test_no_literal_no_guard() -> None:
    """With an empty union the writer does no stream work at all."""
    assert stream_guard([]) is None
    assert stream_guard(["", ""]) is None
    guard = stream_guard(["", KEY])
    assert guard is not None and KEY not in repr(guard)


def test_open_streams_at_the_limit_and_one_past() -> None:
    guard = StreamGuard([KEY])
    calls = [{"index": i, "function": {"arguments": "{"}} for i in range(MAX_OPEN_STREAMS)]
    assert guard.check(chunk({"tool_calls": calls})) is None
    assert guard.open_streams == MAX_OPEN_STREAMS
    assert guard.check(chunk({"tool_calls": calls})) is None  # the same streams again
    assert guard.check(arguments("{", MAX_OPEN_STREAMS)) is LIMIT
    assert guard.check(text("harmless")) is LIMIT  # latched


def test_ended_blocks_free_their_streams() -> None:
    """A thinking block holds two streams (thinking, signature) until it ends."""
    guard = StreamGuard([KEY], max_streams=2)
    for _ in range(3):
        assert guard.check(start(0, type="thinking", thinking="", signature="")) is None
        assert guard.check(thinking("abc")) is None
        assert guard.check(signature("abc")) is None
        assert guard.open_streams == 2
        assert guard.check(stop(0)) is None
        assert guard.open_streams == 0
    assert guard.check(thinking("abc", 0)) is None
    assert guard.check(signature("abc", 0)) is None
    assert guard.check(thinking("abc", 1)) is LIMIT


def test_stop_and_finish_free_the_streams() -> None:
    """A text delta opens its block's stream and the message's text stream."""
    guard = StreamGuard([KEY], max_streams=2)
    for _ in range(5):
        assert guard.check(start(0, type="text", text="")) is None
        assert guard.check(text("SENTINEL_")) is None
        assert guard.open_streams == 2
        assert guard.check(stop(0)) is None
        assert guard.open_streams == 1
        assert guard.check(message("message_stop")) is None
        assert guard.open_streams == 0
        assert guard.check(content("SENTINEL_")) is None
        assert guard.check(reasoning("SENTINEL_")) is None
        assert guard.open_streams == 2
        assert guard.check(chunk({}, finish="stop")) is None
        assert guard.open_streams == 2  # a later chunk of the choice still joins
        assert guard.check(chunk({}, chunk_id="next")) is None
        assert guard.open_streams == 0
        assert guard.check(chunk({}, chunk_id="c")) is None


def test_unknown_shape_channels_at_the_limit_and_one_past() -> None:
    """Channels are followed per item up to :data:`MAX_CHANNELS`; past it the least
    recently used is dropped, never a per-path stream and never the session."""
    guard = StreamGuard([KEY])
    assert guard.check(output_text("SENTINEL_", "item0")) is None
    for n in range(1, MAX_CHANNELS):
        assert guard.check(output_text("zz", f"item{n}")) is None
    # item0 is the least recently used of MAX_CHANNELS: still followed.
    assert guard.check(output_text("zz", "item1")) is None
    held = guard.open_streams
    assert guard.check(output_text("zz", f"item{MAX_CHANNELS}")) is None
    assert guard.open_streams == held  # one channel dropped for the new one
    # The per-path stream still joins across every item.
    assert guard.check(output_text("KEY_123", "item0")) is None  # "zz" came between
    assert guard.check(output_text("SENTINEL_", "item5")) is None
    assert guard.check(output_text("KEY_123", "item6")) is CREDENTIAL


def nested(depth: int) -> dict[str, Any]:
    value: Any = "x"
    for _ in range(depth - 1):
        value = {"m": value}
    return {"type": "custom_delta", "m": value}


def test_delta_depth_at_the_limit_and_one_past() -> None:
    deepest = event({"type": "content_block_delta", "index": 0, "delta": nested(MAX_DELTA_DEPTH)})
    assert StreamGuard([KEY]).check(deepest) is None
    deeper = event(
        {"type": "content_block_delta", "index": 0, "delta": nested(MAX_DELTA_DEPTH + 1)}
    )
    assert StreamGuard([KEY]).check(deeper) is LIMIT


def test_tails_stay_bounded() -> None:
    """Per stream at most the longest needle less one (plus a pending escape)."""
    guard = StreamGuard([KEY])
    for i in range(2000):
        assert guard.check(text(f"chunk {i} with an escape \\u00")) is None
    assert guard.open_streams == 2  # the block's and the message's text
    assert guard.held_chars <= 2 * (2 * (len(KEY) - 1) + len("\\u00"))


def test_custom_delta_types_and_odd_indexes() -> None:
    """Every delta type, and indexes read as the provider clients read them."""
    custom = event(
        {
            "type": "content_block_delta",
            "index": "0",
            "delta": {"type": "citations_delta", "citation": {"cited_text": "SENTINEL_"}},
        }
    )
    more = event(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "citations_delta", "citation": {"cited_text": "KEY_123"}},
        }
    )
    assert verdicts([custom, more]) == [None, CREDENTIAL]
    weird = event(
        {"type": "content_block_delta", "index": {"x": 1}, "delta": {"text": "SENTINEL_"}}
    )
    assert verdicts([weird, weird, text("KEY_123")]) == [None, None, None]


def test_records_the_guard_cannot_read_pass_to_the_per_record_check() -> None:
    odd: list[Record] = [
        {"type": "stream_event", "event": "not an object"},
        event({"type": "content_block_delta", "delta": "SENTINEL_KEY_123"}),
        event({"choices": ["x", {"index": 0, "delta": None}]}),
        event({"type": "error", "error": {"message": "SENTINEL_"}}),
    ]
    assert verdicts([*odd, text("KEY_123")]) == [None] * 5


# --- properties -------------------------------------------------------------

SHAPES: tuple[Callable[[str], Record], ...] = (text, thinking, partial_json, content, arguments)


def splits(value: str) -> st.SearchStrategy[list[str]]:
    """Every way of cutting ``value`` into consecutive non-empty pieces."""
    cuts = st.sets(st.integers(1, max(len(value) - 1, 1)), max_size=len(value))
    return cuts.map(
        lambda c: [
            value[a:b] for a, b in zip([0, *sorted(c)], [*sorted(c), len(value)], strict=True)
        ]
    )


@given(
    literal=st.text(min_size=1, max_size=24),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
    shape=st.sampled_from(SHAPES),
    data=st.data(),
)
def test_any_split_of_a_literal_is_refused(
    literal: str, before: str, after: str, shape: Callable[[str], Record], data: st.DataObject
) -> None:
    """For any credential and any split of a text holding it, some delta is
    refused and no written prefix of the joined deltas holds the literal."""
    whole = before + literal + after
    pieces = [p for p in data.draw(splits(whole)) if p]
    guard = StreamGuard([literal])
    written = ""
    for piece in pieces:
        if guard.check(shape(piece)) is not None:
            break
        written += piece
        assert literal not in written
    else:
        pytest.fail("no delta was refused")


@given(
    literal=st.text(min_size=1, max_size=24),
    spelled=st.sampled_from(["encoder", "ascii"]),
    before=st.text(alphabet='ab \\"u0', max_size=8),
    shape=st.sampled_from(SHAPES),
    data=st.data(),
)
def test_any_split_of_an_escaped_spelling_is_refused(
    literal: str, spelled: str, before: str, shape: Callable[[str], Record], data: st.DataObject
) -> None:
    """The JSON-escaped spelling, split anywhere (inside escapes included),
    after any text (even one ending in a backslash that swallows its first
    escape: the spelling itself is searched too)."""
    escaped = json.dumps(literal, ensure_ascii=spelled == "ascii")[1:-1]
    pieces = [p for p in data.draw(splits(before + escaped)) if p]
    guard = StreamGuard([literal])
    assert any(guard.check(shape(piece)) is not None for piece in pieces)


@given(
    literal=st.text(min_size=1, max_size=24),
    whole=st.text(alphabet=st.characters(exclude_characters="\\"), max_size=60),
    shape=st.sampled_from(SHAPES),
    data=st.data(),
)
def test_text_without_a_literal_is_never_refused(
    literal: str, whole: str, shape: Callable[[str], Record], data: st.DataObject
) -> None:
    assume(literal not in whole)
    pieces = [p for p in data.draw(splits(whole)) if p]
    guard = StreamGuard([literal])
    assert [guard.check(shape(piece)) for piece in pieces] == [None] * len(pieces)


@given(
    literal=st.text(alphabet="GHIJKLMNOP", min_size=1, max_size=8),
    whole=st.text(alphabet='GHab\\u0123456789fF"/nt', max_size=60),
    data=st.data(),
)
def test_escapes_without_a_literal_are_never_refused(
    literal: str, whole: str, data: st.DataObject
) -> None:
    """Text with escapes is refused only when a literal is spelled in it."""
    assume(literal not in whole and literal not in unescape(whole)[0])
    pieces = [p for p in data.draw(splits(whole)) if p]
    guard = StreamGuard([literal])
    assert [guard.check(partial_json(piece)) for piece in pieces] == [None] * len(pieces)


@given(value=st.text(), ascii_only=st.booleans())
def test_unescape_agrees_with_the_json_decoder(value: str, ascii_only: bool) -> None:
    body = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
    assert unescape(body) == (utf16_units(value) if ascii_only else value, "")
    for cut in range(len(body) + 1):
        head, pending = unescape(body[:cut])
        rest, none = unescape(pending + body[cut:])
        assert none == ""
        assert utf16_units(head + rest) == utf16_units(unescape(body)[0])


@given(
    literal=st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1),
    data=st.data(),
)
def test_any_mixed_spelling_split_anywhere_is_refused(literal: str, data: st.DataObject) -> None:
    """Each character raw or ``\\uXXXX``-escaped, as a model may spell it in
    tool input JSON: only the decoded view (2) can see these."""
    chars = [
        json.dumps(ch)[1:-1]
        if ch in '"\\'
        else ch
        if data.draw(st.booleans())
        else f"\\u{ord(ch):04x}"
        for ch in literal
    ]
    spelled = "".join(chars)
    pieces = [p for p in data.draw(splits(spelled)) if p]
    guard = StreamGuard([literal])
    assert any(guard.check(partial_json(piece)) is not None for piece in pieces)
