"""Turns: the agent loop of one session and what it runs with (DEC-TURN-1..5).

Concept map:

The loop
- ``engine``: TurnEngine, model calls and tool uses until the turn's one ``result``.
- ``model_call``: one model call and its ``assistant`` record (WIRE-012).
- ``tool_calls``: the permission asks and tool runs of one model call (hard-interrupt order).
- ``results``: a turn's accumulated state, its ``result``, the spend, the input-error result.
- ``structured``: the ``--json-schema`` StructuredOutput tool and its answers.
- ``cancel``: CancelScope, the cancellation of a turn (WIRE-010).

Around the loop
- ``session``: what the pieces of one session's engine share, and a call's tool table.
- ``contracts``: what the engine needs from its collaborators, every callback into the host.
- ``compactor``: the automatic compaction trigger and the ``/compact`` run (WIRE-005).
- ``local_commands``: the slash commands, each a turn of its own.
- ``suggestions``: the prompt suggestion after a result (``--prompt-suggestions``).
- ``mentions``: ``@file`` mentions read into an sdk-profile prompt through the Read tool.
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
    "mentions",
    "model_call",
    "results",
    "session",
    "structured",
    "suggestions",
    "tool_calls",
]
