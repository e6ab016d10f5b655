"""Http hooks, sans-IO (DECISIONS section 3, DEC-HOOK-1, DEC-AUTH-3).

A settings hook ``{"type": "http", "url": U, "headers": {...},
"allowedEnvVars": [...], "timeout": S}`` POSTs the hook's input JSON to
``U`` (an ``http`` or ``https`` URL the user configured); a 2xx response's
body is read as a command hook's stdout, anything else (another status, no
answer within ``timeout`` from connect to last byte, a body past the bound)
is the hook's failure and never approves.

A header value may name variables as ``$NAME`` or ``${NAME}``, as Claude
Code reads them: a name in ``allowedEnvVars`` is replaced by its value, any
other by the empty text (:func:`interpolate`). Every header value and the
URL's secret parts join the credential union before the first record
(:func:`header_literals`, :func:`agentx.hooks.http_post.http_hook_literals`), so
neither can reach stdout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

#: ``$NAME`` or ``${NAME}``.
_VARIABLE: Final = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
#: Headers whose values are protocol, never a secret.
PUBLIC_HEADERS: Final = frozenset({"content-type", "accept", "user-agent"})


def check_url(url: object) -> str | None:
    """What is wrong with an http hook's ``url`` (None: it is usable)."""
    if not isinstance(url, str) or not url:
        return "must be a non-empty string"
    # lazy: only settings that define http hooks pay for it
    from urllib.parse import urlsplit  # noqa: PLC0415

    try:
        parts = urlsplit(url)
    except ValueError:
        return "must be an http or https URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http or https URL"
    if any(c in url for c in "\r\n\0 "):
        return "must be an http or https URL"
    return None


def interpolate(value: str, allowed: Iterable[str], env: Mapping[str, str]) -> str:
    """``value`` with each ``$NAME``/``${NAME}`` in ``allowed`` replaced by its
    value in ``env`` and every other one by the empty text."""
    names = frozenset(allowed)

    def one(found: re.Match[str]) -> str:
        name = found.group(1) or found.group(2)
        return env.get(name, "") if name in names else ""

    return _VARIABLE.sub(one, value)


def resolved_headers(
    headers: Iterable[tuple[str, str]], allowed: Iterable[str], env: Mapping[str, str]
) -> dict[str, str]:
    """The headers an http hook sends (``Content-Length`` and
    ``Transfer-Encoding`` are left to the client, as Claude Code leaves them)."""
    allowed = tuple(allowed)
    return {
        name: interpolate(value, allowed, env)
        for name, value in headers
        if name.lower() not in ("content-length", "transfer-encoding")
    }


def header_literals(hook: Mapping[str, Any], env: Mapping[str, str]) -> set[str]:
    """DEC-AUTH-3: the secret values one http hook definition sends in its
    headers: each allowed variable's value it interpolates, and each
    non-protocol header value that names no variable (a token written out)."""
    allowed = frozenset(hook.get("allowedEnvVars", ()))
    literals: set[str] = set()
    for name, value in hook.get("headers", {}).items():
        if name.lower() in PUBLIC_HEADERS:
            continue
        names = [m.group(1) or m.group(2) for m in _VARIABLE.finditer(value)]
        if not names:
            literals.add(value)
        literals.update(env.get(n, "") for n in names if n in allowed)
    return {literal for literal in literals if literal.strip()}
