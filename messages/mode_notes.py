"""What the model is told about the permission mode (DEC-PERM-MODE).

Sans-IO. In ``plan`` mode only read-only tools run (every other tool is
denied without asking), so the model is told so in the system prompt of
each request made while the mode is ``plan`` (Claude Code tells its model
the same), instead of learning it from one denial after another.
"""

from __future__ import annotations

from typing import Final

from agentx.messages.permission_rules import Mode

PLAN_MODE_NOTE: Final = (
    "Plan mode is active. The user does not want changes made yet: do not edit, "
    "write or create files, and do not run commands that change anything; tools "
    "that are not read-only will be denied. Research with read-only tools, then "
    "answer with a concrete plan for the user to approve."
)


def system_for_mode(system: str, mode: Mode) -> str:
    """The system prompt of a request made in ``mode``."""
    if mode != "plan":
        return system
    return f"{system}\n\n{PLAN_MODE_NOTE}" if system else PLAN_MODE_NOTE
