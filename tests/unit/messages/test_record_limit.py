"""DEC-COMPAT-3: the stdout record limit core, at the limit and one past it."""

from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentx.messages import outbound
from agentx.messages.encode import encode_record
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.record_limit import (
    MAX_LINE_BYTES,
    MAX_TOOL_INPUT_BYTES,
    PROMPT_TRUNCATED,
    RESULT_TRUNCATED,
    cap_result,
    cap_user_echo,
    fits,
    line_bytes,
    longest_prefix,
    split_assistant,
    string_bytes,
    tool_input_too_large,
)

SID = "00000000-0000-4000-8000-000000000000"
UUID = "11111111-1111-4111-8111-111111111111"


def uuids() -> Callable[[], str]:
    counter = itertools.count(2)
    return lambda: f"{next(counter):08d}-1111-4111-8111-111111111111"


def assistant(*blocks: Mapping[str, Any]) -> FrozenDict:
    message = outbound.api_assistant_message(
        message_id="msg_0123456789abcdef01234567",
        model="m",
        content=tuple(freeze(b) for b in blocks),
        stop_reason="end_turn",
        usage={"input_tokens": 3, "output_tokens": 5},
    )
    return outbound.assistant(message, parent_tool_use_id=None, session_id=SID, uuid=UUID)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(ident: str, payload: str = "x") -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": "Write", "input": {"content": payload}}


def sized(build: Callable[[str], FrozenDict], target: int, unit: str = "a") -> FrozenDict:
    """``build(text)`` with ``text`` made of ``unit`` so the line takes ``target`` bytes."""
    base = line_bytes(build(""))
    step = string_bytes(unit)
    assert (target - base) % step == 0, "choose a unit that divides the gap"
    record = build(unit * ((target - base) // step))
    assert line_bytes(record) == target
    return record


def rebuilt_text(records: tuple[FrozenDict, ...]) -> str:
    return "".join(
        b["text"] for r in records for b in r["message"]["content"] if b["type"] == "text"
    )


# --- sizes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("", 0),
        ("a", 1),
        ("é", 2),
        ("\U0001f600", 4),
        ('"', 2),
        ("\\", 2),
        ("\n", 2),
        ("\x01", 6),
        ("\u2028", 6),  # the encoder escapes the separators (WIRE-013)
        ("/", 1),
    ],
)
def test_string_bytes_is_the_encoder_s_count(value: str, size: int) -> None:
    assert string_bytes(value) == size


@pytest.mark.parametrize(
    ("value", "room", "length"),
    [
        ("abc", 3, 3),
        ("abc", 2, 2),
        ("abc", 0, 0),
        ("abc", -1, 0),
        ("aé", 2, 1),  # a two-byte code point is never cut
        ("aé", 3, 2),
        ("\U0001f600\U0001f600", 7, 1),
        ("\U0001f600\U0001f600", 8, 2),
        ('a"', 2, 1),  # an escape is never cut
        ("a\u2028b", 6, 1),
        ("a\u2028b", 7, 2),
    ],
)
def test_longest_prefix(value: str, room: int, length: int) -> None:
    assert longest_prefix(value, room) == length


def test_fits_is_strictly_under_the_limit() -> None:
    assert MAX_LINE_BYTES == 1_048_576  # claude-agent-sdk _DEFAULT_MAX_BUFFER_SIZE
    at = sized(lambda t: assistant(text(t)), MAX_LINE_BYTES - 1)
    past = sized(lambda t: assistant(text(t)), MAX_LINE_BYTES)
    assert fits(at) and not fits(past)


def test_a_record_the_encoder_refuses_is_left_whole() -> None:
    record = assistant(text("\ud800" + "a" * MAX_LINE_BYTES))
    assert split_assistant(record, new_uuid=uuids()) == (record,)


# --- assistant ----------------------------------------------------------------


def test_an_assistant_record_at_the_limit_stays_whole() -> None:
    record = sized(lambda t: assistant(text(t)), MAX_LINE_BYTES - 1)
    assert split_assistant(record, new_uuid=uuids()) == (record,)


@pytest.mark.parametrize("unit", ["a", "é", "\U0001f600", '"', "\u2028"])
def test_one_past_the_limit_splits_into_records_of_one_message(unit: str) -> None:
    gap_unit = string_bytes(unit)
    base = line_bytes(assistant(text("")))
    target = MAX_LINE_BYTES + gap_unit - (MAX_LINE_BYTES - base) % gap_unit
    record = sized(lambda t: assistant(text(t)), target, unit)
    records = split_assistant(record, new_uuid=uuids())
    assert len(records) == 2
    assert all(line_bytes(r) < MAX_LINE_BYTES for r in records)
    assert rebuilt_text(records) == record["message"]["content"][0]["text"]
    _same_message(record, records)


