"""agentx: a host process for the Structured SDK Wire Protocol.

Concept map:

Ways in (DESIGN "Ways in")
- ``cli``: the ``agentx`` entry point (DECISIONS sections 8 and 9).
- ``__main__``: ``python -m agentx``.
- ``launch``: everything resolved before the protocol starts (DECISIONS sections 4, 8, 9).
- ``diagnostics``: where diagnostics go: stderr only, through loguru (DECISIONS section 8).
- ``once``: a value built on first use, once, whichever thread asks first (DEC-CLI-3).
- ``embed``: Agent, a blocking in-process Python API (DEC-CLI-1).
- ``client``: the same blocking API over a real ``agentx`` process (DEC-CLI-1).

The protocol and its actors (DESIGN "Three kinds of code")
- ``messages``: sans-IO protocol cores: records, codec, framer, guard and state machines.
- ``actors``: thin pykka actor shells around those cores; the one-prompt path.

What the actors drive
- ``config``: what agentx resolves before the protocol starts: home, command line, registry.
- ``sessions``: the durable session: its store, its conversation and what a resume rebuilds.
- ``turns``: the agent loop of one session and what it runs with (DEC-TURN-1..5).
- ``providers``: provider clients: one model request in, a stream of provider events out.
- ``tools``: the built-in tools (DEC-TURN-3).
- ``permissions``: who may run a tool: the permission policy.
- ``agents``: the agent itself: what the model is told about its session.
- ``checkpoints``: file checkpoints: files' earlier states, and ``rewind_files``.
- ``hooks``: the user's code run at Claude Code's hook events (DECISIONS section 3).
- ``sandbox``: the operating-system boundary around every Bash child (DEC-PERM-BASH-5).
- ``mcp``: MCP servers: connections and their tools.
- ``media``: attachments: media admission, the blob store and ``--attach`` files.

``messages/`` and ``actors/`` live beside ``src/`` and are installed as
``agentx.messages`` and ``agentx.actors`` (pyproject.toml ``package-dir``).
Importing the package imports none of these modules: ``agentx --version``
and the other start-up fast paths pay only for what they use.
"""

__all__ = [
    "__main__",
    "actors",
    "agents",
    "checkpoints",
    "cli",
    "client",
    "config",
    "diagnostics",
    "embed",
    "hooks",
    "launch",
    "mcp",
    "media",
    "messages",
    "once",
    "permissions",
    "providers",
    "sandbox",
    "sessions",
    "tools",
    "turns",
]

__version__ = "0.1.0"
