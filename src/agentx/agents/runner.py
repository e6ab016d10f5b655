"""The ``Agent`` tool: a subagent's own loop in the parent's turn (DEC-TURN-3).

:class:`AgentTool` is one of the engine's own tools (offered as ``Agent``,
answered as ``Task`` too). The turn engine hands it the running turn's
state (``run_in_turn``), and it runs the subagent in the same session, on
the same thread, with the engine's own pieces over a context of its own:

- its history starts empty: the subagent sees only the prompt it was given
  (and what a ``SubagentStart`` hook adds);
- its system prompt is its definition's prompt, then the environment block
  (and ``appendSubagentSystemPrompt`` when the SDK sent one);
- its tools are its parent's tools its definition allows
  (:func:`agentx.messages.agents.tools.allows`): never more than its parent,
  never the ``Agent`` tool (nesting stops at one level); a call to any other
  tool is answered "No such tool available" like any unknown tool;
- its model is its definition's, resolved within the selected provider
  (``inherit`` or none: the session's); a model the provider does not serve
  falls back to the session's with one WARN line;
- its permission asks go through the session's one policy and gate (one
  ``can_use_tool`` request per ask, unchanged);
- its records reach the parent's stream tagged with the ``Agent`` tool use's
  id (:mod:`agentx.messages.agents.records`); its usage and cost join the
  turn's result and its ``task_notification``;
- the turn's interrupt reaches it: a cancelled model call or tool ends it,
  its notification says ``stopped``, and the parent turn ends as an
  interrupted turn does (WIRE-011);
- in the background (``run_in_background`` or its definition's
  ``background``) it runs as a task of the session's task table
  (:class:`BackgroundAgent`, ``stop_task`` reaches it); its notification
  reaches the parent's model before the parent's turn ends
  (:mod:`agentx.messages.agents.loop`).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from agentx.agents.offer import ALIASES
from agentx.diagnostics import logger
from agentx.messages.accounting import TurnAccounting
from agentx.messages.agents import loop
from agentx.messages.agents import records as agent_records
from agentx.messages.agents.definitions import AgentDefinition
from agentx.messages.agents.tools import (
    AGENT_TOOL,
    AgentInputError,
    AgentRequest,
    allows,
    parse_request,
)
from agentx.messages.frozen import FrozenDict
from agentx.messages.records import Records
from agentx.messages.session_ledger import sidechain_entry
from agentx.messages.task_records import TaskNotificationStatus, task_usage
from agentx.providers.base import Cancelled, Message, TextBlock, ToolSpec
from agentx.sessions.history import History
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import (
    AgentSetup,
    HookPort,
    PermissionAsk,
    PermissionGate,
    PermissionOutcome,
    PermissionPolicy,
    ProgressWatch,
    ToolRunner,
    WorkLauncher,
)
from agentx.turns.model_call import ModelCaller
from agentx.turns.results import SessionSpend, TurnState
from agentx.turns.session import LivePrompt, ToolTable, TurnSession
from agentx.turns.tool_calls import ToolCalls

if TYPE_CHECKING:
    from concurrent.futures import Future


class SubagentHooks:
    """The session's hooks as a subagent fires them: every input carries
    ``agent_id`` and ``agent_type`` (Claude Code's BaseHookInput)."""

    def __init__(self, hooks: HookPort, agent_id: str, agent_type: str) -> None:
        self._hooks = hooks
        self._who = {"agent_id": agent_id, "agent_type": agent_type}

    @property
    def start_source(self) -> str:
        return self._hooks.start_source

    def fire(
        self, event: str, fields: Mapping[str, Any], *, cancelled: Callable[[], bool] = bool
    ) -> Any:
        return self._hooks.fire(event, {**fields, **self._who}, cancelled=cancelled)


class SubagentGate:
    """The session's permission gate as a subagent asks through it: each ask
    names the subagent, for its PermissionRequest hooks' input (DEC-HOOK-2)."""

    def __init__(self, gate: PermissionGate, agent_id: str, agent_type: str) -> None:
        self._gate = gate
        self._agent = (agent_id, agent_type)

    def ask(self, ask: PermissionAsk) -> Future[PermissionOutcome]:
        return self._gate.ask(replace(ask, agent=self._agent))

    def ask_network(
        self, host: str, port: int, *, cancel: CancelScope
    ) -> Future[PermissionOutcome]:
        return self._gate.ask_network(host, port, cancel=cancel)


class AgentCatalog:
    """The definitions in force and the per-session subagent options."""

    def __init__(
        self,
        definitions: Mapping[str, AgentDefinition],
        *,
        forward_text: bool,
        append_prompt: str | None,
    ) -> None:
        self.definitions = dict(definitions)
        self.forward_text = forward_text
        self.append_prompt = append_prompt


class AgentTool:
    """The ``Agent`` tool of one session's engine (see the module docstring)."""

    name = AGENT_TOOL
    aliases = ALIASES
    #: Starting a subagent touches nothing; each of its tool uses is asked
    #: for on its own (DEC-PERM-MODE).
    read_only = True

    def __init__(
        self,
        *,
        session: TurnSession,
        policy: PermissionPolicy,
        setup: AgentSetup,
        catalog: AgentCatalog,
        spec: ToolSpec,
    ) -> None:
        """``spec`` is the one the session's :class:`~agentx.agents.offer.AgentOffer`
        offered, listing ``catalog``'s definitions."""
        self._s = session
        self._policy = policy
        self._setup = setup
        self._catalog = catalog
        self._warned_models: set[str] = set()
        #: Background runs whose notification has not reached the parent yet.
        self._background: list[BackgroundAgent] = []
        self.spec = spec

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        kind = tool_input.get("subagent_type") or "general-purpose"
        return f"{kind}: {tool_input.get('description', '')}"

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        """Never called: the engine runs this tool inside the turn (``run_in_turn``)."""
        return "Agent: runs only inside a turn", True

    def run_in_turn(
        self, tool_input: FrozenDict, scope: CancelScope, *, tool_use_id: str, turn: TurnState
    ) -> tuple[str, bool]:
        try:
            request = parse_request(tool_input, self._catalog.definitions)
        except AgentInputError as exc:
            return f"Agent: invalid input: {exc}", True
        definition = self._catalog.definitions[request.subagent_type]
        launcher = self._s.ports.tasks
        background = (request.run_in_background or definition.background) and launcher is not None
        run = SubagentRun(
            parent=self._s,
            policy=self._policy,
            definition=definition,
            request=request,
            tool_use_id=tool_use_id,
            model=self._model(definition),
            setup=self._setup,
            catalog=self._catalog,
            background=background,
        )
        if background and launcher is not None:
            return self._launch(run, request, launcher)
        return run.run(turn, scope)

    def _launch(
        self, run: SubagentRun, request: AgentRequest, launcher: WorkLauncher
    ) -> tuple[str, bool]:
        """A background run (DEC-TURN-3, DEC-TURN-5): started on a task of
        its own; the tool answers at once."""
        running = sum(1 for agent in self._background if not agent.done)
        if not loop.may_start_background(running):
            return (
                f"Agent: {loop.MAX_BACKGROUND} background agents are already running; "
                "wait for their notifications or run this one in the foreground",
                True,
            )
        agent = BackgroundAgent(run, request.description)
        run.announce(background=True)
        try:
            launcher.start_work(
                task_id=run.agent_id,
                description=request.description,
                tool_use_id=run.tool_use_id,
                task_type=agent_records.LOCAL_AGENT,
                timeout=loop.BACKGROUND_SECONDS,
                work=agent.work,
            )
        except OSError as exc:
            run.abandon()
            return f"Agent: cannot start in the background: {exc}", True
        self._background.append(agent)
        return agent_records.launched_text(run.agent_id, request.description), False

    def notices(self, turn: TurnState, scope: CancelScope, *, wait: bool) -> list[str]:
        """The notifications of the background subagents that finished (all
        of them with ``wait``: the parent is about to end its turn); each
        one's usage joins ``turn``. An interrupt stops the ones still running."""
        if wait and scope.is_set():
            self.stop_background()
        texts: list[str] = []
        for agent in tuple(self._background):
            if wait and not scope.is_set():
                agent.wait(scope, loop.BACKGROUND_SECONDS + 5.0)
            if not agent.done:
                continue
            self._background.remove(agent)
            if agent.state is not None:
                join(turn, agent.state)
            agent.run.join_spend(self._s.spend)
            agent.run.store(self._s.history)
            texts.append(agent.notice())
        return texts

    def stop_background(self) -> None:
        """Stop every background subagent still running (an interrupt)."""
        launcher = self._s.ports.tasks
        for agent in self._background:
            if not agent.done and launcher is not None:
                launcher.stop(agent.run.agent_id)

    def _model(self, definition: AgentDefinition) -> str:
        """DEC-CLI-5: the definition's model within the selected provider."""
        live = self._s.ports.live_model
        session_model = live() if live is not None else self._s.config.model
        if definition.model is None:
            return session_model
        model = self._setup.resolve_model(definition.model)
        if model is not None:
            return model
        if definition.name not in self._warned_models:
            self._warned_models.add(definition.name)
            logger.warning(
                "agent {!r}: the selected provider does not serve its model; "
                "it runs on the session's model",
                definition.name,
            )
        return session_model


class _TaggedSink:
    """The subagent's records, as its parent's stream shows them."""

    def __init__(self, emit: Callable[[Records], None], parent: str, forward_text: bool) -> None:
        self._emit = emit
        self._parent = parent
        self._forward = forward_text
        #: The tool uses its model calls asked for, for its usage.
        self.tool_uses = 0
        self.last_tool: str | None = None

    def __call__(self, records: Records) -> None:
        for record in records:
            if record.get("type") == "assistant" and record.get("parent_tool_use_id") is None:
                for block in record["message"]["content"]:
                    if block.get("type") == "tool_use":
                        self.tool_uses += 1
                        self.last_tool = block.get("name")
        shown = agent_records.tagged(
            records, parent_tool_use_id=self._parent, forward_text=self._forward
        )
        if shown:
            self._emit(shown)


class _Sidechain:
    """The subagent's transcript: its message entries, kept until the parent
    stores them (a :class:`~agentx.sessions.history.TranscriptSink`)."""

    def __init__(self) -> None:
        self._entries: list[Mapping[str, Any]] = []

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        self._entries.extend(entries)

    def sync(self) -> bool:
        return True

    def start_new(self, session_id: str) -> None:
        """A subagent never starts a new session."""

    def close(self) -> None:
        """Nothing to close."""

    def take(self) -> list[Mapping[str, Any]]:
        entries, self._entries = self._entries, []
        return entries


class SubagentRun:
    """One run of a subagent (see the module docstring)."""

    def __init__(
        self,
        *,
        parent: TurnSession,
        policy: PermissionPolicy,
        definition: AgentDefinition,
        request: AgentRequest,
        tool_use_id: str,
        model: str,
        setup: AgentSetup,
        catalog: AgentCatalog,
        background: bool = False,
    ) -> None:
        self.agent_id = "a" + uuid.uuid4().hex[:16]
        self.tool_use_id = tool_use_id
        self._parent = parent
        self._definition = definition
        self._request = request
        self._tool_use_id = tool_use_id
        self._setup = setup
        ports = parent.ports
        self._sink = _TaggedSink(ports.emit, tool_use_id, catalog.forward_text)
        self._sidechain = _Sidechain()
        hooks = ports.hooks
        self._hooks = (
            SubagentHooks(hooks, self.agent_id, definition.name) if hooks is not None else None
        )
        cfg = parent.config
        system = definition.prompt.strip()
        for part in (setup.environment, catalog.append_prompt):
            if part:
                system = f"{system}\n\n{part}" if system else part
        self._limit = loop.turn_limit(definition.max_turns, cfg.max_turns)
        config = replace(
            cfg,
            model=model,
            system_prompt=system,
            first_context=None,
            max_turns=self._limit,
            json_schema=None,
            memory=None,
            agents=None,
            include_partial_messages=cfg.include_partial_messages and catalog.forward_text,
        )
        prompt = LivePrompt(system, None)
        # Plan mode's instructions are the session's (``planModeInstructions``).
        prompt.plan_instructions = parent.prompt.plan_instructions
        self._s = TurnSession(
            config=config,
            prompt=prompt,
            provider=parent.provider,
            # Its model is fixed at its start (``inherit``: the session's then).
            ports=replace(
                ports,
                emit=self._sink,
                gate=SubagentGate(ports.gate, self.agent_id, definition.name),
                hooks=self._hooks,
                live_model=None,
                progress=_progress_through(ports.progress, self._sink),
            ),
            history=History(new_uuid=ports.message_ids, transcript=self._sidechain),
            identity=parent.identity,
            tools=_subagent_table(parent.tools, definition),
            # A background run keeps its own totals (its thread never touches
            # the session's); they join the session's with its notification.
            spend=SessionSpend(cfg.pricing) if background else parent.spend,
        )
        self._model = ModelCaller(self._s, policy)
        self._tool_calls = ToolCalls(self._s, policy)

    def new_state(self) -> TurnState:
        return TurnState(
            accounting=TurnAccounting(self._parent.config.pricing),
            started=self._parent.ports.clock(),
        )

    def run(self, turn: TurnState, scope: CancelScope) -> tuple[str, bool]:
        """A foreground run: the ``Agent`` tool's result; its usage joins
        ``turn``; raises :class:`Cancelled` on an interrupt."""
        st = self.new_state()
        self.announce(background=False)
        try:
            return self.execute(st, turn, scope)
        finally:
            join(turn, st)
            self.store(self._parent.history)

    def store(self, history: History) -> None:
        """DEC-STORE-1: its messages go into the parent's transcript as
        sidechain entries, in the batch of the parent's turn (called on the
        parent's thread)."""
        self._s.history.flush()
        for entry in self._sidechain.take():
            if entry.get("type") != "message":
                history.note(entry)  # its permission decisions: the session's ledger
                continue
            history.note(
                sidechain_entry(
                    entry,
                    agent_id=self.agent_id,
                    agent_type=self._definition.name,
                    parent_tool_use_id=self.tool_use_id,
                )
            )

    def join_spend(self, spend: SessionSpend) -> None:
        """A background run's totals join the session's (``/cost``), on the
        parent's thread."""
        own = self._s.spend
        if own is not spend:
            spend.accounting.absorb(own.accounting)
            spend.api_seconds += own.api_seconds
            own.reset()

    def abandon(self) -> None:
        """It could not start: its notification closes its ``task_started``."""
        self._parent.ports.emit((self._notification(self.new_state(), "failed"),))

    def announce(self, *, background: bool) -> None:
        """Its ``system/task_started`` (before the Agent tool's result)."""
        self._parent.ports.emit((self._task_started(background),))

    def execute(
        self, st: TurnState, turn: TurnState | None, scope: CancelScope
    ) -> tuple[str, bool]:
        """Run to its end: (the Agent tool's result text, is_error); its
        notification is written whatever happens. ``turn``: the parent's
        turn, whose spend counts in the budget (None: in the background)."""
        emit = self._parent.ports.emit
        status: TaskNotificationStatus = "failed"
        try:
            text, is_error = self._loop(st, turn, scope)
            status = "failed" if is_error else "completed"
        except Cancelled:
            status = "stopped"
            raise
        finally:
            emit((self._notification(st, status),))
        return (
            agent_records.result_text(
                text,
                agent_id=self.agent_id,
                total_tokens=_tokens(st),
                tool_uses=self._sink.tool_uses,
                duration_ms=self._elapsed_ms(st),
            ),
            is_error,
        )

    def _loop(self, st: TurnState, turn: TurnState | None, scope: CancelScope) -> tuple[str, bool]:
        contexts = self._start_hooks(scope)
        first = (TextBlock(text=self._request.prompt), *(TextBlock(text=c) for c in contexts))
        self._s.history.append(Message(role="user", content=first))
        continued = 0
        while True:
            if loop.at_turn_limit(st.num_turns, self._limit):
                return f"Agent stopped: reached maximum number of turns ({self._limit})", True
            st.num_turns += 1
            call = self._model.call(st, scope)
            self._model.emit_assistant(call)
            if call.error is not None:
                self._tool_calls.close_unrun(call.tool_calls, "Tool not run: the model call failed")
                return f"Agent failed: {call.error.category}: {call.error.message}", True
            budget = self._parent.config.max_budget_usd
            parent_cost = turn.accounting.total_cost_usd() if turn is not None else 0.0
            if loop.over_budget(budget, parent_cost, st.accounting.total_cost_usd()):
                self._tool_calls.close_unrun(call.tool_calls, "Tool not run: budget exhausted")
                return f"Agent stopped: reached maximum budget (${budget})", True
            if not call.tool_calls:
                text = call.text.joined()
                notes = self._stop_notes(st, text, scope)
                if loop.stop_continues(
                    notes=len(notes), continued=continued, calls=st.num_turns, limit=self._limit
                ):
                    continued += 1
                    st.stop_hook_active = True
                    feedback = "SubagentStop hook feedback:\n" + "\n".join(notes)
                    self._s.history.append(
                        Message(role="user", content=(TextBlock(text=feedback),))
                    )
                    continue
                return text, False
            self._tool_calls.run(call.tool_calls, st, scope)
            if scope.is_set():
                raise Cancelled
            self._parent.ports.emit((self._progress(st),))

    # -- hooks ----------------------------------------------------------------

    def _start_hooks(self, scope: CancelScope) -> tuple[str, ...]:
        """``SubagentStart``: its context reaches the subagent's first message."""
        hooks = self._parent.ports.hooks
        if hooks is None:
            return ()
        started = hooks.fire(
            "SubagentStart",
            {"agent_id": self.agent_id, "agent_type": self._definition.name},
            cancelled=scope.is_set,
        )
        return tuple(started.contexts)

    def _stop_notes(self, st: TurnState, text: str, scope: CancelScope) -> list[str]:
        """``SubagentStop``: a block's reasons and added context, if any."""
        hooks = self._parent.ports.hooks
        if hooks is None or scope.is_set():
            return []
        stop = hooks.fire(
            "SubagentStop",
            {
                "stop_hook_active": st.stop_hook_active,
                "agent_id": self.agent_id,
                "agent_transcript_path": self._setup.transcript_path(),
                "agent_type": self._definition.name,
                "last_assistant_message": text,
            },
            cancelled=scope.is_set,
        )
        if stop.stop or scope.is_set():
            return []
        return [*(stop.reasons if stop.blocked else ()), *stop.contexts]

    # -- accounting and records -------------------------------------------------

    def _elapsed_ms(self, st: TurnState) -> int:
        return max(0, int((self._parent.ports.clock() - st.started) * 1000))

    def _usage(self, st: TurnState) -> FrozenDict:
        return task_usage(
            duration_ms=self._elapsed_ms(st),
            total_tokens=_tokens(st),
            tool_uses=self._sink.tool_uses,
        )

    def _task_started(self, background: bool) -> FrozenDict:
        return agent_records.task_started(
            task_id=self.agent_id,
            description=self._request.description,
            subagent_type=self._definition.name,
            prompt=self._request.prompt,
            background=background,
            tool_use_id=self._tool_use_id,
            session_id=self._parent.session_id,
            uuid=self._parent.ports.new_uuid(),
        )

    def _progress(self, st: TurnState) -> FrozenDict:
        return agent_records.task_progress(
            task_id=self.agent_id,
            description=self._request.description,
            subagent_type=self._definition.name,
            usage=self._usage(st),
            last_tool_name=self._sink.last_tool,
            tool_use_id=self._tool_use_id,
            session_id=self._parent.session_id,
            uuid=self._parent.ports.new_uuid(),
        )

    def _notification(self, st: TurnState, status: TaskNotificationStatus) -> FrozenDict:
        return agent_records.task_notification(
            task_id=self.agent_id,
            description=self._request.description,
            status=status,
            output_file=self._setup.transcript_path(),
            usage=self._usage(st),
            tool_use_id=self._tool_use_id,
            session_id=self._parent.session_id,
            uuid=self._parent.ports.new_uuid(),
        )


def join(turn: TurnState, st: TurnState) -> None:
    """A subagent's usage, cost, time and denials join its parent turn's."""
    turn.accounting.absorb(st.accounting)
    turn.api_seconds += st.api_seconds
    turn.denials.extend(st.denials)


class BackgroundAgent:
    """A subagent running in the background (DEC-TURN-3, DEC-TURN-5): its
    outcome waits here until its parent's loop takes it."""

    def __init__(self, run: SubagentRun, description: str) -> None:
        self.run = run
        self.description = description
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._wakers: list[threading.Event] = []
        self.text = ""
        self.status: TaskNotificationStatus = "failed"
        self.state: TurnState | None = None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def work(self, scope: CancelScope) -> bool:
        """Runs on the task's thread (the actor layer's)."""
        st = self.run.new_state()
        try:
            text, is_error = self.run.execute(st, None, scope)
            self.text, self.status = text, "failed" if is_error else "completed"
        except Cancelled:
            self.text, self.status = "The agent was stopped before it finished.", "stopped"
        finally:
            self.state = st
            with self._lock:
                self._done.set()
                wakers, self._wakers = self._wakers, []
            for waker in wakers:
                waker.set()
        return self.status == "completed"

    def wait(self, scope: CancelScope, timeout: float) -> None:
        """Until it is done, ``scope`` is cancelled or ``timeout`` passes."""
        wake = threading.Event()
        with self._lock:
            if self._done.is_set():
                return
            self._wakers.append(wake)
        scope.on_cancel(wake.set)
        wake.wait(timeout)

    def notice(self) -> str:
        return agent_records.notification_text(
            agent_id=self.run.agent_id,
            description=self.description,
            status=self.status,
            result=self.text,
        )


def _progress_through(progress: ProgressWatch, sink: Callable[[Records], None]) -> ProgressWatch:
    """The session's tool-progress watch writing through the subagent's
    sink, when it can (the actor layer's watch can: ``to``)."""
    rebind = getattr(progress, "to", None)
    return progress if rebind is None else rebind(sink)


def _tokens(st: TurnState) -> int:
    """Every token of its model calls: input (cached or not) and output."""
    total = st.accounting.total
    return (
        total.input_tokens
        + total.output_tokens
        + total.cache_creation_input_tokens
        + total.cache_read_input_tokens
    )


def _subagent_table(parent: ToolTable, definition: AgentDefinition) -> ToolTable:
    """The parent's tools the definition allows: the built-ins now, the live
    MCP tools as they come and go (never the engine's own ``Agent``)."""
    static = tuple(tool for tool in parent.static_tools if allows(definition, tool.name))
    live_source = parent.live_tools

    def live() -> Sequence[ToolRunner]:
        if live_source is None:
            return ()
        return tuple(tool for tool in live_source() if allows(definition, tool.name))

    return ToolTable(static, live if live_source is not None else None)


def build_agent_tool(
    *,
    session: TurnSession,
    policy: PermissionPolicy,
    setup: AgentSetup,
    definitions: Mapping[str, AgentDefinition],
    spec: ToolSpec,
    forward_text: bool,
    append_prompt: str | None,
) -> AgentTool:
    """The session's ``Agent`` tool over the definitions in force (their
    precedence: :mod:`agentx.messages.agents.definitions`), offered with
    ``spec`` (:class:`~agentx.agents.offer.AgentOffer` builds both)."""
    catalog = AgentCatalog(definitions, forward_text=forward_text, append_prompt=append_prompt)
    return AgentTool(session=session, policy=policy, setup=setup, catalog=catalog, spec=spec)


__all__ = ["AgentTool", "SubagentHooks", "SubagentRun", "build_agent_tool"]
