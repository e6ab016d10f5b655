"""The AgentX home directory (DEC-HOME-1).

The home is ``$AGENTX_HOME``, else ``~/.agentx``. It holds ``auth.json`` (the
provider registry, DEC-AUTH-1), ``settings.json`` (the user settings source,
DEC-SET-1), ``sessions/`` and ``blobs/``. The environment is an argument so
callers and tests pass exactly the mapping the process should see.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

#: The registry file inside the home (DEC-AUTH-1).
AUTH_FILE_NAME = "auth.json"


def agentx_home(env: Mapping[str, str]) -> Path:
    """Return the AgentX home for ``env`` (DEC-HOME-1).

    An empty ``AGENTX_HOME`` counts as unset (``AGENTX_HOME= agentx ...``
    clears it in a shell). ``~`` is the ``HOME`` of ``env`` when it has one,
    else the current user's home directory.
    """
    configured = env.get("AGENTX_HOME", "")
    if configured:
        return Path(configured)
    user_home = env.get("HOME", "")
    return (Path(user_home) if user_home else Path.home()) / ".agentx"
