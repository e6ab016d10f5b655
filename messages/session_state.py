"""Session state authority (DEC-TURN-2, WIRE-004).

``running`` when a turn starts, ``requires_action`` while at least one
permission prompt is pending, ``running`` again only when none remain, and
``idle`` only after the turn's result and every finite background task have
drained. Each method returns the state to publish, or None when nothing
changed (no duplicate ``session_state_changed`` records).
"""

from __future__ import annotations

from agentx.messages.outbound import SessionState


class SessionStateCore:
    """Derives the published state from turn, permission and task counters."""

    def __init__(self) -> None:
        self._published: SessionState = "idle"
        self._turn_active = False
        self._pending_permissions = 0
        self._background_tasks = 0

    @property
    def state(self) -> SessionState:
        return self._published

    @property
    def pending_permissions(self) -> int:
        return self._pending_permissions

    def _derive(self) -> SessionState:
        if self._pending_permissions:
            return "requires_action"
        if self._turn_active:
            return "running"
        if self._background_tasks:
            return self._published if self._published != "requires_action" else "running"
        return "idle"

    def _publish(self) -> SessionState | None:
        state = self._derive()
        if state == self._published:
            return None
        self._published = state
        return state

    def turn_started(self) -> SessionState | None:
        self._turn_active = True
        return self._publish()

    def turn_finished(self, *, more_queued: bool) -> SessionState | None:
        """After the turn's result. With more work queued the session stays running."""
        self._turn_active = more_queued
        return self._publish()

    def permission_opened(self) -> SessionState | None:
        self._pending_permissions += 1
        return self._publish()

    def permission_closed(self) -> SessionState | None:
        if self._pending_permissions == 0:
            raise ValueError("permission_closed without a pending permission")
        self._pending_permissions -= 1
        return self._publish()

    def task_started(self) -> SessionState | None:
        self._background_tasks += 1
        return self._publish()

    def task_finished(self) -> SessionState | None:
        if self._background_tasks == 0:
            raise ValueError("task_finished without a running task")
        self._background_tasks -= 1
        return self._publish()
