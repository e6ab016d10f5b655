"""Subagents, sans-IO: the agent definitions, the tools a subagent gets, and
the records its run leaves (DEC-PROFILE-2 ``agents``, DEC-CLI-5 ``--agents``,
DEC-SET-1 sources, DEC-TURN-3). Concept map:

- ``definitions``: agent definitions from JSON or agent files, and their sources' precedence.
- ``tools``: the ``Agent`` tool's names, spec and input; a subagent's tools (at most its parent's).
- ``loop``: a subagent loop's bounds: model calls, the turn's budget, SubagentStop continuations.
- ``records``: its records tagged with ``parent_tool_use_id``, its task records, its result text.

Importing the package imports none of these modules.
"""

__all__ = ["definitions", "loop", "records", "tools"]
