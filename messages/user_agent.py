"""The User-Agent of agentx's provider requests (DEC-CLI-5, DEC-PROFILE-2).

Sans-IO. ``agentx/<version>``, and, when the Agent SDK application named
itself (the SDKs' ``client_app`` option, passed as
``CLAUDE_AGENT_SDK_CLIENT_APP``), `` client-app/<name>``. The name is checked
with the SDKs' own pattern (a package name, scoped or not, and an optional
``/version``; at most 128 characters): anything else could break the header
and is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

CLIENT_APP_ENV: Final = "CLAUDE_AGENT_SDK_CLIENT_APP"
MAX_CLIENT_APP: Final = 128
_CLIENT_APP: Final = re.compile(
    r"(?:@[A-Za-z0-9._-]+/)?[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9.!+_-]*)?"
)


def client_app(environ: Mapping[str, str]) -> str | None:
    """The application's label, when it is a safe one."""
    value = environ.get(CLIENT_APP_ENV)
    if value is None or len(value) > MAX_CLIENT_APP or not _CLIENT_APP.fullmatch(value):
        return None
    return value


def user_agent(version: str, environ: Mapping[str, str]) -> str:
    """The header's value."""
    app = client_app(environ)
    return f"agentx/{version}" if app is None else f"agentx/{version} client-app/{app}"
