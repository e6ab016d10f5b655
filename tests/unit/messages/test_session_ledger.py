"""The transcript's ledger entries (agentx.messages.session_ledger, DEC-STORE-1, WIRE-012)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.accounting import TokenUsage
from agentx.messages.compaction import relink
from agentx.messages.permission_rules import DecisionSource
from agentx.messages.session_ledger import (
    LedgerError,
    first_prompt,
    iso_utc,
    policy_decider,
    read_turn,
    stored_turns,
    total_cost,
    turn_entry,
)

USAGE = {
    "input_tokens": 10,
    "output_tokens": 5,
    "cache_creation_input_tokens": 1,
    "cache_read_input_tokens": 2,
}


def _result(cost: float | None = 0.25) -> dict[str, Any]:
    return {
        "type": "result",
        "uuid": "r-1",
        "subtype": "success",
        "duration_ms": 1500,
        "duration_api_ms": 1200,
        "num_turns": 2,
        "total_cost_usd": cost,
        "usage": dict(USAGE),
        "modelUsage": {
            "m": {
                "inputTokens": 10,
                "outputTokens": 5,
                "cacheCreationInputTokens": 1,
                "cacheReadInputTokens": 2,
                "costUSD": cost,
            }
        },
        "permission_denials": [{"tool_name": "Bash"}],
        "result": "secret words the ledger does not copy",
    }


def test_iso_utc_has_milliseconds_and_z() -> None:
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"
    assert iso_utc(1.2345) == "1970-01-01T00:00:01.234Z"


def test_a_turn_entry_reads_back() -> None:
    entry = turn_entry(_result(), started_at=100.0, ended_at=101.5)
    assert "result" not in entry  # the text lives in the messages only
    turn = read_turn(entry)
    assert (turn.started_at, turn.ended_at) == (iso_utc(100.0), iso_utc(101.5))
    assert (turn.duration_ms, turn.duration_api_ms, turn.num_turns) == (1500, 1200, 2)
    assert turn.usage == TokenUsage(**USAGE)
    assert turn.models[0].model == "m" and turn.models[0].cost_usd == 0.25
    assert turn.permission_denials == 1


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("duration_ms", -1),
        ("duration_ms", "1"),
        ("num_turns", True),
        ("started_at", 5),
        ("total_cost_usd", "0.1"),
        ("total_cost_usd", -0.5),
        ("usage", []),
        ("modelUsage", None),
        ("modelUsage", {"m": 3}),
    ],
)
def test_a_wrong_shape_is_a_ledger_error(member: str, value: Any) -> None:
    entry = turn_entry(_result(), started_at=1.0, ended_at=2.0)
    entry[member] = value
    with pytest.raises(LedgerError):
        read_turn(entry)


def test_unknown_cost_stays_unknown_in_the_total() -> None:
    known = read_turn(turn_entry(_result(0.5), started_at=1, ended_at=2))
    unknown = read_turn(turn_entry(_result(None), started_at=1, ended_at=2))
    assert total_cost([known, known]) == 1.0
    assert total_cost([known, unknown]) is None
    assert total_cost([]) == 0


def test_relink_skips_ledger_entries_and_stored_turns_reads_only_them() -> None:
    message = {"type": "message", "uuid": "a", "role": "user", "content": []}
    entries = [message, turn_entry(_result(), started_at=1, ended_at=2)]
    assert [e["uuid"] for e in relink(entries)] == ["a"]
    assert len(stored_turns(entries)) == 1


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("", None),
        ("   ", None),
        ("one two", "one two"),
        ("a b c d e f g h", "a b c d e f g h"),
        ("a b c d e f g h i", "a b c d e f g h ..."),
    ],
)
def test_first_prompt_opening_words(text: str, shown: str | None) -> None:
    entries = [
        {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "no"}]},
        {"type": "message", "role": "user", "content": [{"type": "text", "text": text}]},
    ]
    assert first_prompt(entries) == shown


def test_a_permission_entry_reads_back_and_an_unknown_decider_is_agentx() -> None:
    from agentx.messages.session_ledger import permission_entry, read_decision, stored_decisions

    entry = permission_entry(
        tool_name="Bash",
        tool_use_id="toolu_1",
        behavior="allow",
        decided_by="rule",
        reason="allowed by rule Bash(git status)",
    )
    decision = read_decision(entry)
    assert (decision.decided_by, decision.reason) == ("rule", "allowed by rule Bash(git status)")
    odd = permission_entry(
        tool_name="X", tool_use_id="t", behavior="deny", decided_by="martians", reason=""
    )
    assert odd["decided_by"] == "agentx"
    assert [d.tool_use_id for d in stored_decisions([entry, {"type": "message"}])] == ["toolu_1"]
    bad = {**entry, "behavior": 1}
    with pytest.raises(LedgerError):
        read_decision(bad)
    message = {"type": "message", "uuid": "a", "role": "user", "content": []}
    assert [e["uuid"] for e in relink([message, entry])] == ["a"]


@pytest.mark.parametrize(
    ("source", "decider"),
    [
        ("rule", "rule"),
        ("mode", "mode"),
        ("boundary", "mode"),
        ("sandbox", "mode"),
        ("grant", "mode"),
        ("tool", "mode"),
    ],
)
def test_policy_decider_reads_the_decisions_source(source: DecisionSource, decider: str) -> None:
    """DEC-STORE-1: the ledger's values stay ``rule`` and ``mode``, taken from
    the decision's source, never from its reason's text."""
    assert policy_decider(source) == decider
