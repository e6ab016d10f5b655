"""What the model is told about the permission mode (DEC-PERM-MODE).

Sans-IO. In ``plan`` mode only read-only tools run (every other tool is
denied without asking), so the model is told so in the system prompt of
each request made while the mode is ``plan`` (Claude Code tells its model
the same), instead of learning it from one denial after another. The
``sdk`` profile's ``planModeInstructions`` (DEC-PROFILE-2) replaces the
workflow part of the note; the read-only part always stays.
"""

from __future__ import annotations

from typing import Final

from agentx.messages.permission_rules import Mode

#: The read-only part of the plan mode note (never replaced).
PLAN_MODE_RULES: Final = (
    "Plan mode is active. The user does not want changes made yet: do not edit, "
    "write or create files, and do not run commands that change anything; tools "
    "that are not read-only will be denied."
)
#: The default workflow part.
PLAN_MODE_WORKFLOW: Final = (
    "Research with read-only tools, then answer with a concrete plan for the user to approve."
)
PLAN_MODE_NOTE: Final = f"{PLAN_MODE_RULES} {PLAN_MODE_WORKFLOW}"


def system_for_mode(system: str, mode: Mode, instructions: str | None = None) -> str:
    """The system prompt of a request made in ``mode``; ``instructions`` (the
    client's ``planModeInstructions``) replace the default workflow."""
    if mode != "plan":
        return system
    note = f"{PLAN_MODE_RULES}\n\n{instructions}" if instructions else PLAN_MODE_NOTE
    return f"{system}\n\n{note}" if system else note
