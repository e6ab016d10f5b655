"""Thin pykka actor shells around the cores in :mod:`agentx.messages`.

The one-prompt path (DESIGN.md "The actors"; the host's start steps are
:mod:`agentx.actors.host_output`, the writer and ``system/init``, then, imported
only once that record is with the writer, :mod:`agentx.actors.host_steps` and
:mod:`agentx.actors.host_turns`)::

    stdin -> ReaderActor: frames, decodes (WIRE-014/021), and on its own
             thread the Router hands each record to its owner
          -> TurnRunnerActor (Submit): the prompt queue; its worker thread
             ``agentx-turns`` runs the TurnEngine
          -> provider stream, tools (child process groups: ChildProcesses),
             permission asks: ArbiterGate -> PermissionArbiterActor (hooks)
             -> ControlBroker -> can_use_tool on stdout; the host's
             control_response comes back Reader -> Router -> ControlBroker
          -> TurnOutput -> WriterSink -> WriterActor: the output guard, the
             transcript's sync barrier, stdout; ``result``, then ``idle``
    EOF   -> SupervisorActor (InputEOF): the broker's and uploads' EOF hooks,
             then the runner (InputClosed); once drained it reports
             RunnerDrained to the ExitLatch
    ExitLatch (:mod:`agentx.actors.supervision`): the root of the supervision
             tree. The drain, the writer's latched failure, every actor's
             ``on_failure`` (:class:`agentx.actors.base.Actor`), an uncaught
             exception in an ``agentx-*`` thread and a signal
             (:mod:`agentx.actors.signals`) each end the session as one
             message; the host's main thread then runs the one ordered
             shutdown under one deadline (:mod:`agentx.actors.shutdown`).

Who may block on whom. A blocking ``.get()`` is allowed only towards a party
that never waits on the caller, so no cycle can form, and every one has a
deadline (DECISIONS section 8), ``ASK_SECONDS`` unless injected. Through
:func:`agentx.actors.base.answer_within` (the broker's and the MCP manager's
handles, the supervisor's asks) an answer that does not come in time is the
silent party's failure (exit 4, one ERROR line) and the asker fails closed:

- the Router (reader thread) asks the UploadManagerActor (deadline
  ``ASK_SECONDS``); control requests go to the SupervisorActor with a
  non-blocking ask; only in the ``sdk`` profile does the reader wait for
  that answer (deadline ``ASK_SECONDS``) before it carries a prompt
  (DEC-PROFILE-2), so the supervisor must never wait for a record the
  reader would bring (an ``initialize`` field handler never waits for a
  client's ``control_response``);
- the SupervisorActor asks the TurnRunnerActor (``cancel_async_message``)
  and the McpManagerActor (the ``mcp_*`` requests); neither asks the
  supervisor, and an expired ask is answered with a control error;
- the ``agentx-turns`` worker (not an actor) may wait on the arbiter, the
  broker and the upload manager; none of them waits on the runner;
- the PermissionArbiterActor and the runner call the ControlBroker, which
  returns once its records are handed to the writer; the broker answers a
  settlement by *telling* the arbiter (``HostSettled``), never by waiting; a
  permission ask the broker does not take in time is denied;
- the WriterActor waits on nothing but stdout and the transcript's sync;
- only the host's main thread, during the shutdown, waits on every party,
  each with what is left of the one deadline.

Concept map:

The host
- ``host``: Host, runs one session's actor system and returns its exit status.
- ``host_output``: the first start step, the writer and ``system/init`` (DEC-CLI-3).
- ``host_steps``: the later start steps, in order: control, supervisor, input.
- ``host_turns``: the third start step, the turns.
- ``host_wiring``: the host's glue between actors, each a named piece instead of a closure.
- ``initialize_fields``: the one registry of the ``initialize`` fields the ``sdk`` profile applies.
- ``initialize_wait``: ``--await-initialize``: prompts held until ``initialize``, with a deadline.
- ``embedded``: the threads behind the embedding API (:mod:`agentx.embed`).

The actors
- ``base``: the inbox and the supervision every agentx actor uses.
- ``reader``: ReaderActor, owns stdin: frames, decodes and routes (WIRE-014/021).
- ``writer``: WriterActor, the only owner of stdout (WIRE-003, WIRE-013, WIRE-015).
- ``stream_window``: StreamWindow, the bound on ``stream_event`` records waiting for stdout.
- ``broker``: ControlBrokerActor, the shell around the control correlation core (WIRE-009).
- ``supervisor``: SupervisorActor, the serial control dispatcher and the end of input.
- ``turn_runner``: TurnRunnerActor, the prompt queue and the agent loop (DEC-TURN-1/2).
- ``arbiter``: PermissionArbiterActor, the host answer / hook race (WIRE-PERM-001..004).
- ``upload_manager``: UploadManagerActor, the shell around the upload lifecycle core.
- ``mcp_manager``: McpManagerActor, MCP servers behind one actor and one event loop.
- ``mcp_deferred``: DeferredMcp, the sdk profile's MCP manager started on first use (DEC-CLI-3).

The turn side's threads
- ``arbiter_gate``: ArbiterGate, the turn engine's permission gate over the arbiter.
- ``hook_callbacks``: SDK callback hooks as ``hook_callback`` requests through the broker.
- ``turn_output``: TurnOutput, the turn side's one ordered output (WIRE-004, WIRE-010/011).
- ``task_manager``: background tasks, the thread shell around the TaskBoard (DEC-TURN-5).

How a session ends
- ``supervision``: ExitLatch, the root of the supervision tree (DECISIONS section 8).
- ``signals``: the CLI's signal gate: SIGINT, SIGTERM and SIGHUP end the session.
- ``shutdown``: the one ordered shutdown of a session, under one deadline.

Importing the package imports none of these modules (nor pykka).
"""

__all__ = [
    "arbiter",
    "arbiter_gate",
    "base",
    "broker",
    "embedded",
    "hook_callbacks",
    "host",
    "host_output",
    "host_steps",
    "host_turns",
    "host_wiring",
    "initialize_fields",
    "initialize_wait",
    "mcp_deferred",
    "mcp_manager",
    "reader",
    "shutdown",
    "signals",
    "stream_window",
    "supervision",
    "supervisor",
    "task_manager",
    "turn_output",
    "turn_runner",
    "upload_manager",
    "writer",
]
