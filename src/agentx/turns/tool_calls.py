"""The tool uses of one model call (spec "Permission race", hard-interrupt order).

:class:`ToolCalls` asks for every tool use of a message at once (so a host
sees every pending prompt), settles the answers in the order the model asked,
runs the allowed tools and emits exactly one ``tool_result`` per accepted
tool-use id, then the batch's ``tool_use_summary``.

Spec "Ordering": whatever a tool, a permission check or a hook raises, the
tool use still gets exactly one ``tool_result`` (an error naming the
exception's type, never its text) and the turn goes on; a failure that
escapes the batch still leaves every tool use answered, on stdout and in the
history, so the next request is one a provider accepts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentx.diagnostics import logger
from agentx.messages import outbound, record_limit
from agentx.messages.frozen import FrozenDict
from agentx.messages.session_ledger import permission_entry, policy_decider
from agentx.providers.base import (
    Cancelled,
    Message,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    Usage,
)
from agentx.sessions.pairing import NOT_RUN
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import (
    PermissionAsk,
    PermissionOutcome,
    PermissionPolicy,
    PolicyDecision,
    ToolRunner,
)
from agentx.turns.results import INTERRUPTED, TurnState
from agentx.turns.session import TurnSession

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agentx.turns.structured import OutputSchema

#: The answer standing for a permission on ``StructuredOutput``: it touches nothing.
_NO_ASK = PermissionOutcome(behavior="allow")


def _failed(name: str, exc: Exception) -> str:
    return f"{name} failed: internal error ({type(exc).__name__})"


class ToolCalls:
    """Runs the tool uses of one session's model calls."""

    def __init__(self, session: TurnSession, policy: PermissionPolicy) -> None:
        self._s = session
        self._policy = policy
        self._gate = session.ports.gate
        self._state = session.ports.state
        self._progress = session.ports.progress
        self._emit = session.ports.emit
        self._uuid = session.ports.new_uuid
        #: DEC-CLI-5 ``--json-schema``: the engine sets it before any turn.
        self.output: OutputSchema | None = None

    def run(self, calls: list[ToolCall], st: TurnState, scope: CancelScope) -> None:
        """Ask for every tool use at once, then run the allowed ones in order.

        Every accepted tool-use id gets exactly one terminal ``tool_result``
        (spec hard-interrupt order), in the order the model asked.
        """
        #: DEC-HOOK-3: a PreToolUse hook's updatedInput, and the hooks' context per tool use.
        self._inputs: dict[str, FrozenDict] = {}
        self._notes: dict[str, list[str]] = {}
        #: DECISIONS section 3: PostToolBatch's context, sent after the batch's results.
        self._batch_notes: tuple[str, ...] = ()
        decisions = [
            _NO_ASK if self._structured(tc, st) else self._decide_safely(tc, st, scope)
            for tc in calls
        ]
        results: list[ToolResultBlock] = []
        try:
            for tc, decision in zip(calls, decisions, strict=True):
                try:
                    if self._structured(tc, st):
                        content, is_error = self._answer_structured(tc, st)
                    else:
                        content, is_error = self._one(tc, decision, st, scope)
                except Exception as exc:  # spec "Ordering": still exactly one tool_result
                    logger.exception("tool {} failed", tc.name)
                    content, is_error = _failed(tc.name, exc), True
                notes = self._notes.pop(tc.id, ())
                if notes:
                    # DEC-HOOK-3: additionalContext (and a PostToolUse block's
                    # reason) reaches the model with the tool's result.
                    content = "\n\n".join((content, *notes))
                results.append(
                    ToolResultBlock(tool_use_id=tc.id, content=content, is_error=is_error)
                )
                self._emit_tool_result(tc.id, content, is_error)
            self._batch_notes = self._after_batch(calls, results, st, scope)
        finally:
            self._answer_rest(calls, results)
        self._emit(
            (
                outbound.tool_use_summary(
                    _batch_summary(calls, results),
                    tuple(tc.id for tc in calls),
                    session_id=self._s.session_id,
                    uuid=self._uuid(),
                ),
            )
        )

    def _structured(self, tc: ToolCall, st: TurnState) -> bool:
        output = self.output
        return output is not None and st.structured is not None and tc.name == output.spec.name

    def _answer_structured(self, tc: ToolCall, st: TurnState) -> tuple[str, bool]:
        """A ``StructuredOutput`` call: validated, counted, never asked about."""
        if self.output is None or st.structured is None:
            raise RuntimeError("StructuredOutput answered without a schema")
        st.structured, answer = self.output.answer(st.structured, tc.input)
        return answer.content, answer.is_error

    def _answer_rest(self, calls: list[ToolCall], results: list[ToolResultBlock]) -> None:
        """Answer every tool use the loop did not reach, then store the batch's results."""
        answered = {r.tool_use_id for r in results}
        for tc in calls:
            if tc.id not in answered:
                results.append(ToolResultBlock(tool_use_id=tc.id, content=NOT_RUN, is_error=True))
                self._emit_tool_result(tc.id, NOT_RUN, True)
        tool_media = self._s.ports.tool_media
        media = tuple(b for tc in calls for b in tool_media(tc.id)) if tool_media else ()
        notes = tuple(TextBlock(text=note) for note in self._batch_notes)
        self._s.history.append(Message(role="user", content=(*results, *media, *notes)))

    def _after_batch(
        self,
        calls: list[ToolCall],
        results: list[ToolResultBlock],
        st: TurnState,
        scope: CancelScope,
    ) -> tuple[str, ...]:
        """PostToolBatch (DECISIONS section 3): once every tool use of the
        batch has its result, before the next model call; its hooks'
        additionalContext (and a block's reason) reaches the model after the
        results, ``continue: false`` stops the turn."""
        hooks = self._s.ports.hooks
        if hooks is None or scope.is_set():
            return ()
        answered = {r.tool_use_id: r for r in results}
        batch: list[FrozenDict] = []
        for tc in calls:
            result = answered[tc.id]
            one: dict[str, object] = {
                "tool_name": tc.name,
                "tool_input": self._inputs.get(tc.id, tc.input),
                "tool_use_id": tc.id,
            }
            if not result.is_error:
                one["tool_response"] = result.content
            batch.append(FrozenDict(one))
        fired = hooks.fire("PostToolBatch", {"tool_calls": tuple(batch)}, cancelled=scope.is_set)
        if fired.stop:
            st.hook_stop = fired.stop_reason or "stopped by a PostToolBatch hook"
        return (*(fired.reasons if fired.blocked else ()), *fired.contexts)

    def _one(
        self,
        tc: ToolCall,
        decision: PermissionOutcome | Future[PermissionOutcome],
        st: TurnState,
        scope: CancelScope,
    ) -> tuple[str, bool]:
        """Settle one tool use's permission and run it if allowed."""
        outcome = self._settle(decision)
        self._s.history.note(
            permission_entry(
                tool_name=tc.name,
                tool_use_id=tc.id,
                behavior=outcome.behavior,
                decided_by=outcome.decided_by,
                reason=outcome.reason,
            )
        )
        if outcome.updated_permissions:
            self._policy.apply(outcome.updated_permissions)
        if outcome.behavior == "deny":
            st.denials.append(
                FrozenDict(tool_name=tc.name, tool_use_id=tc.id, tool_input=shown(tc))
            )
            if outcome.interrupt:
                scope.cancel()
            if outcome.decided_by != "interrupt":
                self._denied(tc, self._inputs.get(tc.id, tc.input), outcome.message, st, scope)
            return outcome.message, True
        if scope.is_set():
            return INTERRUPTED, True
        tool_input = (
            outcome.updated_input
            if outcome.updated_input is not None
            else self._inputs.get(tc.id, tc.input)
        )
        tool = self._s.tools.named[tc.name]
        refused = self._policy.denied_before_run(tool, tool_input)
        if refused is not None:
            # DEC-SET-1, DEC-PERM-MODE: every run passes here, so the deny rules
            # of every source see the input it runs with, whatever replaced it
            # (a host's or a hook's updatedInput, any later source).
            self._s.history.note(
                permission_entry(
                    tool_name=tc.name,
                    tool_use_id=tc.id,
                    behavior="deny",
                    decided_by="rule",
                    reason=refused,
                )
            )
            too_large = record_limit.tool_input_too_large(tool_input)
            shown_input = FrozenDict() if too_large else tool_input
            st.denials.append(
                FrozenDict(tool_name=tc.name, tool_use_id=tc.id, tool_input=shown_input)
            )
            self._denied(tc, tool_input, refused, st, scope)
            return refused, True
        content, is_error = self._execute(tool, tool_input, scope, tc.id, st)
        return self._after(
            tc, tool_input=tool_input, content=content, is_error=is_error, st=st, scope=scope
        )

    def _denied(
        self, tc: ToolCall, tool_input: FrozenDict, reason: str, st: TurnState, scope: CancelScope
    ) -> None:
        """PermissionDenied (DECISIONS section 3), as Claude Code fires it after
        a rule, the mode, a hook or the host denied a tool use (not after an
        interrupt). Its hooks observe; ``retry`` is ignored (agentx has no
        classifier verdict to retry), ``continue: false`` stops the turn."""
        hooks = self._s.ports.hooks
        if hooks is None:
            return
        denied = hooks.fire(
            "PermissionDenied",
            {
                "tool_name": tc.name,
                "tool_input": tool_input,
                "tool_use_id": tc.id,
                "reason": reason,
            },
            cancelled=scope.is_set,
        )
        if denied.contexts:
            self._notes.setdefault(tc.id, []).extend(denied.contexts)
        if denied.stop:
            st.hook_stop = denied.stop_reason or "stopped by a PermissionDenied hook"

    def close_unrun(self, calls: list[ToolCall], reason: str) -> None:
        """Every accepted tool-use id still gets exactly one tool_result."""
        if not calls:
            return
        for tc in calls:
            self._emit_tool_result(tc.id, reason, True)
        self._s.history.append(
            Message(
                role="user",
                content=tuple(
                    ToolResultBlock(tool_use_id=tc.id, content=reason, is_error=True)
                    for tc in calls
                ),
            )
        )

    def _execute(
        self,
        tool: ToolRunner,
        tool_input: FrozenDict,
        scope: CancelScope,
        tool_use_id: str,
        st: TurnState,
    ) -> tuple[str, bool]:
        """Run one allowed tool; a network tool first asks for its host and
        port through the same correlated path, and any error denies
        (WIRE-PERM-004). A tool that runs inside the turn (the ``Agent``
        tool, DEC-TURN-3) gets the turn's state: its model calls count there."""
        in_turn = getattr(tool, "run_in_turn", None)
        if in_turn is not None:
            try:
                content, is_error = in_turn(tool_input, scope, tool_use_id=tool_use_id, turn=st)
                return content, is_error
            except Cancelled:
                return INTERRUPTED, True
        target = getattr(tool, "network_target", None)
        destination = target(tool_input) if target is not None else None
        if destination is not None:
            self._state.permission_opened()
            network = self._settle(self._gate.ask_network(*destination, cancel=scope))
            if network.behavior != "allow":
                return f"Network access to {destination[0]}:{destination[1]} denied", True
        # WIRE-012: a tool's own model call (WebSearch's) counts into the turn.
        counted = getattr(tool, "execute_counted", None)
        opened = self._s.ports.clock()

        def usage(spent: Usage, model: str) -> None:
            self._s.account(st, opened, spent, model=model)

        try:
            with self._progress(tool_use_id, tool.name):
                if counted is not None:
                    content, is_error = counted(
                        tool_input, scope, tool_use_id=tool_use_id, usage=usage
                    )
                    return content, is_error
                return tool.execute(tool_input, scope, tool_use_id=tool_use_id)
        except Cancelled:
            return INTERRUPTED, True

    def _decide_safely(
        self, tc: ToolCall, st: TurnState, scope: CancelScope
    ) -> PermissionOutcome | Future[PermissionOutcome]:
        """:meth:`_decide`; a check that raises denies (WIRE-PERM-002: fail closed)."""
        try:
            return self._decide(tc, st, scope)
        except Exception as exc:
            logger.exception("permission check of {} failed", tc.name)
            return PermissionOutcome(
                behavior="deny", message=f"permission check failed ({type(exc).__name__})"
            )

    def _decide(
        self, tc: ToolCall, st: TurnState, scope: CancelScope
    ) -> PermissionOutcome | Future[PermissionOutcome]:
        """The policy, after the PreToolUse hooks (DECISIONS section 3): a hook's block
        denies; its updatedInput is what the policy evaluates (every deny rule
        holds); its allow skips only the mode's ask (an ask rule or a path
        outside the boundary still asks); its ask asks even where the policy
        allows."""
        tool = self._s.tools.named.get(tc.name)
        if tool is None:
            return PermissionOutcome(behavior="deny", message=f"No such tool available: {tc.name}")
        if record_limit.tool_input_too_large(tc.input):
            # DEC-COMPAT-3: neither its block nor its request fits one line.
            return PermissionOutcome(behavior="deny", message=record_limit.TOOL_INPUT_TOO_LARGE)
        tool_input, verdict = tc.input, None
        hooks = self._s.ports.hooks
        if hooks is not None:
            pre = hooks.fire(
                "PreToolUse",
                {"tool_name": tc.name, "tool_input": tc.input, "tool_use_id": tc.id},
                cancelled=scope.is_set,
            )
            if pre.contexts:
                self._notes[tc.id] = list(pre.contexts)
            if pre.stop:
                st.hook_stop = pre.stop_reason or "stopped by a PreToolUse hook"
                return PermissionOutcome(behavior="deny", message=st.hook_stop, decided_by="hook")
            if pre.blocked:
                return PermissionOutcome(
                    behavior="deny",
                    message=pre.reason or "blocked by a PreToolUse hook",
                    decided_by="hook",
                )
            if pre.updated_input is not None:
                if record_limit.tool_input_too_large(pre.updated_input):
                    return PermissionOutcome(
                        behavior="deny", message=record_limit.TOOL_INPUT_TOO_LARGE
                    )
                tool_input = self._inputs[tc.id] = pre.updated_input
            verdict = pre.decision
        decision = self._policy.evaluate(tool, tool_input)
        decider = policy_decider(decision.source)
        if decision.behavior == "deny":
            return PermissionOutcome(
                behavior="deny",
                message=decision.reason or "Permission denied",
                decided_by=decider,
                reason=decision.reason,
            )
        updated = self._inputs.get(tc.id)
        if decision.behavior == "allow" and verdict != "ask":
            return PermissionOutcome(
                behavior="allow", updated_input=updated, decided_by=decider, reason=decision.reason
            )
        if verdict == "allow" and _mode_asks(decision):
            return PermissionOutcome(behavior="allow", updated_input=updated, decided_by="hook")
        if hooks is not None:
            hooks.fire(
                "Notification",
                {
                    "message": f"Claude needs your permission to use {tc.name}",
                    "notification_type": "permission_prompt",
                },
                cancelled=scope.is_set,
            )
        self._state.permission_opened()
        # DEC-CLI-3: the permission wire loads with the first ask, not at start.
        from agentx.messages.permission_wire import safe_description  # noqa: PLC0415

        return self._gate.ask(
            PermissionAsk(
                tool_name=tc.name,
                tool_input=tool_input,
                tool_use_id=tc.id,
                description=safe_description(tool.name, lambda: tool.summarize(tool_input)),
                suggestions=self._policy.suggestions(tool, tool_input),
                blocked_path=decision.blocked_path,
                cancel=scope,
            )
        )

    def _after(
        self,
        tc: ToolCall,
        *,
        tool_input: FrozenDict,
        content: str,
        is_error: bool,
        st: TurnState,
        scope: CancelScope,
    ) -> tuple[str, bool]:
        """PostToolUse (or PostToolUseFailure) with the tool's response
        (DECISIONS section 3); what the hooks add goes to the model with the
        result, and a PostToolUse ``updatedToolOutput`` (``updatedMCPToolOutput``
        for an MCP tool) replaces what the model sees of the tool's output."""
        hooks = self._s.ports.hooks
        if hooks is None:
            return content, is_error
        fields: dict[str, object] = {
            "tool_name": tc.name,
            "tool_input": tool_input,
            "tool_use_id": tc.id,
        }
        if is_error:
            fields.update(error=content, is_interrupt=scope.is_set())
        else:
            fields["tool_response"] = content
        post = hooks.fire(
            "PostToolUseFailure" if is_error else "PostToolUse", fields, cancelled=scope.is_set
        )
        notes = [*(post.reasons if post.blocked else ()), *post.contexts]
        if notes:
            self._notes.setdefault(tc.id, []).extend(notes)
        if post.stop:
            st.hook_stop = post.stop_reason or "stopped by a PostToolUse hook"
        replaced = post.updated_output
        if replaced is None and tc.name.startswith("mcp__"):
            replaced = post.updated_mcp_output
        return (content, is_error) if is_error or replaced is None else (replaced, is_error)

    def _settle(self, decision: PermissionOutcome | Future[PermissionOutcome]) -> PermissionOutcome:
        if isinstance(decision, PermissionOutcome):
            return decision
        try:
            # Deadline enforced elsewhere: the arbiter settles this future
            # exactly once, on the host's answer, a hook's result (each hook
            # has its timeout), an interrupt (the turn's cancel scope), input
            # EOF (the broker rejects) or the session's stop (the runner
            # cancels the turn and the arbiter denies what is open). A
            # person's answer itself has no deadline in the protocol.
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
                    session_id=self._s.session_id,
                    uuid=self._uuid(),
                ),
            )
        )


def _mode_asks(decision: PolicyDecision) -> bool:
    """The policy asks only because of the mode (DEC-PERM-MODE's last step),
    not an ask rule nor a path outside the boundary: what a PreToolUse
    hook's allow may skip (DECISIONS section 3)."""
    return decision.behavior == "ask" and decision.source == "mode"


def shown(tc: ToolCall) -> FrozenDict:
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
