"""Who may run a tool: the session's permission policy and the permission hooks.

Concept map:

- ``policy``: the session's rules and mode (settings merged, DEC-SET-1, plus
  WIRE-PERM-022 updates) evaluated by the pure
  :mod:`agentx.messages.permission_decisions` (DEC-PERM-MODE), and the tool
  adapter the turn engine drives.
- ``hooks``: the permission hook runner (DEC-HOOK-1..4), one command hook in
  its own process group, blocking API, no threads.

The race between the host's ``can_use_tool`` answer and a hook is
:mod:`agentx.messages.permission_race`, driven by the permission arbiter actor.
Importing the package imports none of these modules.
"""

__all__ = ["hooks", "policy"]
