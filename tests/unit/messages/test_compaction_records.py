"""The records of compaction and slash commands (spec "System and lifecycle
events"): exact shapes from the builders, and the published schema accepting
them and refusing anything outside their closed shapes."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentx.messages import outbound
from agentx.messages.compaction import CompactBoundary, PreservedSegment
from agentx.messages.frozen import FrozenDict, thaw
from agentx.messages.schema import document

SID, UID = "s-1", "u-1"
_SEGMENT = PreservedSegment(head_uuid="h", anchor_uuid="a", tail_uuid="t")


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    return Draft202012Validator(document("outbound"))


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            outbound.status("compacting", session_id=SID, uuid=UID),
            {"type": "system", "subtype": "status", "status": "compacting"},
            id="status-compacting",
        ),
        pytest.param(
            outbound.status(None, session_id=SID, uuid=UID),
            {"type": "system", "subtype": "status", "status": None},
            id="status-null",
        ),
        pytest.param(
            outbound.compact_boundary(
                CompactBoundary(
                    trigger="auto", pre_tokens=81, preserved_segment=_SEGMENT
                ).metadata(),
                session_id=SID,
                uuid=UID,
            ),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "compact_metadata": {
                    "trigger": "auto",
                    "pre_tokens": 81,
                    "preserved_segment": {"head_uuid": "h", "anchor_uuid": "a", "tail_uuid": "t"},
                },
            },
            id="boundary-with-segment",
        ),
        pytest.param(
            outbound.compact_boundary(
                CompactBoundary(trigger="manual", pre_tokens=0, preserved_segment=None).metadata(),
                session_id=SID,
                uuid=UID,
            ),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "compact_metadata": {"trigger": "manual", "pre_tokens": 0},
            },
            id="boundary-without-segment",
        ),
        pytest.param(
            outbound.local_command_output("hello", session_id=SID, uuid=UID),
            {"type": "system", "subtype": "local_command_output", "content": "hello"},
            id="local-command-output",
        ),
    ],
)
def test_builders_and_schema(
    validator: Draft202012Validator, record: FrozenDict, expected: dict[str, Any]
) -> None:
    assert thaw(record) == {**expected, "uuid": UID, "session_id": SID}
    assert isinstance(record, FrozenDict)
    assert validator.is_valid(thaw(record))


def _boundary(**metadata: Any) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "compact_metadata": {"trigger": "manual", "pre_tokens": 1, **metadata},
        "uuid": UID,
        "session_id": SID,
    }


@pytest.mark.parametrize(
    "record",
    [
        pytest.param(
            {
                "type": "system",
                "subtype": "status",
                "status": "busy",
                "uuid": UID,
                "session_id": SID,
            },
            id="status-outside-vocabulary",
        ),
        pytest.param(
            {"type": "system", "subtype": "status", "uuid": UID, "session_id": SID},
            id="status-missing",
        ),
        pytest.param(_boundary(trigger="sometimes"), id="trigger-outside-vocabulary"),
        pytest.param(_boundary(pre_tokens=-1), id="negative-pre-tokens"),
        pytest.param(_boundary(extra=True), id="metadata-closed"),
        pytest.param(
            _boundary(preserved_segment={"head_uuid": "h", "anchor_uuid": "a"}),
            id="segment-without-tail",
        ),
        pytest.param(
            {
                "type": "system",
                "subtype": "local_command_output",
                "content": 5,
                "uuid": UID,
                "session_id": SID,
            },
            id="output-not-text",
        ),
        pytest.param(
            {"type": "system", "subtype": "local_command_output", "content": "x", "uuid": UID},
            id="output-without-session",
        ),
    ],
)
def test_schema_refuses_what_the_shapes_close(
    validator: Draft202012Validator, record: dict[str, Any]
) -> None:
    assert not validator.is_valid(record)
