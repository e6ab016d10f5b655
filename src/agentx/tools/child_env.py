"""The environment a child process inherits (DEC-AUTH-3, DEC-HOOK-2).

No child agentx starts (Bash, background Bash, hooks) inherits a credential
agentx holds: :func:`child_environment` drops every variable in
:data:`CREDENTIAL_VARIABLES` (the session store's URL, the provider keys
agentx reads from its environment, libpq's password) and, given the
session's credential union, every variable whose value contains one of its
literals, whatever its name (a key exported under another name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: Variables that carry a credential agentx may hold: never passed on.
CREDENTIAL_VARIABLES = frozenset(
    {
        "AGENTX_SESSION_STORE",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_AD_TOKEN",
        "PGPASSWORD",
    }
)


def child_environment(env: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """``env`` without :data:`CREDENTIAL_VARIABLES` and without any variable
    whose value contains a literal of ``secrets``."""
    literals = tuple(literal for literal in secrets if literal)
    return {
        name: value
        for name, value in env.items()
        if name not in CREDENTIAL_VARIABLES and not any(lit in value for lit in literals)
    }
