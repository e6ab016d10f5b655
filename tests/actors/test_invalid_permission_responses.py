"""WIRE-PERM-044 over the real decoder, broker and arbiter: every invalid
answer to ``can_use_tool`` resolves as a denial with the one fixed message
``invalid permission response`` (WIRE-PERM-002: never an allow)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.decode import decode_line
from agentx.messages.framing import Line
from agentx.messages.inbound_control import ControlResponse, InvalidControlResponse
from agentx.messages.permission_wire import INVALID_RESPONSE_MESSAGE
from agentx.turns.contracts import PermissionOutcome
from tests.actors.helpers import WAIT
from tests.actors.test_arbiter import Rig

ID = "{id}"

#: Each raw control_response, ``{id}`` standing for the request's id.
FORMS: dict[str, dict[str, Any]] = {
    "payload-string": {"subtype": "success", "request_id": ID, "response": "allow"},
    "payload-array": {"subtype": "success", "request_id": ID, "response": [{"behavior": "allow"}]},
    "payload-number": {"subtype": "success", "request_id": ID, "response": 1},
    "payload-null": {"subtype": "success", "request_id": ID, "response": None},
    "payload-missing": {"subtype": "success", "request_id": ID},
    "unknown-outer-member": {
        "subtype": "success",
        "request_id": ID,
        "response": {"behavior": "allow"},
        "extra": True,
    },
    "unknown-outer-subtype": {
        "subtype": "maybe",
        "request_id": ID,
        "response": {"behavior": "allow"},
    },
    "error-response": {"subtype": "error", "request_id": ID, "error": "the host failed"},
    "error-response-empty-text": {"subtype": "error", "request_id": ID, "error": ""},
    "error-response-with-payload": {
        "subtype": "error",
        "request_id": ID,
        "error": "no",
        "response": {"behavior": "allow"},
    },
    "success-with-error-member": {
        "subtype": "success",
        "request_id": ID,
        "response": {"behavior": "allow"},
        "error": "x",
    },
    "behavior-ask": {"subtype": "success", "request_id": ID, "response": {"behavior": "ask"}},
    "behavior-missing": {"subtype": "success", "request_id": ID, "response": {}},
    "unknown-decision-member": {
        "subtype": "success",
        "request_id": ID,
        "response": {"behavior": "allow", "because": "yes"},
    },
    "deny-message-not-a-string": {
        "subtype": "success",
        "request_id": ID,
        "response": {"behavior": "deny", "message": 7},
    },
    "allow-updated-input-not-an-object": {
        "subtype": "success",
        "request_id": ID,
        "response": {"behavior": "allow", "updatedInput": "rm -rf /"},
    },
    "tool-use-id-mismatch": {
        "subtype": "success",
        "request_id": ID,
        "response": {"behavior": "allow", "toolUseID": "toolu_other"},
    },
}


def _decoded(form: dict[str, Any], request_id: str) -> ControlResponse | InvalidControlResponse:
    text = json.dumps({"type": "control_response", "response": form}).replace(ID, request_id)
    record = decode_line(Line(number=1, data=text.encode()))
    assert isinstance(record, ControlResponse | InvalidControlResponse)
    return record


@pytest.mark.parametrize("form", FORMS.values(), ids=FORMS.keys())
def test_every_invalid_permission_response_denies_with_the_fixed_message(
    tmp_path: Path, form: dict[str, Any]
) -> None:
    rig = Rig(tmp_path)
    future = rig.ask()
    rig.broker.on_response(_decoded(form, rig.request()["request_id"]))
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message=INVALID_RESPONSE_MESSAGE, decided_by="host"
    )
