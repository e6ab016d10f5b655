"""ArbiterGate: the turn engine's permission gate over the arbiter actor
(spec "Permission race", WIRE-PERM-001..004, WIRE-011).

The engine's :class:`~agentx.turns.contracts.PermissionAsk` goes to the
:class:`~agentx.actors.arbiter.PermissionArbiterActor` with the hooks that
apply and a future the arbiter settles exactly once; the asking turn's cancel
aborts the ask if it is still open.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pykka

from agentx.actors.arbiter import AbortAsk, AskPermission
from agentx.messages.frozen import FrozenDict
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionAsk, PermissionOutcome

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agentx.messages.hooks.config import HookSpec


class ArbiterGate:
    """The turn engine's :class:`~agentx.turns.contracts.PermissionGate` over the arbiter."""

    def __init__(
        self,
        arbiter: Any,
        hooks_for: Callable[[str], tuple[HookSpec, ...]],
        new_uuid: Callable[[], str],
        show: Callable[[str, str], None] | None = None,
    ) -> None:
        """``show`` shows a PermissionRequest hook's ``systemMessage`` (the
        session's hooks' way, DECISIONS section 3)."""
        self._arbiter = arbiter
        self._hooks_for = hooks_for
        self._uuid = new_uuid
        self._show = show

    def ask(self, ask: PermissionAsk) -> Future[PermissionOutcome]:
        return self._tell(ask, hooks=self._hooks_for(ask.tool_name))

    def ask_network(
        self, host: str, port: int, *, cancel: CancelScope
    ) -> Future[PermissionOutcome]:
        """WIRE-PERM-004/023: the synthetic SandboxNetworkAccess request."""
        from agentx.messages.permission_wire import network_access_request  # noqa: PLC0415 - DEC-CLI-3

        request = network_access_request(host, port, self._uuid())
        ask = PermissionAsk(
            tool_name=request["tool_name"],
            tool_input=request["input"],
            tool_use_id=request["tool_use_id"],
            description=request["description"],
            suggestions=(),
            blocked_path=None,
            cancel=cancel,
        )
        return self._tell(ask, hooks=(), request=request)

    def _tell(
        self,
        ask: PermissionAsk,
        *,
        hooks: tuple[HookSpec, ...],
        request: FrozenDict | None = None,
    ) -> Future[PermissionOutcome]:
        # Loaded with the first ask, not at start (DEC-CLI-3).
        from concurrent.futures import Future  # noqa: PLC0415

        future: Future[PermissionOutcome] = Future()
        self._arbiter.tell(
            AskPermission(ask=ask, hooks=hooks, future=future, request=request, show=self._show)
        )
        # Told after the ask (same sender, same FIFO): a cancel always finds
        # the ask started or already refused, and settles it (never a hang).
        tool_use_id = ask.tool_use_id
        ask.cancel.on_cancel(lambda: self._abort(tool_use_id))
        return future

    def _abort(self, tool_use_id: str) -> None:
        # A stopped arbiter already denied every open ask (on_stop).
        with contextlib.suppress(pykka.ActorDeadError):
            self._arbiter.tell(AbortAsk(tool_use_id))