def _same_message(original: FrozenDict, records: tuple[FrozenDict, ...]) -> None:
    envelope = {k: v for k, v in original["message"].items() if k != "content"}
    for r in records:
        assert {k: v for k, v in r["message"].items() if k != "content"} == envelope
        assert {k: v for k, v in r.items() if k not in ("message", "uuid")} == {
            k: v for k, v in original.items() if k not in ("message", "uuid")
        }
    assert records[0]["uuid"] == original["uuid"]
    assert len({r["uuid"] for r in records}) == len(records)


def test_a_1_2_mib_answer_with_tool_uses_keeps_every_block_in_order() -> None:
    body = "".join(f"line {i} ü\n" for i in range(120_000))  # about 1.3 MB encoded
    record = assistant(text(body), tool_use("toolu_1"), tool_use("toolu_2"))
    records = split_assistant(record, new_uuid=uuids())
    assert len(records) == 2
    assert all(fits(r) for r in records)
    assert rebuilt_text(records) == body
    blocks = [b for r in records for b in r["message"]["content"]]
    assert [b["type"] for b in blocks] == ["text", "text", "tool_use", "tool_use"]
    assert [b["id"] for b in blocks[2:]] == ["toolu_1", "toolu_2"]
    _same_message(record, records)


def test_blocks_that_fit_together_are_packed_and_one_that_does_not_moves_on() -> None:
    big = "a" * 400_000
    record = assistant(tool_use("toolu_1", big), tool_use("toolu_2", big), tool_use("toolu_3", big))
    records = split_assistant(record, new_uuid=uuids())
    assert [[b["id"] for b in r["message"]["content"]] for r in records] == [
        ["toolu_1", "toolu_2"],
        ["toolu_3"],
    ]
    assert all(fits(r) for r in records)


def test_a_long_text_fills_the_room_left_after_earlier_blocks() -> None:
    record = assistant(tool_use("toolu_1", "b" * 600_000), text("a" * 1_000_000))
    records = split_assistant(record, new_uuid=uuids())
    assert len(records) == 2
    assert all(fits(r) for r in records)
    assert [b["type"] for b in records[0]["message"]["content"]] == ["tool_use", "text"]
    assert rebuilt_text(records) == "a" * 1_000_000
    assert line_bytes(records[0]) > MAX_LINE_BYTES - 100  # no room wasted


def test_a_text_of_several_megabytes_becomes_several_records() -> None:
    body = "\u00e9" * 1_700_000  # 3.4 MB encoded
    records = split_assistant(assistant(text(body)), new_uuid=uuids())
    assert len(records) == 4
    assert all(fits(r) for r in records)
    assert rebuilt_text(records) == body


# --- result -------------------------------------------------------------------


def result(text_value: str, denials: tuple[Mapping[str, Any], ...] = ()) -> FrozenDict:
    return outbound.result(
        subtype="success",
        is_error=False,
        duration_ms=1,
        duration_api_ms=1,
        num_turns=1,
        result_text=text_value,
        stop_reason="end_turn",
        total_cost_usd=None,
        usage={"input_tokens": 1, "output_tokens": 1},
        model_usage={},
        permission_denials=tuple(freeze(d) for d in denials),
        errors=(),
        session_id=SID,
        uuid=UUID,
    )


def test_a_result_at_the_limit_is_untouched() -> None:
    record = sized(result, MAX_LINE_BYTES - 1)
    assert cap_result(record) is record


@pytest.mark.parametrize("extra", [1, 500_000])
def test_a_result_past_the_limit_is_cut_and_marked(extra: int) -> None:
    record = sized(result, MAX_LINE_BYTES - 1 + extra)
    whole = record["result"]
    capped = cap_result(record)
    marker = RESULT_TRUNCATED.format(total=len(whole))
    assert marker == (
        f"\n[result truncated: {len(whole)} characters in total; "
        "the assistant records carry the whole text]"
    )
    assert capped["result"].endswith(marker)
    assert whole.startswith(capped["result"][: -len(marker)])
    assert MAX_LINE_BYTES - 64 < line_bytes(capped) < MAX_LINE_BYTES
    assert {k: v for k, v in capped.items() if k != "result"} == {
        k: v for k, v in record.items() if k != "result"
    }


def test_denials_lose_their_input_and_then_their_tail() -> None:
    many = tuple(
        {"tool_name": "Write", "tool_use_id": f"toolu_{i}", "tool_input": {"content": "x" * 400}}
        for i in range(3_000)
    )
    capped = cap_result(result("short", many))
    assert fits(capped)
    assert capped["result"] == "short"
    assert [d["tool_input"] for d in capped["permission_denials"]] == [{}] * 3_000
    huge = tuple(
        {"tool_name": "Write", "tool_use_id": f"toolu_{i:06d}", "tool_input": {}}
        for i in range(40_000)
    )
    capped = cap_result(result("", huge))
    assert fits(capped)
    kept = capped["permission_denials"]
    assert 0 < len(kept) < len(huge)
    assert list(kept) == list(huge[: len(kept)])
    assert not fits(FrozenDict(capped, permission_denials=huge[: len(kept) + 1]))


