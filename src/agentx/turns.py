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

import operator
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from loguru import logger

from agentx.cancel import CancelScope
from agentx.messages import outbound, record_limit
from agentx.messages.accounting import Pricing, TokenUsage, TurnAccounting
from agentx.messages.compaction import CompactBoundary, Trigger, plan, should_auto_compact
from agentx.messages.context_usage import context_usage, estimate_tokens
from agentx.messages.frozen import FrozenDict
from agentx.messages.permission_wire import safe_description
from agentx.messages.records import RecordSink
from agentx.messages.slash_commands import SlashCommand, render_context, render_cost, render_help
from agentx.providers.base import (
    Block,
    Cancelled,
    Message,
    ModelRequest,
    ProviderClient,
    ProviderError,
    RateLimit,
    RawEvent,
    Stop,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from agentx.sessions.compaction import (
    CompactionFailed,
    read_summary,
    stream_usage,
    summary_message,
    summary_request,
)
from agentx.sessions.history import History, TranscriptSink, TranscriptWriteFailed
from agentx.sessions.identity import SessionIdentity
from agentx.sessions.transcript import Recorded
from agentx.turn_contracts import (
    CommandFailed,
    EngineConfig,
    PermissionGate,
    PermissionOutcome,
    PermissionPolicy,
    PolicyDecision,
    ProgressWatch,
    StatePublisher,
    ToolRunner,
    TurnInput,
    no_progress,
)

INTERRUPTED = "Interrupted by user"


@dataclass(slots=True)
class _ModelCall:
    text: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str | None = None
    error: ProviderError | None = None
    usage: Usage | None = None


@dataclass(slots=True)
class _TurnState:
    """What one turn accumulates for its ``result`` record."""

    accounting: TurnAccounting
    started: float
    api_seconds: float = 0.0
    num_turns: int = 0
    denials: list[FrozenDict] = field(default_factory=list)
    final_text: str = ""
    stop_reason: str | None = None
    subtype: outbound.ResultSubtype = "success"
    errors: list[str] = field(default_factory=list)
    auto_compacted: bool = False


class TurnEngine:
    """Runs turns one at a time for one session; owns the conversation history."""

    def __init__(
        self,
        *,
        config: EngineConfig,
        provider: ProviderClient,
        tools: Sequence[ToolRunner],
        policy: PermissionPolicy,
        gate: PermissionGate,
        state: StatePublisher,
        emit: RecordSink,
        new_uuid: Callable[[], str],
        clock: Callable[[], float] = time.monotonic,
        progress: ProgressWatch | None = None,
        transcript: TranscriptSink | None = None,
        identity: SessionIdentity | None = None,
        message_ids: Callable[[], str] = lambda: str(uuid.uuid4()),
        live_tools: Callable[[], Sequence[ToolRunner]] | None = None,
        tool_media: Callable[[str], tuple[Block, ...]] | None = None,
    ) -> None:
        self._cfg = config
        self._provider = provider
        self._static_tools = tuple(tools)
        #: DEC-SET-2: MCP tools join as their servers connect and leave with them.
        self._live_tools = live_tools
        #: WIRE-022: images of a tool's result, for the provider only.
        self._tool_media = tool_media
        self._specs: tuple[ToolSpec, ...] = ()
        self._live: tuple[ToolRunner, ...] = ()
        self._tool_chars = 0
        self._refresh_tools()
        self._policy = policy
        self._gate = gate
        self._state = state
        self._emit = emit
        self._uuid = new_uuid
        self._clock = clock
        self._progress: ProgressWatch = progress or no_progress
        #: Transcript ids of history messages (their own source: record ids stay as they were).
        self._history = History(new_uuid=message_ids, transcript=transcript)
        self._identity = identity or SessionIdentity(config.session_id)
        #: Session totals for ``/cost`` (every model call, summaries included).
        self._spent = TurnAccounting(config.pricing)
        self._api_seconds = 0.0

    @property
    def history(self) -> tuple[Message, ...]:
        return self._history.messages()

    @property
    def _session_id(self) -> str:
        return self._identity.id

    def seed(self, messages: Iterable[Message]) -> None:
        """Prior context from replayed records: never executes a tool."""
        for message in messages:
            self._history.append(message)

    def restore(self, records: Iterable[Recorded]) -> None:
        """A resumed session's history (already durable): never executes a tool."""
        self._history.restore(records)

    def context_usage(self) -> FrozenDict:
        """``get_context_usage`` and ``/context``: one estimate of the context."""
        system, tools, messages = self._context_estimate()
        return context_usage(
            system_tokens=system,
            tools_tokens=tools,
            messages_tokens=messages,
            max_tokens=self._cfg.context_window,
            model=self._cfg.model,
        )

    def _context_estimate(self) -> tuple[int, int, int]:
        """Token estimates for the system prompt, the tools and the messages
        (the history keeps its character count current: no rescan per call)."""
        return (
            estimate_tokens(len(self._cfg.system_prompt)),
            estimate_tokens(self._tool_chars),
            estimate_tokens(self._history.text_chars),
        )

    # -- one turn ------------------------------------------------------------

    def run_turn(self, turn: TurnInput, scope: CancelScope) -> None:
        st = _TurnState(accounting=TurnAccounting(self._cfg.pricing), started=self._clock())
        self._history.append(Message(role="user", content=turn.content))
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
        self._save(st)
        self._emit((self._result(st, prompt_uuid=turn.prompt_uuid),))

    def _save(self, st: _TurnState) -> None:
        """DEC-STORE-1: the turn's history is durable before its result is written;
        a turn whose append failed is reported failed, with one
        ERROR line, and is never persisted afterwards."""
        try:
            self._history.flush()
        except TranscriptWriteFailed as exc:
            logger.error("session {}; the turn is not saved", exc)
            self._fail_save(st, str(exc))
        except Exception:
            logger.exception("transcript append failed")
            self._fail_save(st, "transcript write failed")

    @staticmethod
    def _fail_save(st: _TurnState, reason: str) -> None:
        if st.subtype == "success":
            st.subtype = "error_during_execution"
        st.errors.append(reason)

    # -- slash commands and compaction (DEC-TURN-1, WIRE-005) ------------------

    def run_command(self, command: SlashCommand, scope: CancelScope) -> None:
        """A slash command's turn: its ``system/local_command_output``, then
        exactly one result (DEC-TURN-1). No model call runs, except
        ``/compact``'s summary; nothing enters the history."""
        st = _TurnState(accounting=TurnAccounting(self._cfg.pricing), started=self._clock())
        output = ""
        try:
            output = self._command(command, st, scope)
        except Cancelled:
            st.subtype = "error_during_execution"
            st.stop_reason = "cancelled"
            st.errors.append(INTERRUPTED)
        except CommandFailed as exc:
            st.subtype = "error_during_execution"
            st.errors.append(str(exc))
            output = f"Error: {exc}"
        except Exception:  # a defect must still end the turn with its one result
            logger.exception("slash command failed")
            st.subtype = "error_during_execution"
            st.errors.append("internal error")
        if output:
            self._emit(
                (
                    outbound.local_command_output(
                        output, session_id=self._session_id, uuid=self._uuid()
                    ),
                )
            )
        st.final_text = output
        self._emit((self._result(st, prompt_uuid=None),))

    def _command(self, command: SlashCommand, st: _TurnState, scope: CancelScope) -> str:
        if command.name == "compact":
            try:
                return self._compact("manual", command.arguments, st, scope)
            except CompactionFailed as exc:
                raise CommandFailed(f"compaction failed: {exc}") from None
        if command.name == "context":
            return render_context(self.context_usage())
        if command.name == "cost":
            return render_cost(
                total_cost_usd=self._spent.total_cost_usd(),
                api_seconds=self._api_seconds,
                model_usage=self._spent.model_usage(),
            )
        if command.name == "clear":
            return self._clear()
        return render_help()

    def _clear(self) -> str:
        """``/clear``: a new session id (on every later record), an empty
        context and fresh ``/cost`` totals; the old session stays resumable."""
        session_id = self._uuid()
        try:
            self._history.clear(session_id)
        except TranscriptWriteFailed as exc:  # DECISIONS section 8: one line
            logger.error("clear: the new session could not be started: {}", exc)
            raise CommandFailed("clear failed: the new session could not be started") from None
        except Exception:
            logger.exception("clear: the new session could not be started")
            raise CommandFailed("clear failed: the new session could not be started") from None
        self._identity.renew(session_id)
        self._spent = TurnAccounting(self._cfg.pricing)
        self._api_seconds = 0.0
        return f"Cleared the conversation; new session {session_id}"

    def _auto_compact(self, st: _TurnState, scope: CancelScope) -> None:
        """DEC-AUTH-2 ``context_window``: before a model call, once a turn,
        when the estimate passes 80% of the window. A failed summary leaves
        the history as it was, logs a WARN and the turn goes on; an interrupt
        ends the turn."""
        if st.auto_compacted:
            return
        estimate = sum(self._context_estimate())
        if not should_auto_compact(estimate=estimate, window=self._cfg.context_window):
            return
        st.auto_compacted = True
        try:
            self._compact("auto", "", st, scope)
        except CompactionFailed as exc:
            logger.warning("automatic compaction failed; continuing uncompacted: {}", exc)

    def _compact(
        self, trigger: Trigger, instructions: str, st: _TurnState, scope: CancelScope
    ) -> str:
        """Summarize all but the preserved segment (spec ``system/status`` and
        ``system/compact_boundary``, WIRE-005). The boundary entry is durable
        before the boundary record is emitted; on any failure or interrupt the
        history is untouched. Returns the command output text."""
        items = self._history.items()
        chosen = plan(items)
        if chosen is None:
            raise CompactionFailed("nothing to compact")
        pre_tokens = self.context_usage()["totalTokens"]
        self._emit((outbound.status("compacting", session_id=self._session_id, uuid=self._uuid()),))
        try:
            request = summary_request(
                model=self._cfg.model,
                effort=self._cfg.effort,
                summarized=self._history.messages()[: chosen.summarized],
                instructions=instructions,
            )
            streamed: list[object] = []
            opened = self._clock()
            try:
                streamed.extend(self._provider.stream(request, scope))
            finally:
                self._account(st, opened, stream_usage(streamed))
            if scope.is_set():
                raise Cancelled
            summary = Recorded(uuid=self._uuid(), message=summary_message(read_summary(streamed)))
            boundary = CompactBoundary(
                trigger=trigger,
                pre_tokens=pre_tokens,
                preserved_segment=chosen.segment(items, anchor_uuid=summary.uuid),
            )
            boundary_id = self._uuid()
            try:
                self._history.compact(chosen, summary=summary, boundary=boundary, uuid=boundary_id)
            except TranscriptWriteFailed as exc:  # DECISIONS section 8: one line
                logger.error("compaction: {}", exc)
                raise CompactionFailed("the transcript could not be written") from None
            except Exception:
                logger.exception("compaction: the transcript could not be written")
                raise CompactionFailed("the transcript could not be written") from None
            self._emit(
                (
                    outbound.compact_boundary(
                        boundary.metadata(), session_id=self._session_id, uuid=boundary_id
                    ),
                )
            )
        finally:
            self._emit((outbound.status(None, session_id=self._session_id, uuid=self._uuid()),))
        return (
            f"Compacted {chosen.summarized} messages into a summary; "
            f"kept the latest {chosen.preserved} verbatim."
        )

    def _loop(self, st: _TurnState, scope: CancelScope) -> None:
        while True:
            if self._cfg.max_turns is not None and st.num_turns >= self._cfg.max_turns:
                st.subtype = "error_max_turns"
                st.errors.append(f"Reached maximum number of turns ({self._cfg.max_turns})")
                return
            st.num_turns += 1
            self._auto_compact(st, scope)
            call = self._call_model(st, scope)
            self._emit_assistant(call)
            st.stop_reason = call.stop_reason
            if call.error is not None:
                st.subtype = "error_during_execution"
                st.errors.append(f"{call.error.category}: {call.error.message}")
                self._close_unrun(call.tool_calls, "Tool not run: the model call failed")
                return
            if self._over_budget(st):
                st.subtype = "error_max_budget_usd"
                st.errors.append(f"Reached maximum budget (${self._cfg.max_budget_usd})")
                self._close_unrun(call.tool_calls, "Tool not run: budget exhausted")
                return
            if not call.tool_calls:
                st.final_text = "".join(call.text)
                return
            self._run_tools(call.tool_calls, st, scope)
            if scope.is_set():
                st.subtype = "error_during_execution"
                st.stop_reason = None
                st.errors.append(INTERRUPTED)
                return

    def _close_unrun(self, calls: list[ToolCall], reason: str) -> None:
        """Every accepted tool-use id still gets exactly one tool_result."""
        if not calls:
            return
        for tc in calls:
            self._emit_tool_result(tc.id, reason, True)
        self._history.append(
            Message(
                role="user",
                content=tuple(
                    ToolResultBlock(tool_use_id=tc.id, content=reason, is_error=True)
                    for tc in calls
                ),
            )
        )

    def _over_budget(self, st: _TurnState) -> bool:
        budget = self._cfg.max_budget_usd
        cost = st.accounting.total_cost_usd()
        return budget is not None and cost is not None and cost > budget

    def _refresh_tools(self) -> None:
        """The tools of one model call: the built-ins, then the live MCP tools.

        Rebuilt only when the live set changed (tools are shared objects, so
        identity decides): most calls reuse the last call's table and specs."""
        live = tuple(self._live_tools()) if self._live_tools is not None else ()
        previous = self._live
        if self._specs and len(live) == len(previous) and all(map(operator.is_, live, previous)):
            return
        self._live = live
        tools = (*self._static_tools, *live)
        self._tools = {tool.name: tool for tool in tools}
        self._specs = tuple(tool.spec for tool in tools)
        self._tool_chars = sum(
            len(str(spec.input_schema)) + len(spec.description) for spec in self._specs
        )

    def _call_model(self, st: _TurnState, scope: CancelScope) -> _ModelCall:
        self._refresh_tools()
        request = ModelRequest(
            model=self._cfg.model,
            system=self._cfg.system_prompt,
            messages=self._history.view(),
            tools=self._specs,
            effort=self._cfg.effort,
            stream_events=self._cfg.include_partial_messages,
        )
        call = _ModelCall()
        opened = self._clock()
        try:
            for item in self._provider.stream(request, scope):
                self._absorb(item, call)
        finally:
            self._account(st, opened, call.usage)
        if scope.is_set():
            raise Cancelled
        if call.error is None and call.stop_reason == "max_tokens":
            # DEC-AUTH-2: a length stop is the max_output_tokens error category.
            call.error = ProviderError(
                category="max_output_tokens", message="the model reached its output token limit"
            )
        return call

    def _account(self, st: _TurnState, opened: float, usage: Usage | None) -> None:
        """A model call's time and usage, for the turn's result and ``/cost``."""
        elapsed = self._clock() - opened
        st.api_seconds += elapsed
        self._api_seconds += elapsed
        # WIRE-012: a request without reported usage makes the cost unknown.
        tokens = None if usage is None else _token_usage(usage)
        st.accounting.add(self._cfg.model, tokens)
        self._spent.add(self._cfg.model, tokens)

    def _absorb(self, item: object, call: _ModelCall) -> None:
        if isinstance(item, TextDelta):
            call.text.append(item.text)
        elif isinstance(item, ToolCall):
            call.tool_calls.append(item)
        elif isinstance(item, Usage):
            call.usage = item
        elif isinstance(item, Stop):
            call.stop_reason = item.stop_reason
        elif isinstance(item, ProviderError):
            call.error = item
        elif isinstance(item, RawEvent):
            if self._cfg.include_partial_messages:
                self._emit(
                    (
                        outbound.stream_event(
                            item.event,
                            parent_tool_use_id=None,
                            session_id=self._session_id,
                            uuid=self._uuid(),
                        ),
                    )
                )
        elif isinstance(item, RateLimit) and item.status != "allowed":
            self._emit(
                (
                    outbound.rate_limit_event(
                        item.status,
                        resets_at=item.resets_at,
                        utilization=item.utilization,
                        session_id=self._session_id,
                        uuid=self._uuid(),
                    ),
                )
            )

    def _emit_assistant(self, call: _ModelCall) -> None:
        text = "".join(call.text)
        content: list[FrozenDict] = []
        blocks: list[Block] = []
        if text or (call.error is not None):
            shown = text or (call.error.message if call.error is not None else "")
            content.append(FrozenDict(type="text", text=shown))
            blocks.append(TextBlock(text=shown))
        for tc in call.tool_calls:
            content.append(FrozenDict(type="tool_use", id=tc.id, name=tc.name, input=_shown(tc)))
            blocks.append(ToolUseBlock(id=tc.id, name=tc.name, input=tc.input))
        if blocks:
            self._history.append(Message(role="assistant", content=tuple(blocks)))
        usage = _token_usage(call.usage) if call.usage is not None else TokenUsage()
        message = outbound.api_assistant_message(
            message_id=f"msg_{self._uuid().replace('-', '')[:24]}",
            model=self._cfg.model,
            content=tuple(content),
            stop_reason=call.stop_reason,
            usage=usage.to_wire(),
        )
        record = outbound.assistant(
            message,
            parent_tool_use_id=None,
            session_id=self._session_id,
            uuid=self._uuid(),
            error=call.error.category if call.error is not None else None,
        )
        # DEC-COMPAT-3: a message too long for one line is several records of
        # one message id; the history above keeps it whole.
        self._emit(record_limit.split_assistant(record, new_uuid=self._uuid))

    # -- tools -----------------------------------------------------------------

    def _run_tools(self, calls: list[ToolCall], st: _TurnState, scope: CancelScope) -> None:
        """Ask for every tool use at once, then run the allowed ones in order.

        Every accepted tool-use id gets exactly one terminal ``tool_result``
        (spec hard-interrupt order), in the order the model asked.
        """
        decisions = [self._decide(tc, scope) for tc in calls]
        results: list[ToolResultBlock] = []
        for tc, decision in zip(calls, decisions, strict=True):
            outcome = self._settle(decision)
            if outcome.updated_permissions:
                self._policy.apply(outcome.updated_permissions)
            if outcome.behavior == "deny":
                st.denials.append(
                    FrozenDict(tool_name=tc.name, tool_use_id=tc.id, tool_input=_shown(tc))
                )
                if outcome.interrupt:
                    scope.cancel()
                content, is_error = outcome.message, True
            elif scope.is_set():
                content, is_error = INTERRUPTED, True
            else:
                tool_input = (
                    outcome.updated_input if outcome.updated_input is not None else tc.input
                )
                content, is_error = self._execute(self._tools[tc.name], tool_input, scope, tc.id)
            results.append(ToolResultBlock(tool_use_id=tc.id, content=content, is_error=is_error))
            self._emit_tool_result(tc.id, content, is_error)
        media = (
            tuple(b for tc in calls for b in self._tool_media(tc.id)) if self._tool_media else ()
        )
        self._history.append(Message(role="user", content=(*results, *media)))
        self._emit(
            (
                outbound.tool_use_summary(
                    _batch_summary(calls, results),
                    tuple(tc.id for tc in calls),
                    session_id=self._session_id,
                    uuid=self._uuid(),
                ),
            )
        )

    def _execute(
        self, tool: ToolRunner, tool_input: FrozenDict, scope: CancelScope, tool_use_id: str
    ) -> tuple[str, bool]:
        """Run one allowed tool; a network tool first asks for its host and
        port through the same correlated path, and any error denies
        (WIRE-PERM-004)."""
        target = getattr(tool, "network_target", None)
        destination = target(tool_input) if target is not None else None
        if destination is not None:
            self._state.permission_opened()
            network = self._settle(self._gate.ask_network(*destination, cancel=scope))
            if network.behavior != "allow":
                return f"Network access to {destination[0]}:{destination[1]} denied", True
        try:
            with self._progress(tool_use_id, tool.name):
                return tool.execute(tool_input, scope, tool_use_id=tool_use_id)
        except Cancelled:
            return INTERRUPTED, True

    def _decide(
        self, tc: ToolCall, scope: CancelScope
    ) -> PermissionOutcome | Future[PermissionOutcome]:
        tool = self._tools.get(tc.name)
        if tool is None:
            return PermissionOutcome(behavior="deny", message=f"No such tool available: {tc.name}")
        if record_limit.tool_input_too_large(tc.input):
            # DEC-COMPAT-3: neither its block nor its request fits one line.
            return PermissionOutcome(behavior="deny", message=record_limit.TOOL_INPUT_TOO_LARGE)
        decision = self._policy.evaluate(tool, tc.input)
        if decision.behavior == "allow":
            return PermissionOutcome(behavior="allow")
        if decision.behavior == "deny":
            return PermissionOutcome(
                behavior="deny", message=decision.reason or "Permission denied"
            )
        self._state.permission_opened()
        return self._gate.ask(
            tool_name=tc.name,
            tool_input=tc.input,
            tool_use_id=tc.id,
            description=safe_description(tool.name, lambda: tool.summarize(tc.input)),
            suggestions=self._policy.suggestions(tool, tc.input),
            blocked_path=decision.blocked_path,
            cancel=scope,
        )

    def _settle(self, decision: PermissionOutcome | Future[PermissionOutcome]) -> PermissionOutcome:
        if isinstance(decision, PermissionOutcome):
            return decision
        try:
            return decision.result()
        except Exception:  # WIRE-PERM-002: an error is a denial, never an allow
            return PermissionOutcome(behavior="deny", message="permission request failed")
        finally:
            self._state.permission_closed()

    def _emit_tool_result(self, tool_use_id: str, content: str, is_error: bool) -> None:
        block = outbound.tool_result_block(tool_use_id, content, is_error=is_error)
        self._emit(
            (
                outbound.user_echo(
                    {"role": "user", "content": (block,)},
                    session_id=self._session_id,
                    uuid=self._uuid(),
                ),
            )
        )

    # -- result ----------------------------------------------------------------

    def _result(self, st: _TurnState, *, prompt_uuid: str | None) -> FrozenDict:
        """The turn's one result, capped to one line (DEC-COMPAT-3)."""
        acct = st.accounting
        record = outbound.result(
            subtype=st.subtype,
            is_error=st.subtype != "success",
            duration_ms=int((self._clock() - st.started) * 1000),
            duration_api_ms=int(st.api_seconds * 1000),
            num_turns=st.num_turns,
            result_text=st.final_text,
            stop_reason=st.stop_reason,
            total_cost_usd=acct.total_cost_usd(),
            usage=acct.total.to_wire(),
            model_usage=acct.model_usage(),
            permission_denials=tuple(st.denials),
            errors=tuple(st.errors),
            session_id=self._session_id,
            uuid=self._uuid(),
            prompt_uuid=prompt_uuid,
        )
        return record_limit.cap_result(record)


def _token_usage(usage: Usage) -> TokenUsage:
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
    )


