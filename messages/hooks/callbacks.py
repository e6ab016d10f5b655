"""SDK callback hooks on the wire (DEC-PROFILE-2, DECISIONS section 3).

In the ``sdk`` control profile ``initialize`` carries ``hooks`` (event ->
matchers with ``hookCallbackIds``); when one fires agentx sends the client
``{"subtype": "hook_callback", "callback_id": ID, "input": INPUT,
"tool_use_id": T?}`` through the control broker and reads the answer's
payload exactly as a command hook's JSON stdout
(:func:`~agentx.messages.hooks.verdicts.json_verdict`). An error response,
an answer that is not an object, or no answer within the matcher's
``timeout`` is the hook's failure (it never approves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.hooks.config import HookConfigError, initialize_groups

if TYPE_CHECKING:
    from agentx.messages.hooks.verdicts import Verdict

HOOK_CALLBACK: Final = "hook_callback"


def hook_callback_request(
    callback_id: str, hook_input: FrozenDict, tool_use_id: str | None
) -> FrozenDict:
    """The ``request`` of a ``hook_callback`` control request."""
    members: dict[str, object] = {
        "subtype": HOOK_CALLBACK,
        "callback_id": callback_id,
        "input": hook_input,
    }
    if tool_use_id is not None:
        members["tool_use_id"] = tool_use_id
    request: FrozenDict = freeze(members)
    return request


class HookCallbackSchema(Struct, frozen=True, kw_only=True):
    """The schema on a ``hook_callback`` waiter (WIRE-009): the payload as a
    verdict of ``event``. It never raises: what it cannot read is a failure."""

    event: str
    tool_use_id: str = ""

    def __call__(self, payload: FrozenDict | None, /) -> Verdict:
        # DEC-CLI-3: the verdict grammar loads with the first callback's answer.
        from agentx.messages.hooks.verdicts import Verdict, json_verdict  # noqa: PLC0415

        if payload is None:
            return Verdict()
        return json_verdict(self.event, payload, tool_use_id=self.tool_use_id)


def check_initialize_hooks(value: object) -> str | None:
    """The ``initialize`` field check of ``hooks`` (DEC-PROFILE-2): None, or
    what is wrong, without the field's name (the caller prefixes it)."""
    try:
        initialize_groups(value)
    except HookConfigError as exc:
        text = str(exc)
        return text.removeprefix("hooks.").removeprefix("hooks ")
    return None
