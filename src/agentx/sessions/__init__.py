"""The durable session: its store, its conversation and what a resume rebuilds.

Concept map:

- ``store``: where a session's header and transcript live, behind one
  interface with two backends, local files (``store.files``, the default)
  and PostgreSQL (``store.postgres``); ``agentx sessions list|copy``
  (DEC-STORE-1).
- ``setup``: opening the session before the protocol starts: create, or
  ``--resume``/``--continue`` bound to the frozen provider selection
  (WIRE-025, DEC-AUTH-5), and the transcript the turn engine writes through.
- ``transcript``: conversation messages <-> durable transcript entries.
- ``history``: the conversation of one session, with transcript ids.
- ``compaction``: running a compaction's summary request against the provider.
- ``prior_context``: replayed ``assistant``/``user`` records seeding the
  conversation.
- ``event_log``: the session's internal-event log.
- ``identity``: the session id outbound records carry, renewed by ``/clear``
  (DEC-COMPAT-2).
- ``info``: ``system/init`` and the ``initialize`` response (WIRE-016,
  WIRE-023, WIRE-024).

Importing the package imports none of these modules.
"""

__all__ = [
    "compaction",
    "event_log",
    "history",
    "identity",
    "info",
    "prior_context",
    "setup",
    "store",
    "transcript",
]