def _shown(tc: ToolCall) -> FrozenDict:
    """A tool use's input as stdout shows it: empty when too large for one
    record (DEC-COMPAT-3); the history keeps it whole."""
    return FrozenDict() if record_limit.tool_input_too_large(tc.input) else tc.input


def _batch_summary(calls: list[ToolCall], results: list[ToolResultBlock]) -> str:
    """Deterministic, credential-free one-line summary: names and outcomes only."""
    parts = [
        f"{tc.name} {'failed' if res.is_error else 'ok'}"
        for tc, res in zip(calls, results, strict=True)
    ]
    return f"Ran {len(calls)} tool use{'s' if len(calls) != 1 else ''}: " + ", ".join(parts)


def input_error_result(
    reason: str,
    *,
    pricing: Pricing | None,
    session_id: str,
    uuid: str,
    prompt_uuid: str | None = None,
) -> FrozenDict:
    """DECISIONS section 1: a semantically invalid user record's one result.

    No model call ran, so the cost is the profile's known zero when it
    declares pricing and null otherwise (WIRE-012).
    """
    return outbound.result(
        subtype="error_during_execution",
        is_error=True,
        duration_ms=0,
        duration_api_ms=0,
        num_turns=0,
        result_text=None,
        stop_reason=None,
        total_cost_usd=TurnAccounting(pricing).total_cost_usd(),
        usage=TokenUsage().to_wire(),
        model_usage={},
        permission_denials=(),
        errors=(f"input_error: {reason}",),
        session_id=session_id,
        uuid=uuid,
        prompt_uuid=prompt_uuid,
    )


__all__ = [
    "EngineConfig",
    "PermissionGate",
    "PermissionOutcome",
    "PermissionPolicy",
    "PolicyDecision",
    "StatePublisher",
    "ToolRunner",
    "TurnEngine",
    "TurnInput",
    "input_error_result",
]
