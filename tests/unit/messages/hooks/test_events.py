"""The event catalog and the inputs of the fired events (DEC-HOOK-1, DEC-HOOK-2)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentx.messages.hooks.events import (
    FIELDS,
    FIRED,
    HOOK_EVENTS,
    MATCHED_FIELD,
    Common,
    UnknownEvent,
    event_input,
    matched_value,
)

ROOT = Path(__file__).resolve().parents[4]
COMMON = Common(session_id="s", transcript_path="/t", cwd="/c", permission_mode="plan")


def test_catalog_is_the_pinned_sdks_union() -> None:
    """Every event of the TypeScript SDK's HOOK_EVENTS and the Python SDK's HookEvent."""
    dts = (
        ROOT / "tests/e2e/ts_sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.d.ts"
    ).read_text()
    listed = re.search(r"declare const HOOK_EVENTS: readonly \[(.*?)\];", dts)
    assert listed is not None
    ts_events = tuple(ast.literal_eval(f"[{listed.group(1)}]"))
    assert ts_events == HOOK_EVENTS
    from typing import get_args

    from claude_agent_sdk.types import HookEvent

    python_events = {arg for literal in get_args(HookEvent) for arg in get_args(literal)}
    assert python_events <= set(HOOK_EVENTS)
    assert set(HOOK_EVENTS) >= FIRED
    assert set(FIELDS) == FIRED
    assert set(MATCHED_FIELD) <= set(HOOK_EVENTS)


@pytest.mark.parametrize("event", sorted(FIRED))
def test_every_fired_event_carries_the_common_fields(event: str) -> None:
    fields = {name: f"v-{name}" for name in FIELDS[event]}
    body = event_input(event, COMMON, fields)
    assert body == {
        "session_id": "s",
        "transcript_path": "/t",
        "cwd": "/c",
        "permission_mode": "plan",
        "hook_event_name": event,
        **fields,
    }
    if event in MATCHED_FIELD:
        assert matched_value(event, body) == fields[MATCHED_FIELD[event]]
    else:
        assert matched_value(event, body) is None


@pytest.mark.parametrize("event", sorted(FIRED))
def test_a_missing_field_is_the_callers_defect(event: str) -> None:
    fields = {name: "v" for name in FIELDS[event][1:]}
    with pytest.raises(UnknownEvent, match="lacks"):
        event_input(event, COMMON, fields)


def test_an_event_agentx_does_not_fire() -> None:
    with pytest.raises(UnknownEvent, match="does not fire 'WorktreeCreate'"):
        event_input("WorktreeCreate", COMMON, {"name": "w"})
