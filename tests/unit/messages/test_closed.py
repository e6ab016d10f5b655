"""The one closed-member check (WIRE-021, WIRE-PERM-022, DEC-AUTH-1) and the
JSON Schema form of the same rule."""

from __future__ import annotations

import pytest

from agentx.messages.closed import Breach, closed_breach, closed_schema
from agentx.messages.frozen import FrozenDict

REQUIRED = frozenset({"type", "id"})
ALLOWED = REQUIRED | {"note"}


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        pytest.param({"type": 1, "id": 2}, None, id="required-only"),
        pytest.param({"id": 2, "type": 1, "note": 3}, None, id="all-allowed"),
        pytest.param({"type": 1}, Breach(missing=frozenset({"id"}), unknown=()), id="missing"),
        pytest.param(
            {"z": 0, "type": 1, "id": 2, "a": 3},
            Breach(missing=frozenset(), unknown=("z", "a")),
            id="unknown-in-object-order",
        ),
        pytest.param({"x": 0}, Breach(missing=REQUIRED, unknown=("x",)), id="missing-and-unknown"),
        pytest.param({}, Breach(missing=REQUIRED, unknown=()), id="empty"),
    ],
)
def test_closed_breach(members: dict[str, int], expected: Breach | None) -> None:
    assert closed_breach(FrozenDict(members), ALLOWED, REQUIRED) == expected


def test_nothing_required_by_default() -> None:
    assert closed_breach({}, ALLOWED) is None
    assert closed_breach({"x": 1}, frozenset()) == Breach(missing=frozenset(), unknown=("x",))


def test_closed_schema_names_every_member_and_sorts_the_required() -> None:
    properties = {"b": {"type": "string"}, "a": {"type": "integer"}}
    schema = closed_schema(properties, ["b", "a"])
    assert schema == {
        "type": "object",
        "properties": properties,
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert schema["properties"] is not properties
