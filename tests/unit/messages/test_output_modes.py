"""What each ``--output-format`` selects, and the result observer a one-shot
run's exit status follows (DEC-CLI-1/2, DEC-CLI-6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentx.messages.output_modes import OutputFormat, observing_results, selects

RECORDS: tuple[Mapping[str, Any], ...] = (
    {"type": "system", "subtype": "init"},
    {"type": "assistant"},
    {"type": "result", "is_error": True},
    {"type": "system", "subtype": "session_state_changed"},
    {"type": "result", "is_error": False},
)


@pytest.mark.parametrize(
    ("output", "written"),
    [("stream-json", [0, 1, 2, 3, 4]), ("json", [2, 4]), ("text", [2, 4])],
)
def test_observer_sees_every_result_and_selection_is_unchanged(
    output: OutputFormat, written: list[int]
) -> None:
    seen: list[Mapping[str, Any]] = []
    select = observing_results(selects(output), seen.append)
    assert [i for i, record in enumerate(RECORDS) if select(record)] == written
    assert seen == [RECORDS[2], RECORDS[4]]
