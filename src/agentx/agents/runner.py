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
- its messages are stored in the session's transcript as sidechain entries
  (:mod:`agentx.sessions.sidechain`), never replayed into the parent's
  history.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from msgspec.structs import replace

from agentx.diagnostics import logger
from agentx.messages.accounting import TurnAccounting
from agentx.messages.agents import loop
from agentx.messages.agents import records as agent_records
from agentx.messages.agents.definitions import AgentDefinition
from agentx.messages.agents.tools import (
    AGENT_TOOL,
    AGENT_TOOL_NAMES,
    INPUT_SCHEMA,
    AgentInputError,
    AgentRequest,
    allows,
    parse_request,
    tool_description,
)
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.records import Records
from agentx.messages.task_records import TaskNotificationStatus, task_usage
from agentx.providers.base import Cancelled, Message, TextBlock, ToolSpec
from agentx.sessions.history import History
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import AgentSetup, HookPort, PermissionPolicy, ToolRunner
from agentx.turns.model_call import ModelCaller
from agentx.turns.results import TurnState
from agentx.turns.session import LivePrompt, ToolTable, TurnSession
from agentx.turns.tool_calls import ToolCalls

#: The aliases the tool also answers to.
ALIASES: Final = tuple(sorted(AGENT_TOOL_NAMES - {AGENT_TOOL}))


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
    ) -> None:
        self._s = session
        self._policy = policy
        self._setup = setup
        self._catalog = catalog
        self._warned_models: set[str] = set()
        self.spec = ToolSpec(
            name=AGENT_TOOL,
            description=tool_description(catalog.definitions.values()),
            input_schema=freeze(INPUT_SCHEMA),
        )

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
        run = SubagentRun(
            parent=self._s,
            policy=self._policy,
            definition=definition,
            request=request,
            tool_use_id=tool_use_id,
            model=self._model(definition),
            setup=self._setup,
            catalog=self._catalog,
        )
        return run.run(turn, scope)

    def _model(self, definition: AgentDefinition) -> str:
        """DEC-CLI-5: the definition's model within the selected provider."""
        session_model = self._s.config.model
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
    ) -> None:
        self.agent_id = "a" + uuid.uuid4().hex[:16]
        self._parent = parent
        self._definition = definition
        self._request = request
        self._tool_use_id = tool_use_id
        self._setup = setup
        ports = parent.ports
        self._sink = _TaggedSink(ports.emit, tool_use_id, catalog.forward_text)
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
            ports=replace(ports, emit=self._sink, hooks=self._hooks),
            history=History(new_uuid=ports.message_ids),
            identity=parent.identity,
            tools=_subagent_table(parent.tools, definition),
            spend=parent.spend,
        )
        self._model = ModelCaller(self._s, policy)
        self._tool_calls = ToolCalls(self._s, policy)

    def run(self, turn: TurnState, scope: CancelScope) -> tuple[str, bool]:
        """The ``Agent`` tool's result; raises :class:`Cancelled` on an interrupt."""
        st = TurnState(
            accounting=TurnAccounting(self._parent.config.pricing),
            started=self._parent.ports.clock(),
        )
        emit = self._parent.ports.emit
        emit((self._task_started(),))
        status: TaskNotificationStatus = "failed"
        try:
            text, is_error = self._loop(st, turn, scope)
            status = "failed" if is_error else "completed"
        except Cancelled:
            status = "stopped"
            raise
        finally:
            self._join(turn, st)
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

    def _loop(self, st: TurnState, turn: TurnState, scope: CancelScope) -> tuple[str, bool]:
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
            if loop.over_budget(
                budget, turn.accounting.total_cost_usd(), st.accounting.total_cost_usd()
            ):
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

    def _join(self, turn: TurnState, st: TurnState) -> None:
        """Its usage, cost, time and denials join the parent turn's."""
        turn.accounting.absorb(st.accounting)
        turn.api_seconds += st.api_seconds
        turn.denials.extend(st.denials)

    def _elapsed_ms(self, st: TurnState) -> int:
        return max(0, int((self._parent.ports.clock() - st.started) * 1000))

    def _usage(self, st: TurnState) -> FrozenDict:
        return task_usage(
            duration_ms=self._elapsed_ms(st),
            total_tokens=_tokens(st),
            tool_uses=self._sink.tool_uses,
        )

    def _task_started(self) -> FrozenDict:
        return agent_records.task_started(
            task_id=self.agent_id,
            description=self._request.description,
            subagent_type=self._definition.name,
            prompt=self._request.prompt,
            background=False,
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
    sdk_agents: tuple[AgentDefinition, ...],
    forward_text: bool,
    append_prompt: str | None,
) -> AgentTool:
    """The session's ``Agent`` tool over the definitions in force (their
    precedence: :mod:`agentx.messages.agents.definitions`)."""
    from agentx.messages.agents.definitions import GENERAL_PURPOSE, combine  # noqa: PLC0415

    files = setup.load_files()
    definitions = combine(((GENERAL_PURPOSE,), files, setup.flag_agents, sdk_agents))
    catalog = AgentCatalog(definitions, forward_text=forward_text, append_prompt=append_prompt)
    return AgentTool(session=session, policy=policy, setup=setup, catalog=catalog)


__all__ = ["AgentTool", "SubagentHooks", "SubagentRun", "build_agent_tool"]
