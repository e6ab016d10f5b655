"""MCP servers: connections and their tools.

Concept map:

- ``client``: the async client side, one task per server on one event loop (DEC-SET-2).
- ``prompt_tool``: ``--permission-prompt-tool mcp__server__tool``: asks answered by an MCP tool.
- ``search``: ``ToolSearch``, deferred MCP tool schemas loaded on demand.
- ``sdk_channel``: an SDK in-process server reached with ``mcp_message`` (DEC-PROFILE-2).
- ``start``: the servers of a session's start (``--mcp-config``, ``.mcp.json``, settings).
- ``tools``: an MCP server's tools as turn-engine tools (``mcp__<server>__<tool>``).

The configuration and status records are :mod:`agentx.messages.mcp.config`,
:mod:`agentx.messages.mcp.status` and :mod:`agentx.messages.mcp.results`; the
event loop is the MCP manager actor's. An MCP tool goes through the same
permission path as a built-in. Importing the package imports none of these
modules (nor ``mcp``).
"""

__all__ = ["client", "prompt_tool", "sdk_channel", "search", "start", "tools"]
