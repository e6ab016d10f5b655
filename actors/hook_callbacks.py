"""SDK callback hooks through the control broker (DEC-PROFILE-2, DECISIONS section 3).

:class:`BrokerHookCallbacks` is the :class:`~agentx.hooks.runner.CallbackPort`
of an ``sdk``-profile session: each hook that fires is one ``hook_callback``
control request, registered with the broker before its envelope drains
(WIRE-009) and read by :class:`~agentx.messages.hooks.callbacks.HookCallbackSchema`.
The runner waits on it from the turn's thread (never the reader's nor the
supervisor's) and withdraws it (``control_cancel_request``) when its
deadline passes or its event no longer needs it.
"""

from __future__ import annotations

import pykka

from agentx.actors.broker import ControlBroker, ControlRequestFailed, PendingControl
from agentx.messages.frozen import FrozenDict
from agentx.messages.hooks.callbacks import HookCallbackSchema, hook_callback_request
from agentx.messages.hooks.verdicts import Verdict, failed


class BrokerHookCall:
    """One ``hook_callback`` request in flight."""

    def __init__(self, broker: ControlBroker, pending: PendingControl[Verdict]) -> None:
        self._broker = broker
        self._pending = pending

    def wait(self, timeout: float) -> Verdict | None:
        try:
            return self._pending.result.get(timeout=timeout)
        except pykka.Timeout:
            return None
        except ControlRequestFailed as exc:
            return failed(f"hook callback failed: {exc.reason}: {exc.message}")

    def cancel(self) -> None:
        """Withdraw the request; a settled one has nothing left to cancel."""
        self._broker.abort(self._pending.request_id)


class BrokerHookCallbacks:
    """Sends ``hook_callback`` requests to the client (DEC-PROFILE-2)."""

    def __init__(self, broker: ControlBroker) -> None:
        self._broker = broker

    def start(
        self, callback_id: str, hook_input: FrozenDict, tool_use_id: str | None
    ) -> BrokerHookCall:
        schema = HookCallbackSchema(
            event=str(hook_input["hook_event_name"]), tool_use_id=tool_use_id or ""
        )
        pending = self._broker.ask(
            hook_callback_request(callback_id, hook_input, tool_use_id), schema
        )
        return BrokerHookCall(self._broker, pending)
