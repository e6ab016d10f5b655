"""Sans-IO protocol cores: records, codec, framer, guard and state machines.

No IO, no threads, no clock reads (time comes in as an argument), no logging
sinks; nothing here imports agentx outside this package
(tests/unit/test_import_direction.py). Modules that share a concept share a
name prefix, so a listing reads as a map. Concept map:

Values and the wire codec
- ``frozen``: frozen JSON values (FrozenDict, tuples) every record is built from.
- ``records``: Records, Emit (write these records, in order) and RecordSink (WIRE-003).
- ``strict_json``: the one strict JSON decoder (duplicates, NaN, overflow; WIRE-014).
- ``closed``: the one closed-member check and its JSON Schema form (WIRE-021).
- ``framing``: inbound NDJSON framing, bytes in, physical lines out.
- ``decode``: a framed line to its inbound record, and the fatal cases (WIRE-001/014).
- ``routing``: which actor owns each decoded inbound record.
- ``encode``: the outbound record encoder (WIRE-013).
- ``raw_json``: pre-encoded JSON fragments spliced into outbound records.
- ``guard``: the output guard, whole-record credential validation (WIRE-013/015).
- ``stream_guard``: the stream-aware output guard (DEC-AUTH-6).
- ``record_limit``: every stdout record under the clients' 1 MiB line limit (DEC-COMPAT-3).

Inbound records
- ``inbound``: SchemaViolation, identifier grammars, closed checks, the small record kinds.
- ``inbound_user``: the ``user`` record (WIRE-017, DEC-ALIAS-1).
- ``inbound_control``: ``control_request`` and ``control_response`` (WIRE-009, WIRE-PERM-040).
- ``inbound_import``: ``attachment_import`` (WIRE-018).

Outbound records
- ``outbound``: builders of the ordinary outbound records.
- ``task_records``: ``system/task_started``, ``task_progress``, ``task_notification``.
- ``post_turn_summary``: ``system/post_turn_summary`` from one turn's facts.
- ``output_modes``: what each ``--output-format`` writes (DECISIONS section 9).
- ``accounting``: usage and cost of one turn (WIRE-012).
- ``pricing``: provider prices (WIRE-012, DEC-AUTH-2).
- ``context_usage``: ``get_context_usage`` data.

The published schema
- ``schema``: the published record schema document, outbound definitions.
- ``schema_inbound``: its inbound half, built from the decoder's own tables.
- ``schema_inbound_control``: the control records' definitions and REQUESTS.
- ``schema_inbound_forms``: the ``$defs`` prefix, references, grammars, open envelopes.

Control and session state
- ``control``: control request correlation, the control broker's core (WIRE-009).
- ``dispatch``: the inbound control dispatcher's decisions.
- ``profiles``: the control profiles and how one is chosen (DEC-PROFILE-1/2).
- ``user_agent``: the provider requests' User-Agent, with the SDK application's name.
- ``user_questions``: ``AskUserQuestion``'s bounds and the answers the model reads.
- ``skills``: a SKILL.md read into a skill, the ``skills`` allowlist and an invocation.
- ``mode_notes``: what the model is told about the permission mode (plan mode).
- ``initialize``: the ``sdk`` profile's ``initialize``: the SDKs' fields, applied or refused.
- ``initialize_hold``: ``--await-initialize``: prompts held until ``initialize``, bounded.
- ``memory_block``: the memory files as one system-reminder block for the model (DEC-SET-1).
- ``mentions``: ``@file`` mentions in a prompt and what a read one attaches (DEC-PROFILE-2).
- ``checkpoints``: file checkpoints and ``rewind_files``: what to keep, bounds, the plan.
- ``structured_output``: ``--json-schema`` schema checks, verdicts and retry counting (DEC-CLI-5).
- ``system_prompt``: the built-in system prompt: identity, tool guidance, environment (DEC-CLI-5).
- ``session_state``: idle / running / requires_action (DEC-TURN-2, WIRE-004).
- ``session_ledger``: each turn's transcript record: times, usage, cost (DEC-STORE-1).
- ``prompt_queue``: the prompt admission queue (DEC-TURN-1, WIRE-020).
- ``slash_commands``: slash commands in user text.
- ``compaction``: compaction decisions and resume relinking (WIRE-005).
- ``tasks``: the background task table and its ordering decisions (DEC-TURN-3/5).
- ``transcript_shape``: the shape of a stored transcript entry, checked at resume (DEC-STORE-1).
- ``transcript_mirror``: the ``transcript_mirror`` frame and the SDKs' project key (DEC-STORE-1).
- ``resume_point``: where ``--resume-session-at`` cuts, ``--resume-drops-turn``'s check (DEC-CLI-5).
- ``turn_order``: one ordered list for interrupts and after the result (WIRE-004/011).

Permissions
- ``permission_rules``: the rule grammar, modes, and what one rule matches (DEC-SET-2).
- ``path_rules``: path rules, Claude Code's gitignore-style grammar (DEC-PERM-PATH).
- ``permission_decisions``: evaluate and admit_path, the DEC-PERM-MODE order.
- ``permission_updates``: session updates to the rules and mode (WIRE-PERM-022).
- ``permission_wire``: the ``can_use_tool`` wire catalog (DECISIONS section 2).
- ``permission_race``: the host answer / hook race for one tool use.
- ``bash``: the Bash line parsed: simple commands, wrappers, shells, rules, summary.
- ``sandbox_policy``: the sandbox settings and the one write policy of Bash and the file tools.

Attachments and uploads
- ``attachment_limits``: the attachment limits and the advertised ``input_capabilities``.
- ``attachments``: manifests, reason codes, prompt correlation.
- ``uploads``: the upload lifecycle core, UploadCore (WIRE-018/019).
- ``upload_lifecycle``: its transition table, effects and lifecycle state.
- ``upload_wire``: name and chunk checks, and the two upload records (WIRE-019).

Hooks
- ``hooks``: hook events, definitions, verdicts and their combination (DECISIONS section 3).

Subagents
- ``agents``: agent definitions, a subagent's tools, loop bounds and records (DEC-TURN-3).

MCP
- ``mcp``: MCP servers' configuration and sources, their table, results, SDK channel, ToolSearch.

Child processes
- ``process_tree``: the processes below agentx, and which orphans to reap (DEC-EXIT-1).

Importing the package imports none of these modules.
"""

