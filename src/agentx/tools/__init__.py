"""The built-in tools (DEC-TURN-3).

Concept map:

The tool set
- ``base``: the tool interface and its shared input and output helpers.
- ``registry``: the tool set (name, module, class; imported on first use) and ``--tools``.
- ``specs``: each tool's name, description and input schema, offered without loading the tool.

The tools
- ``bash``: ``Bash``, one shell command in its own process group.
- ``files``: ``Read``, ``Write`` and ``Edit``.
- ``search``: ``Glob`` and ``Grep``, bounded and cancellable.
- ``ripgrep``: Grep's matcher, ripgrep in a child process with a deadline (WIRE-010).
- ``webfetch``: ``WebFetch``, one bounded HTTP(S) GET.
- ``websearch``: ``WebSearch``, one sub-request with the provider's own search tool.
- ``notebook``: ``NotebookEdit``, one cell of a Jupyter notebook.
- ``taskstop``: ``TaskStop``, the model stops a background task.
- ``questions``: ``AskUserQuestion``, questions answered through the permission request.
- ``skill``: ``Skill``, the session's skills and their instructions.

What they share
- ``process``: child processes in their own process groups (Bash, background Bash, hooks).
- ``child_env``: the environment a child inherits, without the credentials agentx holds.
- ``orphans``: the CLI as subreaper: what left its group is reaped and ended (DEC-EXIT-1).
- ``fsaccess``: opening and walking files under the path policy without a check-then-use race.
- ``lines``: a file's lines read in bounded chunks, each line's contribution capped.

Importing the package imports none of these modules. A tool's module is
imported the first time the tool is used (``registry``, DEC-CLI-3), never at
start: CONTRIBUTING.md, "Checklist: adding a tool".
"""

__all__ = [
    "base",
    "bash",
    "child_env",
    "files",
    "fsaccess",
    "lines",
    "notebook",
    "orphans",
    "process",
    "questions",
    "registry",
    "ripgrep",
    "search",
    "skill",
    "specs",
    "taskstop",
    "webfetch",
    "websearch",
]
