"""Turns: the agent loop of one session and what it runs with (DEC-TURN-1..5).

Concept map:

- ``engine``: ``TurnEngine``, the loop of one turn: model calls and tool uses
  until the turn's one ``result`` (DEC-TURN-1, DEC-TURN-4).
- ``model_call``: one model call and its ``assistant`` record.
- ``tool_calls``: the permission asks and tool runs of one model call, one
  ``tool_result`` per accepted tool-use id (spec hard-interrupt order).
- ``compactor``: the automatic compaction trigger and the ``/compact`` run
  (WIRE-005).
- ``local_commands``: the slash commands, each a turn of its own.
- ``session``: what those pieces share, and the tool table of a model call.
- ``results``: a turn's accumulated state, its ``result`` record, the
  session's spend and the input-error result.
- ``contracts``: what the engine needs from its collaborators: the
  ``PermissionAsk`` value and ``PermissionGate``, the policy, the tools, and
  ``EnginePorts``, every callback into the host.
- ``cancel``: ``CancelScope``, the cancellation of a turn (WIRE-010).
- ``suggestions``: the prompt suggestion after a result.
- ``background``: a Bash background command and its output file (DEC-TURN-5).

The turn runner actor drives the engine on its worker thread. Importing the
package imports none of these modules.
"""

__all__ = [
    "background",
    "cancel",
    "compactor",
    "contracts",
    "engine",
    "local_commands",
    "model_call",
    "results",
    "session",
    "suggestions",
    "tool_calls",
]
