"""Opening the durable session before the protocol starts (issue 8 items 1-2,
WIRE-025, DEC-AUTH-5).

``--resume ID`` reopens a stored session: its header must match the frozen
provider selection exactly (id, type, model and the opaque route binding) or
start-up fails closed before any replay or provider I/O. ``--session-id
UUID`` names a new session. Either way the history is rebuilt as prior
context only, and every later turn is appended (fsynced) before its result.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentx.blobs import BlobStore
from agentx.providers.base import Message
from agentx.registry import ProviderDescriptor, route_binding
from agentx.sessions import (
    SESSIONS_DIR_NAME,
    SessionError,
    SessionHeader,
    SessionStore,
    check_binding,
    validate_session_id,
)
from agentx.transcript import TranscriptError, from_entries, to_entries


class SessionSetupError(ValueError):
    """Start-up refused: exit 2 with this credential-free message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenedSession:
    session_id: str
    history: tuple[Message, ...]
    persist: Callable[[Sequence[Message]], None] | None


def open_session(
    *,
    home: Path,
    desc: ProviderDescriptor,
    blobs: BlobStore,
    resume: str | None,
    session_id: str | None,
    persistent: bool = True,
) -> OpenedSession:
    """Open or create the session; ``persistent=False`` keeps nothing on disk."""
    if not persistent:
        chosen = validate_session_id(session_id) if session_id else str(uuid.uuid4())
        return OpenedSession(session_id=chosen, history=(), persist=None)
    store = SessionStore(home / SESSIONS_DIR_NAME)
    binding = route_binding(desc)
    try:
        if resume is not None:
            validate_session_id(resume)
            transcript = store.open(resume)
            mismatch = check_binding(
                transcript.header,
                provider_id=desc.id,
                provider_type=desc.type,
                model=desc.model,
                route_binding=binding,
            )
            if mismatch is not None:
                raise SessionSetupError(
                    f"--resume: the session is bound to another provider ({mismatch} differs); "
                    "resume it with the --provider it was started with"
                )
            chosen = resume
            history = tuple(from_entries(transcript.entries, blobs.read))
        else:
            chosen = validate_session_id(session_id) if session_id else str(uuid.uuid4())
            store.create(
                SessionHeader(
                    session_id=chosen,
                    provider_id=desc.id,
                    provider_type=desc.type,
                    model=desc.model,
                    route_binding=binding,
                    created_at=datetime.now(UTC),
                )
            )
            history = ()
    except SessionError as exc:
        flag = "--resume" if resume is not None else "--session-id"
        raise SessionSetupError(f"{flag}: {type(exc).__name__}") from None
    except (TranscriptError, KeyError):
        raise SessionSetupError("--resume: the stored transcript cannot be replayed") from None

    def persist(messages: Sequence[Message]) -> None:
        store.append(chosen, to_entries(messages))

    return OpenedSession(session_id=chosen, history=history, persist=persist)
