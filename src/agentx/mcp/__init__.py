"""MCP servers: connections and their tools.

Concept map:

- ``client``: the async client side, one task per server on the MCP
  manager actor's event loop (the official ``mcp`` package, imported lazily).
- ``tools``: an MCP server's tools as turn-engine tools
  (``mcp__<server>__<tool>``), through the same permission path as built-ins.

The configuration and status records are :mod:`agentx.messages.mcp_config`,
:mod:`agentx.messages.mcp_status` and :mod:`agentx.messages.mcp_results`.
Importing the package imports none of these modules (nor ``mcp``).
"""

__all__ = ["client", "tools"]
