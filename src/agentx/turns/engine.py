"""The agent loop for one turn (DEC-TURN-1..4, spec "Core output records").

:class:`TurnEngine` runs on the turn runner's worker thread: it streams one
model call at a time from the provider, emits the ``assistant`` record, asks
permission for the tool uses (all asks of one message concurrently, so a host
sees every pending prompt), runs the allowed tools, emits exactly one
``tool_result`` per accepted tool-use id, and ends the turn with exactly one
``result``. It starts no threads; waiting happens on futures handed back by
the permission gate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentx.diagnostics import logger
from agentx.messages.accounting import TurnAccounting
from agentx.messages.frozen import FrozenDict
from agentx.messages.session_ledger import StoredTurn, turn_entry
from agentx.messages.slash_commands import SlashCommand
from agentx.providers.base import (
    Block,
    Cancelled,
    Message,
    ProviderClient,
    TextBlock,
    ToolCall,
    ToolSpec,
    ToolUseBlock,
)
from agentx.sessions.history import History, TranscriptSink, TranscriptWriteFailed
from agentx.sessions.identity import SessionIdentity
from agentx.sessions.pairing import NOT_RUN
from agentx.sessions.transcript import Recorded
from agentx.turns.cancel import CancelScope
from agentx.turns.compactor import Compactor
from agentx.turns.contracts import (
    EngineConfig,
    EnginePorts,
    PermissionPolicy,
    ToolRunner,
    TurnInput,
)
from agentx.turns.model_call import ModelCaller
from agentx.turns.results import INTERRUPTED, SessionSpend, TurnState
from agentx.turns.session import LivePrompt, ToolTable, TurnSession
from agentx.turns.tool_calls import ToolCalls

if TYPE_CHECKING:
    from agentx.agents.offer import AgentOffer
    from agentx.agents.runner import AgentTool
    from agentx.messages.agents.definitions import AgentDefinition
    from agentx.turns.structured import OutputSchema


class TurnEngine:
    """Runs turns one at a time for one session; owns the conversation history."""

    def __init__(
        self,
        *,
        config: EngineConfig,
        provider: ProviderClient,
        tools: Sequence[ToolRunner],
        policy: PermissionPolicy,
        ports: EnginePorts,
        transcript: TranscriptSink | None = None,
        identity: SessionIdentity | None = None,
    ) -> None:
        table = ToolTable(tools, ports.live_tools, ports.live_tools_ready)
        self._s = TurnSession(
            config=config,
            provider=provider,
            ports=ports,
            history=History(new_uuid=ports.message_ids, transcript=transcript),
            identity=identity or SessionIdentity(config.session_id),
            tools=table,
            spend=SessionSpend(config.pricing),
            prompt=LivePrompt(config.system_prompt, config.first_context),
        )
        self._cfg = config
        self._emit = ports.emit
        self._policy = policy
        self._model = ModelCaller(self._s, policy)
        self._tool_calls = ToolCalls(self._s, policy)
        self._compactor = Compactor(self._s)
        self._output: OutputSchema | None = None
        # DEC-SET-1, DEC-CLI-5: the memory files (and the dynamic block when it
        # left the system prompt) reach the model with the first prompt.
        self._s.pending_context.extend(self._s.opening())
        if config.json_schema is not None:
            self.set_output_schema(config.json_schema)
        #: DEC-TURN-3: the ``Agent`` tool is built at the next turn when due;
        #: the sdk profile's ``initialize`` may add definitions and options first.
        self._agents_due = config.agents is not None
        self._sdk_agents: tuple[Any, ...] = ()
        self._forward_subagent_text = False
        self._subagent_prompt = config.agents.append_prompt if config.agents else None
        self._agent_tool: AgentOffer | None = None
        self._policy = policy

    @property
    def agents_offered(self) -> bool:
        """DEC-TURN-3: whether this session offers the ``Agent`` tool."""
        return self._cfg.agents is not None

    def set_agents(
        self,
        definitions: tuple[Any, ...] | None = None,
        *,
        forward_text: bool | None = None,
        append_prompt: str | None = None,
    ) -> None:
        """DEC-PROFILE-2: ``initialize``'s ``agents``, ``forwardSubagentText``
        and ``appendSubagentSystemPrompt``; applied before any turn runs, so
        the first turn's ``Agent`` tool has them (no-op without the tool)."""
        if definitions is not None:
            self._sdk_agents = definitions
        if forward_text is not None:
            self._forward_subagent_text = forward_text
        if append_prompt is not None:
            self._subagent_prompt = append_prompt
        self._agents_due = self._cfg.agents is not None

    def _install_agents(self) -> None:
        """The ``Agent`` tool over the definitions in force, offered from the
        first turn on; the agent files are read here, the subagent runner
        loads at the tool's first use (DEC-CLI-3: never at start, and not
        for a turn that does not call it)."""
        setup = self._cfg.agents
        if not self._agents_due or setup is None:
            return
        self._agents_due = False
        from agentx.agents.offer import AgentOffer  # noqa: PLC0415

        forward_text, append_prompt = self._forward_subagent_text, self._subagent_prompt

        def build(definitions: Mapping[str, AgentDefinition], spec: ToolSpec) -> AgentTool:
            from agentx.agents.runner import build_agent_tool  # noqa: PLC0415

            return build_agent_tool(
                session=self._s,
                policy=self._policy,
                setup=setup,
                definitions=definitions,
                spec=spec,
                forward_text=forward_text,
                append_prompt=append_prompt,
            )

        layers = (setup.load_files(), setup.flag_agents, self._sdk_agents)
        tool = AgentOffer(layers, build)
        self._s.tools.set_own((tool,))
        self._agent_tool = tool

    def set_output_schema(self, schema: FrozenDict) -> None:
        """DEC-CLI-5 ``--json-schema`` (or the SDK's ``jsonSchema``): from the
        next turn on, offer ``StructuredOutput`` and require a valid call.
        Raises :class:`agentx.turns.structured.SchemaError` for an unusable
        schema. Called before any turn runs."""
        from agentx.turns.structured import OutputSchema  # noqa: PLC0415

        output = OutputSchema(schema)
        self._output = output
        self._tool_calls.output = output
        self._s.tools.set_extra((output.spec,))

    def set_prompt(self, system: str, first_context: str | None) -> None:
        """DEC-PROFILE-2: the client's system prompt (``initialize``), set
        before any turn runs; the first prompt's opening follows it."""
        before = self._s.opening()
        self._s.prompt.system = system
        self._s.prompt.first_context = first_context
        pending = self._s.pending_context
        if pending[: len(before)] == before:
            pending[: len(before)] = self._s.opening()

    def set_plan_instructions(self, text: str | None) -> None:
        """DEC-PROFILE-2 ``planModeInstructions``: the plan mode workflow."""
        self._s.prompt.plan_instructions = text

    @property
    def system_prompt(self) -> str:
        """The system prompt requests carry now (outside plan mode)."""
        return self._s.prompt.system

    @property
    def history(self) -> tuple[Message, ...]:
        return self._s.history.messages()

    def seed(self, messages: Iterable[Message]) -> None:
        """Prior context from replayed records: never executes a tool."""
        for message in messages:
            self._s.history.append(message)

    def restore(self, records: Iterable[Recorded], turns: Iterable[StoredTurn] = ()) -> None:
        """A resumed session's history (already durable): never executes a
        tool; its stored turns count in ``/cost`` (WIRE-012)."""
        self._s.history.restore(records)
        self._s.spend.restore(turns)

    def context_usage(self) -> FrozenDict:
        """``get_context_usage`` and ``/context``: one estimate of the context."""
        return self._s.context_usage()

    # -- one turn ------------------------------------------------------------

    def begin(self) -> None:
        """``SessionStart`` (startup or resume) before the first prompt; its
        context reaches the first request (DECISIONS section 3)."""
        hooks = self._s.ports.hooks
        if hooks is None:
            return
        try:
            started = hooks.fire(
                "SessionStart", {"source": hooks.start_source, "model": self._cfg.model}
            )
        except Exception:  # a defect here must not keep the first prompt from running
            logger.exception("SessionStart hooks failed")
            return
        self._s.pending_context.extend(started.contexts)

    def run_turn(self, turn: TurnInput, scope: CancelScope) -> None:
        self._install_agents()
        begin_message = self._s.ports.begin_message
        if begin_message is not None and turn.uuid is not None:
            # DEC-PROFILE-2: the files this message's turn changes are kept under it.
            begin_message(turn.uuid)
        st = TurnState(
            accounting=TurnAccounting(self._cfg.pricing),
            started=self._s.ports.clock(),
            started_at=self._s.ports.wall_clock(),
            structured=self._output.new_turn() if self._output is not None else None,
        )
        content = self._submitted(turn, st, scope)
        if content is None:
            self._emit((self._s.result(st, prompt_uuid=turn.prompt_uuid),))
            return
        if turn.read_mentions:
            # DEC-PROFILE-2: ``@file`` mentions, read through the Read tool's permissions.
            from agentx.turns.mentions import read_mentions  # noqa: PLC0415

            read = self._s.tools.named.get("Read")
            content += read_mentions(turn.content, read=read, policy=self._policy, scope=scope)
        # DEC-CLI-5: the prompt's transcript id is its record's uuid, when it has one.
        self._s.history.append(Message(role="user", content=content), uuid=turn.uuid)
        try:
            self._loop(st, scope)
        except Cancelled:
            st.subtype = "error_during_execution"
            st.stop_reason = "cancelled"
            st.errors.append(INTERRUPTED)
        except Exception:  # a defect must still end the turn with its one result
            logger.exception("turn failed")
            st.subtype = "error_during_execution"
            st.errors.append("internal error")
        if scope.is_set() and self._agent_tool is not None:
            # WIRE-011: an interrupt stops the background subagents too.
            self._agent_tool.stop_background()
        self._answer_open_tool_uses()
        result = self._s.result(st, prompt_uuid=turn.prompt_uuid)
        ended = turn_entry(result, started_at=st.started_at, ended_at=self._s.ports.wall_clock())
        self._s.history.note(ended)
        if not self._save(st):
            result = self._s.result(st, prompt_uuid=turn.prompt_uuid)
        self._emit((result,))

    def _submitted(
        self, turn: TurnInput, st: TurnState, scope: CancelScope
    ) -> tuple[Block, ...] | None:
        """``UserPromptSubmit`` (DECISIONS section 3): the prompt's content with the
        hooks' context (and any ``SessionStart`` context) after it, or None
        when a hook blocked the prompt: it never reaches the model nor the
        history, and the turn's result says why."""
        context = [*self._s.pending_context]
        self._s.pending_context.clear()
        hooks = self._s.ports.hooks
        if hooks is not None:
            prompt = "\n".join(b.text for b in turn.content if isinstance(b, TextBlock))
            submitted = hooks.fire("UserPromptSubmit", {"prompt": prompt}, cancelled=scope.is_set)
            if submitted.blocked or submitted.stop:
                reason = submitted.reason or submitted.stop_reason or "no reason given"
                st.subtype = "error_during_execution"
                st.errors.append(f"prompt blocked by a UserPromptSubmit hook: {reason}")
                return None
            context.extend(submitted.contexts)
        return (*turn.content, *(TextBlock(text=text) for text in context))

    def run_command(self, command: SlashCommand, scope: CancelScope) -> None:
        """A slash command's turn (see :mod:`agentx.turns.local_commands`,
        loaded with the first command: DEC-CLI-3 start-up)."""
        from agentx.turns.local_commands import LocalCommands  # noqa: PLC0415

        LocalCommands(self._s, self._compactor).run(command, scope)

    def _answer_open_tool_uses(self) -> None:
        """Spec "Ordering": a turn that failed after the model asked for tools
        still answers each of them once, so the next request is valid."""
        messages = self._s.history.view()
        last = messages[-1] if len(messages) else None
        if last is None or last.role != "assistant":
            return
        calls = [
            ToolCall(id=b.id, name=b.name, input=b.input)
            for b in last.content
            if isinstance(b, ToolUseBlock)
        ]
        self._tool_calls.close_unrun(calls, NOT_RUN)

    def _save(self, st: TurnState) -> bool:
        """DEC-STORE-1: the turn's history and its ledger entry are durable
        before its result is written; a turn whose append failed is reported
        failed, with one ERROR line, and is never persisted afterwards.
        Whether it was saved."""
        try:
            self._s.history.flush()
        except TranscriptWriteFailed as exc:
            logger.error("session {}; the turn is not saved", exc)
            self._fail_save(st, str(exc))
            return False
        except Exception:
            logger.exception("transcript append failed")
            self._fail_save(st, "transcript write failed")
            return False
        return True

    @staticmethod
    def _fail_save(st: TurnState, reason: str) -> None:
        if st.subtype == "success":
            st.subtype = "error_during_execution"
        st.errors.append(reason)

    def _loop(self, st: TurnState, scope: CancelScope) -> None:
        while True:
            if self._cfg.max_turns is not None and st.num_turns >= self._cfg.max_turns:
                st.subtype = "error_max_turns"
                st.errors.append(f"Reached maximum number of turns ({self._cfg.max_turns})")
                return
            st.num_turns += 1
            self._compactor.auto(st, scope)
            call = self._model.call(st, scope)
            self._model.emit_assistant(call)
            st.stop_reason = call.stop_reason
            if call.error is not None:
                st.subtype = "error_during_execution"
                st.errors.append(f"{call.error.category}: {call.error.message}")
                self._tool_calls.close_unrun(call.tool_calls, "Tool not run: the model call failed")
                self._stop_failure(call.error.category, call.error.message, call.text.joined())
                return
            if self._over_budget(st):
                st.subtype = "error_max_budget_usd"
                st.errors.append(f"Reached maximum budget (${self._cfg.max_budget_usd})")
                self._tool_calls.close_unrun(call.tool_calls, "Tool not run: budget exhausted")
                return
            if not call.tool_calls:
                st.final_text = call.text.joined()
                if self._structured_reminded(st):
                    continue
                if st.subtype == "success" and self._background_agents_reported(st, scope):
                    continue
                if scope.is_set():
                    st.subtype = "error_during_execution"
                    st.errors.append(INTERRUPTED)
                    return
                if st.subtype == "success" and self._stop_hooks_continue(st, scope):
                    continue
                return
            self._tool_calls.run(call.tool_calls, st, scope)
            if self._over_budget(st):
                # DEC-CLI-5: a subagent's spend counts in the turn's budget.
                st.subtype = "error_max_budget_usd"
                st.errors.append(f"Reached maximum budget (${self._cfg.max_budget_usd})")
                return
            ended = st.structured.verdict_after_tools() if st.structured is not None else None
            if ended is not None:
                self._structured_exhausted(st, ended.error)
                return
            if st.hook_stop is not None:
                # DEC-HOOK-3: ``continue: false`` ends the turn after this step.
                st.final_text = st.hook_stop
                return
            if scope.is_set():
                st.subtype = "error_during_execution"
                st.stop_reason = None
                st.errors.append(INTERRUPTED)
                return

    def _background_agents_reported(self, st: TurnState, scope: CancelScope) -> bool:
        """DEC-TURN-3, DEC-TURN-5: before the turn ends, its background
        subagents finish and their notifications reach the model, which goes
        on (bounded by ``--max-turns`` at the top of the loop)."""
        tool = self._agent_tool
        if tool is None:
            return False
        notices = tool.notices(st, scope, wait=True)
        if not notices or scope.is_set():
            return False
        text = "\n\n".join(notices)
        self._s.history.append(Message(role="user", content=(TextBlock(text=text),)))
        return True

    def _structured_reminded(self, st: TurnState) -> bool:
        """An answer that ends without a valid ``StructuredOutput`` call: the
        model is reminded (the turn goes on) while retries remain, else the
        turn ends ``error_max_structured_output_retries`` (never ``success``
        without the payload). Bounded by the retries and ``--max-turns``."""
        if st.structured is None:
            return False
        from agentx.messages.structured_output import Exhausted, Remind  # noqa: PLC0415

        st.structured, verdict = st.structured.on_end()
        if isinstance(verdict, Remind):
            self._s.history.append(Message(role="user", content=(TextBlock(text=verdict.text),)))
            return True
        if isinstance(verdict, Exhausted):
            self._structured_exhausted(st, verdict.error)
        return False

    @staticmethod
    def _structured_exhausted(st: TurnState, error: str) -> None:
        st.subtype = "error_max_structured_output_retries"
        st.errors.append(error)

    def _stop_hooks_continue(self, st: TurnState, scope: CancelScope) -> bool:
        """``Stop`` (DECISIONS section 3): a hook's block (or its additionalContext)
        makes the turn go on with the reason as the next user message;
        ``stop_hook_active`` tells the hook it did so before. Bounded:
        ``--max-turns`` still holds at the top of the loop."""
        hooks = self._s.ports.hooks
        if hooks is None or scope.is_set():
            return False
        stop = hooks.fire(
            "Stop",
            {"stop_hook_active": st.stop_hook_active, "last_assistant_message": st.final_text},
            cancelled=scope.is_set,
        )
        if stop.stop or scope.is_set():
            return False
        notes = [*(stop.reasons if stop.blocked else ()), *stop.contexts]
        if not notes:
            return False
        st.stop_hook_active = True
        feedback = "Stop hook feedback:\n" + "\n".join(notes)
        self._s.history.append(Message(role="user", content=(TextBlock(text=feedback),)))
        return True

    def _stop_failure(self, error: str, details: str, text: str) -> None:
        """``StopFailure``: the turn ended on a failed model call (DECISIONS section 3);
        its hooks can only observe."""
        hooks = self._s.ports.hooks
        if hooks is not None:
            hooks.fire(
                "StopFailure",
                {"error": error, "error_details": details, "last_assistant_message": text},
            )

    def _over_budget(self, st: TurnState) -> bool:
        budget = self._cfg.max_budget_usd
        cost = st.accounting.total_cost_usd()
        return budget is not None and cost is not None and cost > budget
