"""MCP, sans-IO: what agentx decides about MCP servers, their tools and their
results (DEC-SET-2, DEC-PROFILE-1/2, DEC-COMPAT-3). Concept map:

- ``config``: the ``mcpServers`` map (settings, flags, ``mcp_set_servers``): names, credentials.
- ``sources``: where a session's servers come from (``.mcp.json`` approved or not) and which win.
- ``status``: the server table: statuses, tools, and the ``mcp_*`` control operations.
- ``sdk``: an SDK in-process server's ``mcp_message`` channel, and the MCP permission prompt tool.
- ``results``: an MCP ``CallToolResult`` as a tool result.
- ``search``: ``ToolSearch`` over large MCP tool sets, deferring their specs.

Importing the package imports none of these modules.
"""

__all__ = ["config", "results", "sdk", "search", "sources", "status"]
