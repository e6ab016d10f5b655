"""A Bash command line as the permission rules see it, sans-IO (DEC-SET-2,
DEC-PERM-PATH, DEC-PERM-BASH-4/5, WIRE-PERM-003). Concept map:

- ``words``: Bash words after quote removal, and Opaque.
- ``commands``: the simple commands of a Bash line (the tree walk).
- ``wrappers``: how a wrapper's arguments are read to find what it runs.
- ``wrapper_table``: the wrappers seen through (``env``, ``sudo``, ``taskset``...).
- ``shells``: shells, their ``-c`` bodies and literal inputs.
- ``rules``: Bash rules matched on the parsed command line.
- ``summary``: the Bash permission prompt's description.
- ``accept_edits``: the file commands ``acceptEdits`` may run unasked, and their paths.

Importing the package imports none of these modules.
"""

__all__ = [
    "accept_edits",
    "commands",
    "rules",
    "shells",
    "summary",
    "words",
    "wrapper_table",
    "wrappers",
]
