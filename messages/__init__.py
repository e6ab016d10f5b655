"""Sans-IO protocol cores: records, codec, framer, guard and state machines.

No IO, no threads, no clock reads (time comes in as an argument), no logging
sinks; nothing here imports agentx outside this package
(tests/unit/test_import_direction.py). Modules that share a concept share a
name prefix, so a listing reads as a map:

- Values: ``frozen`` (frozen JSON values), ``strict_json`` (the one strict
  JSON decoder), ``closed`` (the one closed-member check), ``raw_json``
  (pre-encoded fragments), ``records`` (``Records``, ``Emit``, ``RecordSink``:
  the outbound record vocabulary).
- The wire in: ``framing`` (bytes to lines), ``decode`` (strict record
  decoding), ``inbound*`` (input records and their closed schemas),
  ``routing`` (which actor owns a record), ``dispatch`` (the control
  dispatcher's decisions).
- The wire out: ``encode`` (the encoder), ``outbound*`` (the ordinary output
  records), ``guard`` and ``stream_guard`` (credential validation), ``record_limit``
  (the clients' line limit), ``output_modes`` (what each ``--output-format``
  writes), ``schema*`` (the published record schema).
- Sessions and control: ``control`` (request correlation), ``session_state``
  (idle / running / requires_action), ``prompt_queue`` (prompt admission).
- Permissions: ``permission_*`` (rules and modes, the permission race, the
  ``can_use_tool`` wire catalog), ``bash_*`` (Bash rules on the parsed
  command line).
- Turns: ``accounting`` and ``pricing`` (usage and cost), ``compaction``,
  ``context_usage``, ``slash_commands``, ``post_turn_summary``, ``tasks``
  (background tasks).
- Attachments: ``attachments``, ``uploads*``.
- MCP: ``mcp_*`` (configuration, the server table, tool results).

Importing the package imports none of these modules.
"""
