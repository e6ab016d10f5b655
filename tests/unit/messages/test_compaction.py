"""The compaction core: trigger threshold, preserved segment, boundary data and
resume relinking (DEC-AUTH-2 ``context_window``, WIRE-005)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.compaction import (
    CompactBoundary,
    CompactionPlan,
    HistoryItem,
    PreservedSegment,
    RelinkError,
    plan,
    relink,
    should_auto_compact,
)


@pytest.mark.parametrize(
    ("estimate", "window", "expected"),
    [
        pytest.param(80, 100, False, id="exactly-80-percent"),
        pytest.param(81, 100, True, id="one-past-80-percent"),
        pytest.param(0, 100, False, id="empty"),
        pytest.param(160_000, 200_000, False, id="default-window-at-limit"),
        pytest.param(160_001, 200_000, True, id="default-window-one-past"),
        pytest.param(1, 1, True, id="tiny-window"),
    ],
)
def test_auto_compaction_threshold(estimate: int, window: int, expected: bool) -> None:
    assert should_auto_compact(estimate=estimate, window=window) is expected


def _prompt(ident: str) -> HistoryItem:
    return HistoryItem(id=ident, role="user")


def _reply(ident: str, *uses: str) -> HistoryItem:
    return HistoryItem(id=ident, role="assistant", tool_use_ids=uses)


def _results(ident: str, *answers: str) -> HistoryItem:
    return HistoryItem(id=ident, role="user", tool_result_ids=answers)


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        pytest.param([], None, id="empty-nothing-to-compact"),
        pytest.param(
            [_prompt("u1"), _reply("a1")],
            CompactionPlan(summarized=2, preserved=0),
            id="one-turn-summarized-whole",
        ),
        pytest.param(
            [_prompt("u1"), _reply("a1"), _prompt("u2"), _reply("a2")],
            CompactionPlan(summarized=2, preserved=2),
            id="last-turn-preserved",
        ),
        pytest.param(
            [_prompt("u1"), _reply("a1"), _prompt("u2")],
            CompactionPlan(summarized=2, preserved=1),
            id="pending-prompt-preserved",
        ),
        pytest.param(
            [
                _prompt("u1"),
                _reply("a1"),
                _prompt("u2"),
                _reply("a2", "t1"),
                _results("r1", "t1"),
                _reply("a3"),
            ],
            CompactionPlan(summarized=2, preserved=4),
            id="tool-loop-stays-with-its-prompt",
        ),
        pytest.param(
            [_prompt("u1"), _reply("a1", "t1"), _prompt("u2"), _results("r1", "t1")],
            CompactionPlan(summarized=4, preserved=0),
            id="never-split-use-from-result",
        ),
        pytest.param(
            [
                _prompt("u1"),
                _reply("a1", "t1"),
                _prompt("u2"),
                _results("r1", "t1"),
                _prompt("u3"),
            ],
            CompactionPlan(summarized=4, preserved=1),
            id="newest-safe-prompt-wins",
        ),
        pytest.param(
            [_results("r0", "t0"), _reply("a1"), _prompt("u2")],
            CompactionPlan(summarized=2, preserved=1),
            id="unknown-tool-result-ignored",
        ),
    ],
)
def test_plan(items: list[HistoryItem], expected: CompactionPlan | None) -> None:
    assert plan(items) == expected


def test_segment_names_head_anchor_tail() -> None:
    items = [_prompt("u1"), _reply("a1"), _prompt("u2"), _reply("a2")]
    chosen = plan(items)
    assert chosen is not None
    segment = chosen.segment(items, anchor_uuid="s")
    assert segment == PreservedSegment(head_uuid="u2", anchor_uuid="s", tail_uuid="a2")
    assert CompactionPlan(summarized=2, preserved=0).segment(items[:2], anchor_uuid="s") is None


@pytest.mark.parametrize(
    ("boundary", "metadata"),
    [
        pytest.param(
            CompactBoundary(trigger="manual", pre_tokens=12, preserved_segment=None),
            {"trigger": "manual", "pre_tokens": 12},
            id="manual-nothing-preserved",
        ),
        pytest.param(
            CompactBoundary(
                trigger="auto",
                pre_tokens=900,
                preserved_segment=PreservedSegment(head_uuid="h", anchor_uuid="a", tail_uuid="t"),
            ),
            {
                "trigger": "auto",
                "pre_tokens": 900,
                "preserved_segment": {"head_uuid": "h", "anchor_uuid": "a", "tail_uuid": "t"},
            },
            id="auto-with-segment",
        ),
    ],
)
def test_boundary_metadata(boundary: CompactBoundary, metadata: dict[str, Any]) -> None:
    assert boundary.metadata() == metadata


def _msg(ident: str | None, role: str = "user") -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "message", "role": role, "content": [{"type": "text"}]}
    if ident is not None:
        entry["uuid"] = ident
    return entry


def _boundary(summary: str, segment: dict[str, str] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"trigger": "manual", "pre_tokens": 1}
    if segment is not None:
        metadata["preserved_segment"] = segment
    return {
        "type": "compact_boundary",
        "uuid": "b",
        "compact_metadata": metadata,
        "summary": _msg(summary),
    }


def _seg(head: str, anchor: str, tail: str) -> dict[str, str]:
    return {"head_uuid": head, "anchor_uuid": anchor, "tail_uuid": tail}


@pytest.mark.parametrize(
    ("entries", "ids"),
    [
        pytest.param([_msg("u1"), _msg("a1", "assistant")], ["u1", "a1"], id="no-boundary"),
        pytest.param(
            [_msg("u1"), _msg("a1"), _boundary("s", None), _msg("u2")],
            ["s", "u2"],
            id="summary-replaces-everything",
        ),
        pytest.param(
            [
                _msg("u1"),
                _msg("a1"),
                _msg("u2"),
                _msg("a2"),
                _boundary("s", _seg("u2", "s", "a2")),
                _msg("u3"),
            ],
            ["s", "u2", "a2", "u3"],
            id="segment-spliced-after-anchor",
        ),
        pytest.param(
            [
                _msg("u1"),
                _msg("u2"),
                _msg("a2"),
                _msg("x"),
                _boundary("s", _seg("u2", "s", "a2")),
            ],
            ["s", "u2", "a2"],
            id="exactly-head-to-tail",
        ),
        pytest.param(
            [
                _msg("u1"),
                _msg("u2"),
                _boundary("s1", _seg("u2", "s1", "u2")),
                _msg("u3"),
                _boundary("s2", _seg("u3", "s2", "u3")),
                _msg("u4"),
            ],
            ["s2", "u3", "u4"],
            id="second-boundary-relinks-the-first",
        ),
        pytest.param(
            [
                _msg("u1"),
                _msg("u2"),
                _boundary("s1", _seg("u2", "s1", "u2")),
                _boundary("s2", _seg("s1", "s2", "u2")),
            ],
            ["s2", "s1", "u2"],
            id="previous-summary-may-be-preserved",
        ),
    ],
)
def test_relink(entries: list[dict[str, Any]], ids: list[str]) -> None:
    assert [entry["uuid"] for entry in relink(entries)] == ids


@pytest.mark.parametrize(
    "entries",
    [
        pytest.param([_msg("u1"), _boundary("s", _seg("zz", "s", "u1"))], id="head-missing"),
        pytest.param([_msg("u1"), _boundary("s", _seg("u1", "s", "zz"))], id="tail-missing"),
        pytest.param(
            [_msg("u1"), _msg("a1"), _boundary("s", _seg("a1", "s", "u1"))],
            id="tail-before-head",
        ),
        pytest.param([_msg("u1"), _boundary("s", _seg("u1", "other", "u1"))], id="wrong-anchor"),
        pytest.param(
            [{"type": "compact_boundary", "uuid": "b", "compact_metadata": {}}], id="no-summary"
        ),
        pytest.param(
            [{"type": "compact_boundary", "uuid": "b", "summary": _msg("s")}], id="no-metadata"
        ),
        pytest.param([{"type": "mystery"}], id="unknown-entry"),
    ],
)
def test_relink_refuses_a_broken_transcript(entries: list[dict[str, Any]]) -> None:
    with pytest.raises(RelinkError):
        relink(entries)


def test_relink_gives_legacy_entries_stable_ids() -> None:
    entries = [_msg(None), _msg(None)]
    first, second = relink(entries)
    assert first["uuid"] != second["uuid"]
    assert [e["uuid"] for e in relink(entries)] == [first["uuid"], second["uuid"]]


_kinds = st.sampled_from(["prompt", "reply", "tool"])


@given(st.lists(_kinds, max_size=30))
def test_plan_never_separates_a_tool_use_from_its_result(kinds: list[str]) -> None:
    items: list[HistoryItem] = []
    for n, kind in enumerate(kinds):
        if kind == "prompt":
            items.append(_prompt(f"u{n}"))
        elif kind == "reply":
            items.append(_reply(f"a{n}"))
        else:
            items += [_reply(f"a{n}", f"t{n}"), _results(f"r{n}", f"t{n}")]
    chosen = plan(items)
    if not items:
        assert chosen is None
        return
    assert chosen is not None
    assert chosen.summarized + chosen.preserved == len(items)
    summarized_uses = {u for item in items[: chosen.summarized] for u in item.tool_use_ids}
    preserved_results = {r for item in items[chosen.summarized :] for r in item.tool_result_ids}
    assert not summarized_uses & preserved_results
    if chosen.preserved:
        assert items[chosen.summarized].is_prompt
        assert chosen.summarized > 0
