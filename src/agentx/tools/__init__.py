"""The built-in tools (DEC-TURN-3).

Concept map:

- ``base``: the tool interface and its shared input and output helpers.
- ``registry``: the built-in tool set and the ``--tools`` selection.
- ``bash``: ``Bash``, one shell command in its own process group;
  ``process``: child processes in their own process groups (Bash,
  background Bash, hooks).
- ``files``: ``Read``, ``Write``, ``Edit``; ``search``: ``Glob``, ``Grep``;
  ``fsaccess``: opening and walking files under the path policy
  (DEC-PERM-PATH) without a check-then-use race.
- ``webfetch``: ``WebFetch``, one bounded HTTP(S) GET.

Importing the package imports none of these modules.
"""

__all__ = ["base", "bash", "files", "fsaccess", "process", "registry", "search", "webfetch"]
