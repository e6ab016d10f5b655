"""Session headers for the session-store tests (DEC-STORE-1)."""

from __future__ import annotations

from datetime import UTC, datetime

from agentx.sessions.store.header import SessionHeader

#: The working directory the test sessions are started in.
CWD = "/work/project"


def session_header(session_id: str, cwd: str | None = CWD) -> SessionHeader:
    """A scripted-provider header for ``session_id``, created now."""
    return SessionHeader(
        session_id=session_id,
        provider_id="p",
        provider_type="scripted",
        model="m",
        route_binding="r" * 64,
        created_at=datetime.now(UTC),
        cwd=cwd,
    )