# --- the replay echo ------------------------------------------------------------


def echo(*blocks: Mapping[str, Any]) -> FrozenDict:
    return outbound.user_echo(
        {"role": "user", "content": tuple(freeze(b) for b in blocks)},
        session_id=SID,
        uuid=UUID,
        is_replay=True,
    )


def test_a_replay_echo_at_the_limit_is_untouched() -> None:
    record = sized(lambda t: echo(text(t)), MAX_LINE_BYTES - 1)
    assert cap_user_echo(record) is record


def test_a_replay_echo_past_the_limit_keeps_what_fits_and_every_reference() -> None:
    ref = {"type": "attachment_ref", "attachment_id": "att_1", "kind": "file", "name": "a.txt"}
    first, second, third = "a" * 700_000, "b" * 700_000, "c" * 10
    record = echo(text(first), ref, text(second), text(third))
    capped = cap_user_echo(record)
    assert fits(capped)
    marker = PROMPT_TRUNCATED.format(total=1_400_010)
    blocks = capped["message"]["content"]
    assert [b["type"] for b in blocks] == ["text", "attachment_ref", "text"]
    assert blocks[0]["text"] == first and blocks[1] == ref
    assert blocks[2]["text"].endswith(marker)
    assert second.startswith(blocks[2]["text"][: -len(marker)])
    assert capped["isReplay"] is True and capped["uuid"] == UUID
    at = sized(lambda t: echo(text(t)), MAX_LINE_BYTES)
    assert line_bytes(cap_user_echo(at)) < MAX_LINE_BYTES


# --- tool input ------------------------------------------------------------------


def test_a_tool_input_at_the_limit_is_shown_and_one_past_it_is_not() -> None:
    frame = line_bytes({"content": ""}) - 1
    at = {"content": "a" * (MAX_TOOL_INPUT_BYTES - frame)}
    assert line_bytes(at) - 1 == MAX_TOOL_INPUT_BYTES
    assert not tool_input_too_large(at)
    assert tool_input_too_large({"content": "a" * (MAX_TOOL_INPUT_BYTES - frame + 1)})
    assert not tool_input_too_large({"content": "\ud800" * MAX_TOOL_INPUT_BYTES})
    # A block with the largest input shown still fits one assistant record.
    block = tool_use("toolu_1", at["content"])
    assert fits(assistant(block))


# --- memory: a long text is cut without copies of the whole --------------------


def _peak_of(work: Callable[[], object]) -> int:
    """Peak traced allocation of ``work``, in bytes."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        kept = work()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del kept
    return peak - base


def test_splitting_a_long_text_copies_none_of_it() -> None:
    """The records keep each piece as its bounds and cut it when read
    (SplitRecord), and measuring never encodes or copies the remainder: a
    32 MB text costs a few windows to split (it cost ten copies, then one)."""
    body = "lorem ipsum dolor sit amet " * 1_200_000  # 32 MB
    record = assistant(text(body))
    peak = _peak_of(lambda: split_assistant(record, new_uuid=uuids()))
    assert peak < 12 * MAX_LINE_BYTES  # a few windows, no copy of the text
    parts = split_assistant(record, new_uuid=uuids())
    assert "".join(b["text"] for r in parts for b in r["message"]["content"]) == body


def test_a_split_record_reads_and_encodes_as_the_record_it_stands_for() -> None:
    """What a reader or the encoder sees of a split record is a plain record
    whose text is its piece; each read cuts the piece anew."""
    body = "\u00e9\n" * 700_000  # about 2.8 MB encoded
    records = split_assistant(assistant(text(body), tool_use("toolu_1")), new_uuid=uuids())
    assert len(records) == 3
    for r in records:
        plain = FrozenDict(r)
        assert r == plain and plain == r
        assert encode_record(r) == encode_record(plain)
        assert line_bytes(r) < MAX_LINE_BYTES
        assert r["message"] == r["message"] and r["message"] is not r["message"]
        assert set(r) == set(plain) and len(r) == len(plain) and r["uuid"] == plain["uuid"]
    assert rebuilt_text(records) == body
    assert line_bytes(records[0]) > MAX_LINE_BYTES - 100  # no room wasted


def test_capping_a_long_result_never_encodes_it_whole() -> None:
    body = "x" * (32 * MAX_LINE_BYTES)
    record = FrozenDict(type="result", subtype="success", result=body)
    peak = _peak_of(lambda: cap_result(record))
    assert peak < 12 * MAX_LINE_BYTES  # windows of the text, never all of it
    assert line_bytes(cap_result(record)) < MAX_LINE_BYTES


def test_a_long_text_the_encoder_refuses_is_left_whole() -> None:
    record = FrozenDict(type="result", subtype="success", result="\ud800" + "a" * MAX_LINE_BYTES)
    assert cap_result(record) is record
