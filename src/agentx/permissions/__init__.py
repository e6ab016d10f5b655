"""Who may run a tool: the session's permission policy and the permission hooks.

Concept map:

- ``policy``: the session's rules and mode, and the tool adapter the turn engine drives.
- ``hooks``: the permission hook runner (DEC-HOOK-1..4), blocking API, no threads.

The policy merges the settings (DEC-SET-1) with WIRE-PERM-022 updates and is
evaluated by the pure :mod:`agentx.messages.permission_decisions`
(DEC-PERM-MODE). The race between the host's ``can_use_tool`` answer and a
hook is :mod:`agentx.messages.permission_race`, driven by the permission
arbiter actor. Importing the package imports none of these modules.
"""

__all__ = ["hooks", "policy"]
