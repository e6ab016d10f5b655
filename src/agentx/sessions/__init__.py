"""The durable session: its store, its conversation and what a resume rebuilds.

Concept map:

Opening and storing the session
- ``store``: the session stores, local files and PostgreSQL (DEC-STORE-1).
- ``setup``: opening the session before the protocol starts (WIRE-025, DEC-AUTH-5).
- ``identity``: the session id outbound records carry, renewed by ``/clear`` (DEC-COMPAT-2).
- ``info``: ``system/init`` and the ``initialize`` response (WIRE-016, WIRE-023, WIRE-024).
- ``mirror``: ``--session-mirror``, the transcript's entries mirrored to the client (DEC-STORE-1).

The conversation
- ``transcript``: conversation messages <-> durable transcript entries.
- ``history``: the conversation of one session, with transcript ids.
- ``pairing``: every tool use answered by exactly one tool result (spec "Ordering").
- ``prior_context``: replayed ``assistant``/``user`` records seeding the conversation.
- ``compaction``: running a compaction's summary request against the provider (WIRE-005).
- ``event_log``: the session's internal-event log.

Importing the package imports none of these modules.
"""

__all__ = [
    "compaction",
    "event_log",
    "history",
    "identity",
    "info",
    "mirror",
    "pairing",
    "prior_context",
    "setup",
    "store",
    "transcript",
]
