"""The session store's errors (DEC-STORE-1); every backend raises these.

Messages never carry entry content or a credential, so they are safe on
stderr and in a result.
"""

from __future__ import annotations


class SessionError(Exception):
    """Base of the store's errors; messages never carry entry content."""


class InvalidSessionId(SessionError, ValueError):
    """The session id is not a canonical UUID (checked before any path is built)."""


class SessionNotFound(SessionError, KeyError):
    """No session has this id."""


class SessionExists(SessionError):
    """A session with this id was already created."""


class SessionCorrupt(SessionError):
    """The header is unreadable or a line before the last is undecodable."""


class SessionBusy(SessionError):
    """Another appender (in this or another process) holds the session."""


class TranscriptRefused(SessionError):
    """A batch holds something the output guard would refuse to show
    (DEC-AUTH-6: nothing the guard refused is persisted); nothing was written."""
