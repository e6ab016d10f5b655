"""What agentx resolves before the protocol starts (DECISIONS sections 4, 9).

Concept map:

The home and the command line
- ``home``: the AgentX home (``$AGENTX_HOME``, else ``~/.agentx``; DEC-HOME-1).
- ``cli_args``: the command line (DECISIONS section 9), parsing only.
- ``cli_flags``: every option and command, from which the parser and ``--help`` are built.
- ``claude_flags``: Claude Code's options, so the ones agentx does not take are refused by name.
- ``settings``: the settings sources and their merge (DEC-SET-1, DEC-SET-2).
- ``start_files``: every file read at start: a regular file, read with a size bound (section 8).

The provider registry
- ``registry``: the provider registry's types and what is derived from them.
- ``auth_json``: ``auth.json`` version 2, read strictly into a registry (DECISIONS section 4).
- ``auth_schema``: the ``auth.json`` member names and the check of each value.
- ``env_registry``: auth.json, else the provider environment variables, else offline (DEC-AUTH-4).
- ``models``: which profile serves ``--model``, and as which id (aliases included).
- ``request_flags``: thinking, task budget, betas and the fallback model from the command line.
- ``catalog``: the credential-free public projections of the registry (WIRE-023, WIRE-024).
- ``discovery``: ``agentx --list-providers`` (WIRE-026).
- ``price_catalog``: ``"pricing": "catalog"`` list prices from ``genai-prices`` (DEC-AUTH-2).

Importing the package imports none of these modules, so the start-up fast
paths pay only for what they use.
"""

__all__ = [
    "auth_json",
    "auth_schema",
    "catalog",
    "claude_flags",
    "cli_args",
    "cli_flags",
    "discovery",
    "env_registry",
    "home",
    "models",
    "price_catalog",
    "registry",
    "request_flags",
    "settings",
    "start_files",
]