__all__ = [
    "accounting",
    "agents",
    "attachment_limits",
    "attachments",
    "bash",
    "checkpoints",
    "closed",
    "compaction",
    "context_usage",
    "control",
    "decode",
    "dispatch",
    "encode",
    "framing",
    "frozen",
    "guard",
    "hooks",
    "inbound",
    "inbound_control",
    "inbound_import",
    "inbound_user",
    "initialize",
    "initialize_hold",
    "mcp",
    "memory_block",
    "mentions",
    "mode_notes",
    "outbound",
    "output_modes",
    "path_rules",
    "permission_decisions",
    "permission_race",
    "permission_rules",
    "permission_updates",
    "permission_wire",
    "post_turn_summary",
    "pricing",
    "process_tree",
    "profiles",
    "prompt_queue",
    "raw_json",
    "record_limit",
    "records",
    "resume_point",
    "routing",
    "sandbox_policy",
    "schema",
    "schema_inbound",
    "schema_inbound_control",
    "schema_inbound_forms",
    "session_ledger",
    "session_state",
    "skills",
    "slash_commands",
    "stream_guard",
    "strict_json",
    "structured_output",
    "system_prompt",
    "task_records",
    "tasks",
    "transcript_mirror",
    "transcript_shape",
    "turn_order",
    "upload_lifecycle",
    "upload_wire",
    "uploads",
    "user_agent",
    "user_questions",
]
