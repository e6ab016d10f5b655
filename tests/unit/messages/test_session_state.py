"""Session state authority (DEC-TURN-2, WIRE-004): what is published, and when."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.outbound import SESSION_STATES, SessionState
from agentx.messages.session_state import SessionStateCore

EVENTS: dict[str, Callable[[SessionStateCore], SessionState | None]] = {
    "turn_started": SessionStateCore.turn_started,
    "turn_finished": lambda core: core.turn_finished(more_queued=False),
    "turn_finished_more": lambda core: core.turn_finished(more_queued=True),
    "permission_opened": SessionStateCore.permission_opened,
    "permission_closed": SessionStateCore.permission_closed,
    "task_started": SessionStateCore.task_started,
    "task_finished": SessionStateCore.task_finished,
}


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(
            [("turn_started", "running"), ("turn_finished", "idle")],
            id="plain-turn",
        ),
        pytest.param(
            [
                ("turn_started", "running"),
                ("permission_opened", "requires_action"),
                ("permission_closed", "running"),
                ("turn_finished", "idle"),
            ],
            id="one-permission",
        ),
        pytest.param(
            [
                ("turn_started", "running"),
                ("permission_opened", "requires_action"),
                ("permission_opened", None),
                ("permission_closed", None),
                ("permission_closed", "running"),
                ("turn_finished", "idle"),
            ],
            id="running-only-when-no-permission-remains",
        ),
        pytest.param(
            [
                ("turn_started", "running"),
                ("turn_finished_more", None),
                ("turn_started", None),
                ("turn_finished", "idle"),
            ],
            id="queued-turn-stays-running",
        ),
        pytest.param(
            [
                ("turn_started", "running"),
                ("task_started", None),
                ("turn_finished", None),
                ("task_finished", "idle"),
            ],
            id="idle-waits-for-background-work",
        ),
        pytest.param(
            [
                ("turn_started", "running"),
                ("task_started", None),
                ("task_started", None),
                ("turn_finished", None),
                ("task_finished", None),
                ("task_finished", "idle"),
            ],
            id="idle-after-the-last-task",
        ),
        pytest.param(
            [
                ("turn_started", "running"),
                ("task_started", None),
                ("permission_opened", "requires_action"),
                ("turn_finished", None),
                ("permission_closed", "running"),
                ("task_finished", "idle"),
            ],
            id="background-task-after-permission-is-running",
        ),
        pytest.param(
            [("turn_started", "running"), ("turn_started", None)],
            id="no-duplicate-publication",
        ),
    ],
)
def test_published_sequence(steps: list[tuple[str, SessionState | None]]) -> None:
    core = SessionStateCore()
    assert core.state == "idle"
    shown: SessionState = "idle"
    for event, expected in steps:
        assert EVENTS[event](core) == expected, event
        shown = expected or shown
        assert core.state == shown


@pytest.mark.parametrize(
    ("event", "message"),
    [
        pytest.param(
            "permission_closed", "permission_closed without a pending permission", id="permission"
        ),
        pytest.param("task_finished", "task_finished without a running task", id="task"),
    ],
)
def test_unbalanced_close_is_a_defect(event: str, message: str) -> None:
    core = SessionStateCore()
    with pytest.raises(ValueError, match=message):
        EVENTS[event](core)
    assert core.state == "idle"


def test_pending_permissions_counter() -> None:
    core = SessionStateCore()
    core.turn_started()
    core.permission_opened()
    core.permission_opened()
    assert core.pending_permissions == 2
    core.permission_closed()
    assert core.pending_permissions == 1


@given(st.lists(st.sampled_from(sorted(EVENTS)), max_size=40))
def test_publications_are_changes_in_the_vocabulary(events: list[str]) -> None:
    """WIRE-004: every publication is a real change and a state of the vocabulary."""
    core = SessionStateCore()
    for event in events:
        before = core.state
        try:
            published = EVENTS[event](core)
        except ValueError:
            assert core.state == before
            continue
        if published is None:
            assert core.state == before
        else:
            assert published != before
            assert published in SESSION_STATES
            assert core.state == published
        assert (core.state == "requires_action") == (core.pending_permissions > 0)
