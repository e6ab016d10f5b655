"""Thin pykka actor shells around the cores in :mod:`agentx.messages`.

The only place threads start. Each actor owns one core plus the IO it needs:

- ``reader``: stdin, framing and routing; ``writer``: the only owner of
  stdout (validated bytes, the session store's sync barrier).
- ``broker``: outbound control request correlation; ``arbiter``: the
  permission race between ``can_use_tool`` and the permission hook.
- ``turn_runner`` and ``turn_output``: the prompt queue and the agent loop;
  ``task_manager``: background Bash tasks; ``upload_manager``: attachment
  imports; ``mcp_manager``: MCP servers on one event loop.
- ``supervisor``: the inbound control dispatcher, session state and failure
  fan-in; ``host`` and ``host_wiring``: start order and the glue between
  actors; ``base``: the shared inbox; ``embedded``: the threads behind
  :mod:`agentx.embed`.
"""
