"""A session's header: what it is bound to, and its ``header.json`` document.

The header records the provider id, type, model and opaque route binding
(DEC-AUTH-5) the session was created with, and the working directory
(``cwd``, what ``--continue`` matches; absent in headers written before it
existed, which stay readable). Both backends store the same document.

Resume fails closed (WIRE-025): :func:`check_binding` names the first of
provider id, type, model or route binding that differs from the header.
Session ids are canonical UUIDs, checked before any path is built.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, repr_without
from agentx.messages.strict_json import StrictJSONError, loads_strict
from agentx.sessions.store.errors import InvalidSessionId, SessionCorrupt

HEADER_VERSION = 1
_HEADER_MEMBERS = frozenset(
    {
        "version",
        "session_id",
        "provider_id",
        "provider_type",
        "model",
        "route_binding",
        "created_at",
    }
)
#: Optional header members (a header without them is still version 1).
_OPTIONAL_HEADER_MEMBERS = frozenset({"cwd"})


class SessionHeader(Struct, frozen=True, kw_only=True):
    """What a session is bound to (WIRE-025, DEC-AUTH-5).

    ``route_binding`` is the opaque sha256 hex of the provider route; it is
    stored and compared, never emitted (kept out of ``repr``).
    """

    session_id: str
    provider_id: str
    provider_type: str
    model: str
    route_binding: str
    created_at: datetime
    #: The working directory the session was started in (DEC-CLI-5 ``--continue``).
    cwd: str | None = None

    def __repr__(self) -> str:
        return repr_without(self, frozenset({"route_binding"}))

    def __post_init__(self) -> None:
        validate_session_id(self.session_id)
        if self.created_at.tzinfo is None:
            raise ValueError("created_at must be timezone-aware")


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` if it is a canonical (lowercase, hyphenated) UUID.

    Run before any path is built, so an id can never name a path outside the
    store (``..``, separators, NUL).
    """
    try:
        canonical = str(uuid.UUID(session_id))
    except (ValueError, TypeError, AttributeError):
        raise InvalidSessionId("session id is not a UUID") from None
    if canonical != session_id:
        raise InvalidSessionId("session id is not a canonical UUID")
    return session_id


def check_binding(
    header: SessionHeader,
    *,
    provider_id: str,
    provider_type: str,
    model: str,
    route_binding: str,
) -> str | None:
    """WIRE-025: the first of ``provider_id``, ``provider_type``, ``model`` or
    ``route_binding`` that differs from the recorded header, else ``None``.

    Only the field name is returned, never a value: resume fails closed with
    a credential-free reason.
    """
    recorded = (
        ("provider_id", header.provider_id, provider_id),
        ("provider_type", header.provider_type, provider_type),
        ("model", header.model, model),
        ("route_binding", header.route_binding, route_binding),
    )
    for name, stored, offered in recorded:
        if stored != offered:
            return name
    return None


def _header_bytes(header: SessionHeader) -> bytes:
    document = {
        "version": HEADER_VERSION,
        "session_id": header.session_id,
        "provider_id": header.provider_id,
        "provider_type": header.provider_type,
        "model": header.model,
        "route_binding": header.route_binding,
        "created_at": header.created_at.isoformat(),
    }
    if header.cwd is not None:
        document["cwd"] = header.cwd
    return json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"


def _parse_header(data: bytes, session_id: str) -> SessionHeader:
    try:
        document = loads_strict(data)
    except StrictJSONError as error:
        raise SessionCorrupt(f"session header: {error.reason}") from None
    if not isinstance(document, FrozenDict) or not (
        _HEADER_MEMBERS <= set(document) <= _HEADER_MEMBERS | _OPTIONAL_HEADER_MEMBERS
    ):
        raise SessionCorrupt("session header: wrong members")
    if document["version"] != HEADER_VERSION:
        raise SessionCorrupt("session header: unsupported version")
    text_members = set(document) - {"version"}
    if not all(isinstance(document[name], str) for name in text_members):
        raise SessionCorrupt("session header: a member is not a string")
    if document["session_id"] != session_id:
        raise SessionCorrupt("session header: belongs to another session")
    try:
        return SessionHeader(
            session_id=document["session_id"],
            provider_id=document["provider_id"],
            provider_type=document["provider_type"],
            model=document["model"],
            route_binding=document["route_binding"],
            created_at=datetime.fromisoformat(document["created_at"]),
            cwd=document.get("cwd"),
        )
    except ValueError:
        raise SessionCorrupt("session header: bad created_at") from None
