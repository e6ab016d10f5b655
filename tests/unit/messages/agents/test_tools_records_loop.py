"""The Agent tool's input and a subagent's tools (at most its parent's, never
Agent), the records it writes tagged with ``parent_tool_use_id``, and its
loop's bounds (DEC-TURN-3, DEC-CLI-5)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.agents import loop
from agentx.messages.agents.definitions import GENERAL_PURPOSE, AgentDefinition
from agentx.messages.agents.records import result_text, tagged, task_started
from agentx.messages.agents.tools import (
    AgentInputError,
    allows,
    parse_request,
    subagent_tools,
    tool_description,
)
from agentx.messages.frozen import FrozenDict, freeze

AGENTS = {"general-purpose": GENERAL_PURPOSE, "x": GENERAL_PURPOSE}
PARENT = ("Bash", "Glob", "Grep", "Read", "Edit", "Write", "WebFetch", "mcp__s__t", "Agent")


def _def(**members: Any) -> AgentDefinition:
    return AgentDefinition(**{"name": "x", "description": "d", "prompt": "p", **members})


@pytest.mark.parametrize(
    ("definition", "expected"),
    [
        (_def(), PARENT[:-1]),
        (_def(tools=("*",)), PARENT[:-1]),
        (_def(tools=("Read", "Bash", "NotebookEdit")), ("Bash", "Read")),
        (_def(tools=("Read", "Agent", "Task")), ("Read",)),
        (
            _def(disallowed_tools=("Bash", "Write")),
            ("Glob", "Grep", "Read", "Edit", "WebFetch", "mcp__s__t"),
        ),
        (_def(tools=("Read",), disallowed_tools=("Read",)), ()),
        (_def(tools=()), ()),
    ],
)
def test_a_subagents_tools_are_at_most_its_parents(
    definition: AgentDefinition, expected: tuple[str, ...]
) -> None:
    got = subagent_tools(PARENT, definition)
    assert got == expected
    assert set(got) <= set(PARENT) - {"Agent"}
    assert not allows(definition, "Task")


def test_a_request_and_its_defaults() -> None:
    request = parse_request(freeze({"description": "d", "prompt": "p"}), AGENTS)
    assert request.subagent_type == "general-purpose" and request.run_in_background is False
    request = parse_request(
        freeze(
            {"description": "d", "prompt": "p", "subagent_type": "x", "run_in_background": True}
        ),
        AGENTS,
    )
    assert request.subagent_type == "x" and request.run_in_background is True


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        ({"prompt": "p"}, "'description' must be a string"),
        ({"description": "d"}, "'prompt' must be a non-empty"),
        ({"description": "d", "prompt": " "}, "'prompt' must be a non-empty"),
        (
            {"description": "d", "prompt": "p", "subagent_type": "nope"},
            r"unknown subagent_type 'nope' \(available: general-purpose, x\)",
        ),
        ({"description": "d", "prompt": "p", "subagent_type": 3}, "must be a string"),
        ({"description": "d", "prompt": "p", "run_in_background": "yes"}, "must be a boolean"),
        ({"description": "d", "prompt": "p", "isolation": "worktree"}, "unexpected parameter"),
    ],
)
def test_bad_requests(tool_input: dict[str, Any], problem: str) -> None:
    with pytest.raises(AgentInputError, match=problem):
        parse_request(freeze(tool_input), AGENTS)


def test_the_description_lists_every_agent_bounded() -> None:
    long = _def(description="word " * 1000, tools=("Read",))
    text = tool_description([GENERAL_PURPOSE, long])
    assert "- general-purpose: " in text and "(Tools: all tools)" in text
    line = next(line for line in text.splitlines() if line.startswith("- x: "))
    assert len(line) < 1100 and line.endswith("… (Tools: Read)")


def _assistant(*blocks: dict[str, Any]) -> FrozenDict:
    return freeze(
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": list(blocks)},
            "parent_tool_use_id": None,
            "session_id": "s",
            "uuid": "u",
        }
    )


TEXT = {"type": "text", "text": "thinking aloud"}
USE = {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}


def test_records_are_tagged_and_text_is_forwarded_only_when_asked() -> None:
    user = freeze({"type": "user", "message": {}, "parent_tool_use_id": None})
    stream = freeze({"type": "stream_event", "event": {}, "parent_tool_use_id": None})
    summary = freeze({"type": "tool_use_summary", "summary": "x"})
    retry = freeze({"type": "system", "subtype": "api_retry"})
    records = (_assistant(TEXT), _assistant(TEXT, USE), user, stream, summary, retry)
    quiet = tagged(records, parent_tool_use_id="toolu_p", forward_text=False)
    assert [r["type"] for r in quiet] == ["assistant", "user", "system"]
    assert quiet[0]["message"]["content"] == (USE,)
    assert all(r["parent_tool_use_id"] == "toolu_p" for r in quiet[:2])
    assert "parent_tool_use_id" not in quiet[2]
    loud = tagged(records, parent_tool_use_id="toolu_p", forward_text=True)
    assert [r["type"] for r in loud] == ["assistant", "assistant", "user", "stream_event", "system"]
    assert loud[1]["message"]["content"] == (TEXT, USE)


def test_task_started_and_the_result_text() -> None:
    record = task_started(
        task_id="a1",
        description="d" * 300,
        subagent_type="x",
        prompt="p" * 20_000,
        background=True,
        tool_use_id="toolu_p",
        session_id="s",
        uuid="u",
    )
    assert record["task_type"] == "local_agent" and record["is_backgrounded"] is True
    assert len(record["description"]) == 200 and len(record["prompt"]) == 10_000
    text = result_text("done", agent_id="a1", total_tokens=7, tool_uses=2, duration_ms=5)
    assert (
        text == "done\n\nagentId: a1\n<usage>total_tokens: 7\ntool_uses: 2\nduration_ms: 5</usage>"
    )
    assert result_text("", agent_id="a1", total_tokens=0, tool_uses=0, duration_ms=0).startswith(
        "agentId"
    )


def test_loop_bounds() -> None:
    assert loop.turn_limit(3, 10) == 3 and loop.turn_limit(None, 10) == 10
    assert loop.turn_limit(None, None) is None
    assert not loop.at_turn_limit(2, 3) and loop.at_turn_limit(3, 3)
    assert not loop.at_turn_limit(10**6, None)
    assert not loop.over_budget(1.0, 0.5, 0.5) and loop.over_budget(1.0, 0.5, 0.51)
    assert not loop.over_budget(None, 5.0, 5.0) and not loop.over_budget(1.0, None, 5.0)
    limit = loop.MAX_STOP_CONTINUATIONS
    assert loop.stop_continues(notes=1, continued=limit - 1, calls=1, limit=None)
    assert not loop.stop_continues(notes=1, continued=limit, calls=1, limit=None)
    assert not loop.stop_continues(notes=0, continued=0, calls=1, limit=None)
    assert not loop.stop_continues(notes=1, continued=0, calls=4, limit=4)
    assert loop.may_start_background(loop.MAX_BACKGROUND - 1)
    assert not loop.may_start_background(loop.MAX_BACKGROUND)
