"""The operating-system boundary around Bash (DEC-PERM-BASH-5).

The policy itself is a sans-IO core, ``agentx.messages.sandbox_policy``;
this package is its IO. Concept map:

- ``exec_helper``: the stdlib-only helper that sets no_new_privs, Landlock and seccomp, then execs.
- ``probe``: which tier this machine gives (namespaces, landlock, none), probed once and remembered.
- ``shell``: the session's sandbox: the argv and environment of every Bash child.
- ``setup``: the sandbox a session starts with, from its settings (the start-up refusals too).

Importing the package imports none of these modules.
"""

__all__ = ["exec_helper", "probe", "setup", "shell"]
