"""Which actor owns each decoded inbound record (DESIGN.md "The actors";
spec "Input records", WIRE-002, WIRE-006, WIRE-017, WIRE-021).

Sans-IO: :func:`route_of` names the owner; the host's reader callback only
carries the record there.
"""

from __future__ import annotations

from typing import Final, Literal

from agentx.messages.decode import InboundRecord
from agentx.messages.inbound import (
    InvalidEnvUpdate,
    KeepAlive,
    PriorContextRecord,
    UnknownRecord,
    UpdateEnvironmentVariables,
)
from agentx.messages.inbound_control import (
    ControlRequest,
    ControlResponse,
    InvalidControlRequest,
    InvalidControlResponse,
    UncorrelatableControl,
)
from agentx.messages.inbound_user import InvalidUserRecord, UserRecord

#: Which actor owns an inbound record (the :class:`Route` names).
RouteName = Literal[
    "turn",
    "prior_context",
    "control_response",
    "upload",
    "control_request",
    "input_error",
    "environment",
    "invalid_environment",
    "unknown",
    "keep_alive",
]


class Route:
    """The :data:`RouteName` values by name: constants, not a StrEnum, whose
    class costs about 0.2 ms to define before the ``initialize`` response
    (start-up, DEC-CLI-3); the ``Literal`` keeps the set closed."""

    #: A prompt: the turn runner admits it (DEC-TURN-1, WIRE-020).
    TURN: Final = "turn"
    #: ``isReplay`` user, ``assistant`` and ``system`` records seed the
    #: conversation and never execute a tool (spec "Input records").
    PRIOR_CONTEXT: Final = "prior_context"
    #: The broker correlates answers to agentx's own requests (WIRE-006..009).
    CONTROL_RESPONSE: Final = "control_response"
    #: ``attachment_import`` steps go to the upload manager.
    UPLOAD: Final = "upload"
    #: The serial inbound dispatcher (the supervisor), valid or not: an
    #: invalid request still gets its correlated error.
    CONTROL_REQUEST: Final = "control_request"
    #: An invalid prompt's one input-error result; the stream goes on (WIRE-021).
    INPUT_ERROR: Final = "input_error"
    #: ``update_environment_variables``: the session environment for tools.
    ENVIRONMENT: Final = "environment"
    #: DEC-ENV-1: an invalid environment update gets one stderr diagnostic
    #: naming its line and is otherwise ignored; it never produces a result.
    INVALID_ENVIRONMENT: Final = "invalid_environment"
    #: WIRE-002: logged and otherwise ignored.
    UNKNOWN: Final = "unknown"
    #: Accepted and ignored semantically.
    KEEP_ALIVE: Final = "keep_alive"


#: The owner of each record type but the user record (its own rule) and the
#: ``attachment_import`` steps (:data:`Route.UPLOAD`), whose module is not
#: imported here: it loads with the first such record (DEC-CLI-3).
ROUTES: dict[type, RouteName] = {
    PriorContextRecord: Route.PRIOR_CONTEXT,
    ControlResponse: Route.CONTROL_RESPONSE,
    InvalidControlResponse: Route.CONTROL_RESPONSE,
    ControlRequest: Route.CONTROL_REQUEST,
    InvalidControlRequest: Route.CONTROL_REQUEST,
    UncorrelatableControl: Route.CONTROL_REQUEST,
    InvalidUserRecord: Route.INPUT_ERROR,
    InvalidEnvUpdate: Route.INVALID_ENVIRONMENT,
    UpdateEnvironmentVariables: Route.ENVIRONMENT,
    UnknownRecord: Route.UNKNOWN,
    KeepAlive: Route.KEEP_ALIVE,
}


def route_of(record: InboundRecord) -> RouteName:
    """The owner of ``record``."""
    if isinstance(record, UserRecord):
        return Route.PRIOR_CONTEXT if record.is_replay else Route.TURN
    route = ROUTES.get(type(record))
    if route is not None:
        return route
    # An ``attachment_import`` step: decoding it loaded its module (DEC-CLI-3).
    from agentx.messages.inbound_import import AttachmentImport  # noqa: PLC0415

    if isinstance(record, AttachmentImport):
        return Route.UPLOAD
    raise KeyError(type(record))
