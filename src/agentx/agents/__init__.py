"""The agent itself: what the model is told about its session.

Concept map:

- ``environment``: the facts of the system prompt's environment block, read at start.
- ``memory``: the memory files (CLAUDE.md, AGENTS.md, ...) of the selected sources, bounded.
- ``files``: the agent files (``.claude/agents/*.md``) of the selected sources, bounded.
- ``offer``: the ``Agent`` tool as offered: its spec, the runner loaded at its first use.
- ``runner``: the ``Agent`` tool: a subagent's own loop inside the parent's turn.
- ``skills``: the skills (``.claude/skills/*/SKILL.md``) of the selected sources, bounded.

The prompt's wording and shape are :mod:`agentx.messages.system_prompt`, the
subagents' decisions :mod:`agentx.messages.agents` (sans-IO).
Importing the package imports none of these modules.
"""

__all__ = ["environment", "files", "memory", "offer", "runner", "skills"]
