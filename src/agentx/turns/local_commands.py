"""Local (slash) commands: ``/compact``, ``/context``, ``/cost``, ``/clear``
and ``/help`` (DEC-TURN-1, WIRE-005).

A command is a turn of its own: its ``system/local_command_output``, then
exactly one result (DEC-TURN-1). No model call runs, except ``/compact``'s
summary; nothing enters the history.
"""

from __future__ import annotations

from agentx.diagnostics import logger
from agentx.messages import outbound
from agentx.messages.accounting import TurnAccounting
from agentx.messages.slash_commands import SlashCommand, render_context, render_cost, render_help
from agentx.providers.base import Cancelled
from agentx.sessions.compaction import CompactionFailed
from agentx.sessions.history import TranscriptWriteFailed
from agentx.turns.cancel import CancelScope
from agentx.turns.compactor import Compactor
from agentx.turns.contracts import CommandFailed
from agentx.turns.results import INTERRUPTED, TurnState
from agentx.turns.session import TurnSession


class LocalCommands:
    """Runs one session's slash commands."""

    def __init__(self, session: TurnSession, compactor: Compactor) -> None:
        self._s = session
        self._compactor = compactor
        self._emit = session.ports.emit
        self._uuid = session.ports.new_uuid

    def run(self, command: SlashCommand, scope: CancelScope) -> None:
        """The command's output record, then its one result."""
        st = TurnState(
            accounting=TurnAccounting(self._s.config.pricing), started=self._s.ports.clock()
        )
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
                        output, session_id=self._s.session_id, uuid=self._uuid()
                    ),
                )
            )
        st.final_text = output
        self._emit((self._s.result(st, prompt_uuid=None),))

    def _command(self, command: SlashCommand, st: TurnState, scope: CancelScope) -> str:
        if command.name == "compact":
            try:
                return self._compactor.compact("manual", command.arguments, st, scope)
            except CompactionFailed as exc:
                raise CommandFailed(f"compaction failed: {exc}") from None
        if command.name == "context":
            return render_context(self._s.context_usage())
        if command.name == "cost":
            spend = self._s.spend
            return render_cost(
                total_cost_usd=spend.accounting.total_cost_usd(),
                api_seconds=spend.api_seconds,
                model_usage=spend.accounting.model_usage(),
            )
        if command.name == "clear":
            return self._clear()
        return render_help()

    def _clear(self) -> str:
        """``/clear``: a new session id (on every later record), an empty
        context and fresh ``/cost`` totals; the old session stays resumable.
        The old session's SessionEnd hooks (reason ``clear``) run first, the
        new one's SessionStart hooks (source ``clear``) after (DECISIONS section 3)."""
        hooks = self._s.ports.hooks
        if hooks is not None:
            hooks.fire("SessionEnd", {"reason": "clear"})
        session_id = self._uuid()
        try:
            self._s.history.clear(session_id)
        except TranscriptWriteFailed as exc:  # DECISIONS section 8: one line
            logger.error("clear: the new session could not be started: {}", exc)
            raise CommandFailed("clear failed: the new session could not be started") from None
        except Exception:
            logger.exception("clear: the new session could not be started")
            raise CommandFailed("clear failed: the new session could not be started") from None
        self._s.identity.renew(session_id)
        self._s.spend.reset()
        self._s.pending_context.clear()
        # DEC-SET-1: the new conversation's first prompt carries the memory files again.
        self._s.pending_context.extend(self._s.opening())
        if hooks is not None:
            started = hooks.fire("SessionStart", {"source": "clear", "model": self._s.config.model})
            self._s.pending_context.extend(started.contexts)
        return f"Cleared the conversation; new session {session_id}"
