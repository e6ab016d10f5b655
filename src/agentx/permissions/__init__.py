"""Who may run a tool: the session's permission policy.

Concept map:

- ``policy``: the session's rules and mode, and the tool adapter the turn engine drives.

The policy merges the settings (DEC-SET-1) with WIRE-PERM-022 updates and is
evaluated by the pure :mod:`agentx.messages.permission_decisions`
(DEC-PERM-MODE). The race between the host's ``can_use_tool`` answer and a
PermissionRequest hook is :mod:`agentx.messages.permission_race`, driven by
the permission arbiter actor; hooks themselves are :mod:`agentx.hooks`.
Importing the package imports none of these modules.
"""

__all__ = ["policy"]
