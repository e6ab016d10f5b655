"""The shape check of stored transcript entries (DEC-STORE-1): a table of
wrong shapes, and the property that every entry it passes is replayed
without an exception (so nothing unchecked reaches the replay)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx.messages.frozen import freeze
from agentx.messages.session_ledger import stored_turns
from agentx.messages.transcript_shape import entry_problem, first_problem
from agentx.sessions.transcript import TranscriptError, from_entries

SHA = "ab" * 32


def message(*blocks: dict[str, Any], role: str = "user", uuid: str | None = "m1") -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "message", "role": role, "content": list(blocks)}
    if uuid is not None:
        entry["uuid"] = uuid
    return entry


TEXT = {"type": "text", "text": "hi"}
TOOL_USE = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
TOOL_RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": False}
ATTACHMENT = {
    "type": "attachment_ref",
    "kind": "image",
    "name": "a.png",
    "mime_type": "image/png",
    "size_bytes": 3,
    "sha256": SHA,
    "storage_id": f"blob_sha256_{SHA}",
}
BOUNDARY = {
    "type": "compact_boundary",
    "uuid": "b1",
    "compact_metadata": {"trigger": "manual", "pre_tokens": 10},
    "summary": message(TEXT, uuid="s1"),
}
SEGMENTED = {
    **BOUNDARY,
    "compact_metadata": {
        "trigger": "auto",
        "pre_tokens": 10,
        "preserved_segment": {"anchor_uuid": "s1", "head_uuid": "m1", "tail_uuid": "m1"},
    },
}

TURN = {
    "type": "turn",
    "result_uuid": "r1",
    "started_at": "2026-12-04T15:00:00.000Z",
    "ended_at": "2026-12-04T15:00:01.000Z",
    "duration_ms": 1000,
    "duration_api_ms": 900,
    "subtype": "success",
    "num_turns": 1,
    "total_cost_usd": None,
    "usage": {
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    },
    "modelUsage": {},
    "permission_denials": 0,
}

VALID = [
    TURN,
    message(TEXT),
    message(TEXT, uuid=None),  # older transcripts: no uuid
    message(TOOL_USE, role="assistant"),
    message(TOOL_RESULT),
    message(ATTACHMENT),
    message(),
    message({**ATTACHMENT, "kind": "document", "size_bytes": 0}),
    BOUNDARY,
    {**BOUNDARY, "compact_metadata": {"preserved_segment": None}},
    # DEC-TURN-3: a subagent's message, stored beside its parent's.
    {
        "type": "sidechain",
        "agent_id": "a1",
        "agent_type": "general-purpose",
        "parent_tool_use_id": "toolu_1",
        "message": message(TEXT),
    },
]

SIDECHAIN = VALID[-1]


@pytest.mark.parametrize("entry", VALID)
def test_entries_agentx_writes_pass(entry: dict[str, Any]) -> None:
    assert entry_problem(freeze(entry)) is None


def _without(entry: dict[str, Any], member: str) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != member}


WRONG: list[tuple[Any, str]] = [
    (_without(SIDECHAIN, "agent_id"), "the sidechain entry has no 'agent_id'"),
    (
        {**SIDECHAIN, "parent_tool_use_id": 3},
        "the sidechain entry's 'parent_tool_use_id' is a number, not a string",
    ),
    ({**SIDECHAIN, "message": TURN}, "the sidechain entry's 'message' is not a message entry"),
    (
        {**SIDECHAIN, "message": message(TEXT, role="system")},
        "the sidechain's message's 'role' is not one of user, assistant",
    ),
    ([1, 2], "the entry is an array, not an object"),
    ("text", "the entry is a string, not an object"),
    (None, "the entry is null, not an object"),
    ({"role": "user", "content": []}, "the entry has no known 'type'"),
    ({"type": "summary"}, "the entry has no known 'type'"),
    ({"type": 7}, "the entry has no known 'type'"),
    (message(TEXT, role="system"), "the message's 'role' is not one of user, assistant"),
    (_without(message(TEXT), "role"), "the message's 'role' is not one of user, assistant"),
    ({**message(TEXT), "uuid": 5}, "the message's 'uuid' is a number, not a string"),
    ({**message(), "content": "hi"}, "the message's 'content' is a string, not an array"),
    ({**message(), "content": {"a": 1}}, "the message's 'content' is an object, not an array"),
    (_without(message(), "content"), "the message's 'content' is null, not an array"),
    (message("hi"), "the message's block 0 is a string, not an object"),  # type: ignore[arg-type]
    (message(TEXT, {"text": "x"}), "the message's block 1 has no known 'type'"),
    (message({"type": "image"}), "the message's block 0 has no known 'type'"),
    (message({"type": "text"}), "the message's block 0 has no 'text'"),
    (
        message({"type": "text", "text": 1}),
        "the message's block 0's 'text' is a number, not a string",
    ),
    (
        message({**TOOL_USE, "input": "ls"}),
        "the message's block 0's 'input' is a string, not an object",
    ),
    (message(_without(TOOL_USE, "id")), "the message's block 0 has no 'id'"),
    (
        message({**TOOL_RESULT, "content": [{"type": "text"}]}),
        "the message's block 0's 'content' is an array, not a string",
    ),
    (
        message({**TOOL_RESULT, "is_error": 0}),
        "the message's block 0's 'is_error' is a number, not true or false",
    ),
    (
        message({**ATTACHMENT, "size_bytes": -1}),
        "the message's block 0's 'size_bytes' is a number, not a whole number not below 0",
    ),
    (
        message({**ATTACHMENT, "size_bytes": 1.5}),
        "the message's block 0's 'size_bytes' is a number, not a whole number not below 0",
    ),
    (
        message({**ATTACHMENT, "size_bytes": True}),
        "the message's block 0's 'size_bytes' is a boolean, not a whole number not below 0",
    ),
    (
        message({**ATTACHMENT, "kind": "video"}),
        "the message's block 0's 'kind' is not one of image, document",
    ),
    (_without(BOUNDARY, "summary"), "the boundary's 'summary' is not a message"),
    ({**BOUNDARY, "summary": TEXT}, "the boundary's 'summary' is not a message"),
    (
        {**BOUNDARY, "summary": {**message(), "content": 3}},
        "the summary's 'content' is a number, not an array",
    ),
    (
        {**BOUNDARY, "compact_metadata": []},
        "the boundary's 'compact_metadata' is an array, not an object",
    ),
    (
        {**BOUNDARY, "compact_metadata": {"preserved_segment": "x"}},
        "the boundary's 'preserved_segment' is a string, not an object",
    ),
    (
        {**SEGMENTED, "compact_metadata": {"preserved_segment": {"anchor_uuid": "s1"}}},
        "the preserved segment has no 'head_uuid'",
    ),
    ({**BOUNDARY, "uuid": ["b"]}, "the boundary's 'uuid' is an array, not a string"),
    ({**TURN, "num_turns": "1"}, "turn entry member 'num_turns' is not a count"),
    (_without(TURN, "modelUsage"), "turn entry member 'modelUsage' is not an object"),
]


@pytest.mark.parametrize(("entry", "problem"), WRONG)
def test_each_wrong_shape_is_named_by_member_and_type(entry: Any, problem: str) -> None:
    assert entry_problem(freeze(entry)) == problem


def test_a_problem_never_quotes_a_stored_value() -> None:
    secret = "sk-stored-secret-0042"
    for entry in (
        {"type": secret},
        message({"type": secret}),
        message(TEXT, role=secret),
        message({**ATTACHMENT, "kind": secret}),
    ):
        problem = entry_problem(freeze(entry))
        assert problem is not None and secret not in problem


def test_first_problem_is_the_first_wrong_entry_from_0() -> None:
    entries = [freeze(message(TEXT)), freeze(message(TEXT)), freeze({"type": "x"}), None]
    assert first_problem(entries) == (2, "the entry has no known 'type'")
    assert first_problem(entries[:2]) is None
    assert first_problem([]) is None


# -- the property: what passes the check is replayed without an exception ---------

JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["", "x", "user", "assistant", "text", "image", "message"]),
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["type", "text", "role", "a"]), inner, max_size=3),
    ),
    max_leaves=8,
)
PATHS_OF_VALID = [message(TEXT, TOOL_USE, TOOL_RESULT, ATTACHMENT), SEGMENTED, BOUNDARY, TURN]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    """A valid entry with one member replaced by any JSON value, or removed."""
    entry = copy.deepcopy(draw(st.sampled_from(PATHS_OF_VALID)))
    path = draw(st.sampled_from(_paths(entry)))
    if not path:
        return draw(JSON)
    parent = entry
    for step in path[:-1]:
        parent = parent[step]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON)
    return entry


def _blob(storage_id: str) -> bytes:
    return b"png"


@settings(max_examples=600, deadline=None)
@given(mutated())
def test_whatever_passes_the_check_replays_without_an_exception(entry: Any) -> None:
    frozen = freeze(entry)
    if entry_problem(frozen) is not None:
        return
    # A boundary whose segment names entries that are not there is a
    # replay error (TranscriptError, exit 2), not a shape one.
    stored_turns([frozen])  # the ledger's reader, which a resume runs too
    try:
        from_entries([freeze(message(TEXT)), frozen], _blob)
    except TranscriptError:
        assert frozen.get("type") == "compact_boundary"
