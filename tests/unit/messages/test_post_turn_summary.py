"""``system/post_turn_summary`` built deterministically from the turn (WIRE-004)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agentx.messages.post_turn_summary import (
    INTERRUPTED,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    TurnFacts,
    build,
    build_blocked,
)
from agentx.messages.schema import OUTBOUND
from agentx.turns.results import INTERRUPTED as ENGINE_INTERRUPTED

BASE = TurnFacts(
    prompt="Fix the failing test\nin tests/unit",
    result_uuid="result-1",
    subtype="success",
    result_text="All green now.\nDetails follow.",
    errors=(),
    last_assistant_uuid="assistant-1",
    last_tool_summary="Ran 1 tool use: Bash ok",
)


def summary(facts: TurnFacts) -> Any:
    return build(facts, session_id="s", new_uuid=lambda: "u")


def test_success_summary_members() -> None:
    assert summary(BASE) == {
        "type": "system",
        "subtype": "post_turn_summary",
        "summarizes_uuid": "assistant-1",
        "status_category": "completed",
        "status_detail": "All green now.",
        "is_noteworthy": False,
        "title": "Fix the failing test",
        "description": "Fix the failing test in tests/unit",
        "recent_action": "Ran 1 tool use: Bash ok",
        "needs_action": "",
        "artifact_urls": (),
        "uuid": "u",
        "session_id": "s",
    }


@pytest.mark.parametrize(
    ("changes", "category", "noteworthy", "detail", "needs"),
    [
        pytest.param({}, "completed", False, "All green now.", "", id="success"),
        pytest.param(
            {"subtype": "error_during_execution", "errors": (INTERRUPTED,)},
            "waiting",
            True,
            INTERRUPTED,
            "",
            id="interrupted",
        ),
        pytest.param(
            {"subtype": "error_during_execution", "errors": ("server_error: boom",)},
            "failed",
            True,
            "server_error: boom",
            "",
            id="provider-error",
        ),
        pytest.param(
            {"subtype": "error_max_turns", "errors": ("Reached maximum number of turns (2)",)},
            "blocked",
            True,
            "Reached maximum number of turns (2)",
            "Raise the limit or start a new turn",
            id="max-turns",
        ),
        pytest.param(
            {"subtype": "error_max_budget_usd", "errors": ("Reached maximum budget ($1)",)},
            "blocked",
            True,
            "Reached maximum budget ($1)",
            "Raise the limit or start a new turn",
            id="max-budget",
        ),
    ],
)
def test_status_category_from_the_result(
    changes: dict[str, Any], category: str, noteworthy: bool, detail: str, needs: str
) -> None:
    record = summary(replace(BASE, **changes))
    assert record["status_category"] == category
    assert record["is_noteworthy"] is noteworthy
    assert record["status_detail"] == detail
    assert record["needs_action"] == needs


def test_interrupt_text_matches_the_engine() -> None:
    assert INTERRUPTED == ENGINE_INTERRUPTED


@pytest.mark.parametrize(
    ("changes", "member", "value"),
    [
        pytest.param(
            {"last_assistant_uuid": None}, "summarizes_uuid", "result-1", id="no-assistant"
        ),
        pytest.param({"last_tool_summary": None}, "recent_action", "", id="no-tool-ran"),
        pytest.param({"prompt": "\n\n  hi  \n"}, "title", "hi", id="title-skips-blank-lines"),
        pytest.param({"prompt": ""}, "title", "", id="empty-prompt"),
        pytest.param(
            {"prompt": "x" * MAX_TITLE_CHARS}, "title", "x" * MAX_TITLE_CHARS, id="title-at-limit"
        ),
        pytest.param(
            {"prompt": "x" * (MAX_TITLE_CHARS + 1)},
            "title",
            "x" * (MAX_TITLE_CHARS - 1) + "…",
            id="title-one-past-limit",
        ),
        pytest.param(
            {"prompt": "y" * MAX_TEXT_CHARS},
            "description",
            "y" * MAX_TEXT_CHARS,
            id="description-at-limit",
        ),
        pytest.param(
            {"prompt": "y" * (MAX_TEXT_CHARS + 1)},
            "description",
            "y" * (MAX_TEXT_CHARS - 1) + "…",
            id="description-one-past-limit",
        ),
    ],
)
def test_members_derived_from_the_turn(changes: dict[str, Any], member: str, value: str) -> None:
    assert summary(replace(BASE, **changes))[member] == value


@given(
    prompt=st.text(max_size=500),
    text=st.text(max_size=500),
    subtype=st.sampled_from(["success", "error_during_execution", "error_max_turns"]),
    errors=st.lists(st.text(max_size=400), max_size=3),
)
def test_any_turn_gives_a_schema_valid_deterministic_summary(
    prompt: str, text: str, subtype: Any, errors: list[str]
) -> None:
    from jsonschema import Draft202012Validator

    facts = replace(BASE, prompt=prompt, result_text=text, subtype=subtype, errors=tuple(errors))
    record = summary(facts)
    assert record == summary(facts)  # no clock, no model call: the same facts, the same record
    Draft202012Validator(OUTBOUND["post_turn_summary"]).validate(
        {**record, "artifact_urls": list(record["artifact_urls"])}
    )
    assert len(record["title"]) <= MAX_TITLE_CHARS
    assert len(record["status_detail"]) <= MAX_TEXT_CHARS


@pytest.mark.parametrize(
    ("action", "needs"),
    [
        pytest.param("Bash: make", "Answer the permission prompt: Bash: make", id="short"),
        pytest.param(
            "z" * MAX_TEXT_CHARS,
            ("Answer the permission prompt: " + "z" * MAX_TEXT_CHARS)[: MAX_TEXT_CHARS - 1] + "…",
            id="bounded",
        ),
    ],
)
def test_blocked_summary_names_the_pending_prompt(action: str, needs: str) -> None:
    record = build_blocked(
        prompt="Deploy it",
        summarizes_uuid="assistant-2",
        last_tool_summary=None,
        tool_name="Bash",
        pending_action=action,
        session_id="s",
        new_uuid=lambda: "u",
    )
    assert record["status_category"] == "blocked"
    assert record["needs_action"] == needs
    assert (record["summarizes_uuid"], record["title"]) == ("assistant-2", "Deploy it")
    assert record["status_detail"] == "Waiting for permission to use Bash"
    assert record["is_noteworthy"] is False
