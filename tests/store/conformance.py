"""Shared parts of the store conformance suite (DEC-STORE-1): the session
ids, the store opener type and the entry reader; the ``url``, ``opener``
and ``store`` fixtures are in ``conftest.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentx.sessions.store.base import SessionStore

SESSION_ID = "0b7c3e52-6f0a-4d0e-9a51-3c2f8e1d4a77"
OTHER_ID = "5d1f9a80-2c44-4b7e-8f3e-91a0c6b2d915"
NOWHERE = Path("/nonexistent-agentx-home")

Opener = Callable[[], SessionStore]


def seqs(store: SessionStore, session_id: str = SESSION_ID) -> list[int]:
    return [entry["seq"] for entry in store.read(session_id).entries]
