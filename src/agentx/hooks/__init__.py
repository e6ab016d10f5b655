"""Hooks: the user's own code run at the moments Claude Code runs it
(DECISIONS section 3). The event catalog, the reading of answers and their
combination are the sans-IO core :mod:`agentx.messages.hooks`. Concept map:

- ``http_post``: an http hook's POST as a child process: one deadline, bounded body, never exit 2.
- ``process``: one command hook as a child process group: stdin, output bounds, deadline, kill.
- ``runner``: every hook of one firing, in parallel on the caller's thread, each with its deadline.
- ``env_file``: ``CLAUDE_ENV_FILE``: a private file per SessionStart firing, read once, bounded.
- ``session``: a session's hooks: both transports' definitions, the common input fields, firing.

Hooks run unsandboxed, as the user's own code (as in Claude Code); their
process groups are children of the session, stopped at its end. Importing
the package imports none of these modules; a session with no hooks imports
none of them at all.
"""

__all__ = ["env_file", "http_post", "process", "runner", "session"]
