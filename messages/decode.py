"""Strict record decoding and routing (WIRE-001, WIRE-002, WIRE-014, WIRE-021).

:func:`parse_object` is the JSON layer: strict UTF-8 (no BOM, no UTF-16, no
encoded surrogates), the one strict decoder of :mod:`agentx.messages.strict_json`
(the stdlib decoder with an ``object_pairs_hook``) that
compares decoded member names (so ``"a"`` and ``"\\u0061"`` collide) and
freezes objects and arrays as they are built, no NaN/Infinity literals, no
number that overflows to infinity, no lone surrogate escape, at most 64
levels of nesting, and a top-level object. Anything else is a
:class:`FatalDecodeError` whose message is fixed text plus numbers, so it
never echoes record content (and so never a credential).

:func:`decode_line` routes a decoded object by its top-level ``type`` into the
records of :mod:`agentx.messages.inbound` and applies DECISIONS section 1:

===============================================  ===============================
what is wrong                                    result
===============================================  ===============================
any JSON-layer failure, missing/non-string type  ``FatalDecodeError``
duplicate member name anywhere, except below     ``FatalDecodeError``
duplicate only inside a control_request's        ``InvalidControlRequest``
``request`` with a string ``request_id``
attachment_import closed schema (WIRE-018)       ``FatalDecodeError``
control_request: no string ``request_id``        ``UncorrelatableControl``
control_request: bad ``request``                 ``InvalidControlRequest``
control_response: no string ``request_id``       ``UncorrelatableControl``
control_response: outer union broken             ``InvalidControlResponse``
user record semantically invalid                 ``InvalidUserRecord``
update_environment_variables not a string map    ``InvalidEnvUpdate``
unknown ``type``                                 ``UnknownRecord`` (WIRE-002)
===============================================  ===============================

A duplicate inside a ``control_response`` is fatal: DECISIONS section 1 makes
an exception only for ``control_request``, and a response's correlation id
sits inside the very object whose members are ambiguous.
"""

from __future__ import annotations

import codecs
import json
from typing import TYPE_CHECKING, Any, NoReturn, Union

from agentx.messages.framing import MAX_RECORD_BYTES, Line
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound import (
    InvalidEnvUpdate,
    KeepAlive,
    PriorContextRecord,
    SchemaViolation,
    UnknownRecord,
    UpdateEnvironmentVariables,
    parse_environment_update,
)
from agentx.messages.inbound_control import (
    ControlRequest,
    ControlResponse,
    InvalidControlRequest,
    InvalidControlResponse,
    UncorrelatableControl,
    parse_control_request,
    parse_control_response,
)
from agentx.messages.inbound_user import InvalidUserRecord, UserRecord, parse_user
from agentx.messages.strict_json import (
    DUPLICATE_MEMBER,
    MAX_DEPTH,
    DuplicateMember,
    Members,
    NonFiniteNumber,
    StrictJSONError,
    decode,
    decode_members,
    has_lone_surrogate,
    too_deep,
)

if TYPE_CHECKING:
    from agentx.messages.inbound_import import AttachmentImport

_BOM = codecs.BOM_UTF8

#: Every decoded record. The ``attachment_import`` steps are named, not
#: imported: :mod:`agentx.messages.inbound_import` loads with the first such
#: record (start-up, DEC-CLI-3), so the union holds a forward reference.
InboundRecord = Union[
    UserRecord,
    InvalidUserRecord,
    "AttachmentImport",
    ControlRequest,
    InvalidControlRequest,
    ControlResponse,
    InvalidControlResponse,
    UncorrelatableControl,
    KeepAlive,
    UpdateEnvironmentVariables,
    InvalidEnvUpdate,
    PriorContextRecord,
    UnknownRecord,
]


class FatalDecodeError(Exception):
    """The input stream cannot go on (WIRE-001): one diagnostic naming the
    line, exit status 1. ``message`` is bounded and never echoes content."""

    def __init__(self, line_number: int, message: str) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number
        self.message = message


# --- the JSON layer ---------------------------------------------------------


def _parse(line: Line) -> FrozenDict | Members:
    """Decode ``line`` into a frozen object, or, when some object in it has a
    duplicate member, into :class:`Members` that keep every occurrence."""
    data = line.data
    if data.startswith(_BOM):
        _fatal(line, "a byte order mark is not allowed")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _fatal(line, "invalid UTF-8")
    value: Any
    try:
        try:
            value = decode(text)
        except DuplicateMember:
            value = decode_members(text)
    except NonFiniteNumber:
        _fatal(line, "NaN and Infinity are not JSON")
    except StrictJSONError as refused:
        _fatal(line, refused.reason)
    except RecursionError:
        _fatal(line, f"nesting deeper than {MAX_DEPTH} levels")
    except json.JSONDecodeError as error:
        # json's own messages may end in "at" ("Unterminated string starting at").
        _fatal(line, f"invalid JSON: {error.msg.removesuffix(' at')} at column {error.colno}")
    except ValueError:
        _fatal(line, "invalid JSON: number out of range")
    if type(value) is not FrozenDict and type(value) is not Members:
        _fatal(line, "a record must be a JSON object")
    # Gates on the text: a one-character ``in`` on str is a memchr, and the
    # common record skips the depth scan and the escape scan.
    opening = text.count("{") + text.count("[") if "[" in text else text.count("{")
    if opening > MAX_DEPTH and too_deep(data):
        _fatal(line, f"nesting deeper than {MAX_DEPTH} levels")
    if "\\" in text and has_lone_surrogate(text):
        _fatal(line, "lone surrogate escape")
    return value


def parse_object(line: Line) -> FrozenDict:
    """The strict JSON layer alone: a frozen object, or ``FatalDecodeError``
    (a duplicate member anywhere is fatal here)."""
    value = _parse(line)
    if isinstance(value, Members):
        _fatal(line, DUPLICATE_MEMBER)
    return value


def _fatal(line: Line, message: str) -> NoReturn:
    raise FatalDecodeError(line.number, message)


# --- routing ----------------------------------------------------------------


def decode_line(line: Line, *, sdk: bool = False) -> InboundRecord:
    """Decode one framed line into its inbound record (DECISIONS section 1);
    ``sdk``: the ``sdk`` profile's user record (DEC-PROFILE-2)."""
    obj = _parse(line)
    if isinstance(obj, Members):
        return _ambiguous(line, obj)
    kind = obj.get("type")
    if type(kind) is not str:
        _fatal(line, "a record must have a string type")
    if kind == "user":
        try:
            return parse_user(obj, line=line.number, raw_size=len(line.data), sdk=sdk)
        except SchemaViolation as violation:
            uuid = obj.get("uuid")
            return InvalidUserRecord(
                line=line.number,
                uuid=uuid if type(uuid) is str else None,
                reason=violation.reason,
            )
    if kind == "control_request":
        return _control_request(line, obj)
    if kind == "control_response":
        return _control_response(line, obj)
    if kind == "attachment_import":
        if len(line.data) > MAX_RECORD_BYTES:
            _fatal(line, f"attachment_import record exceeds {MAX_RECORD_BYTES} bytes")
        from agentx.messages.inbound_import import parse_attachment_import  # noqa: PLC0415

        try:
            return parse_attachment_import(obj, line=line.number)
        except SchemaViolation as violation:
            _fatal(line, violation.reason)
    if kind == "keep_alive":
        return KeepAlive(line=line.number)
    if kind == "update_environment_variables":
        try:
            return parse_environment_update(obj, line=line.number)
        except SchemaViolation as violation:
            return InvalidEnvUpdate(line=line.number, reason=violation.reason)
    if kind in ("assistant", "system"):
        return PriorContextRecord(line=line.number, type=kind, raw=obj)
    return UnknownRecord(line=line.number, type=kind)


def _control_request(line: Line, obj: FrozenDict) -> InboundRecord:
    request_id = obj.get("request_id")
    if type(request_id) is not str:
        return UncorrelatableControl(
            line=line.number, reason="control_request has no string request_id"
        )
    try:
        return parse_control_request(obj, line=line.number, request_id=request_id)
    except SchemaViolation as violation:
        return InvalidControlRequest(
            line=line.number, request_id=request_id, error=violation.reason
        )


def _control_response(line: Line, obj: FrozenDict) -> InboundRecord:
    response = obj.get("response")
    if (
        type(response) is not FrozenDict
        or type(request_id := response.get("request_id")) is not str
    ):
        return UncorrelatableControl(
            line=line.number, reason="control_response has no string request_id"
        )
    try:
        return parse_control_response(obj, response, line=line.number, request_id=request_id)
    except SchemaViolation as violation:
        return InvalidControlResponse(
            line=line.number, request_id=request_id, reason=violation.reason
        )


def _ambiguous(line: Line, envelope: Members) -> InvalidControlRequest:
    """WIRE-014 with the DECISIONS section 1 exception: duplicates confined to
    a control_request's ``request`` value, with ``type`` and ``request_id``
    unambiguous, are a correlated error; any other duplicate is fatal.

    Every member occurrence outside ``request`` is walked, a value that a
    later same-named member would have replaced included.
    """
    if envelope.duplicated:
        _fatal(line, DUPLICATE_MEMBER)
    members = dict(envelope.items)
    request_id = members.get("request_id")
    if members.get("type") != "control_request" or type(request_id) is not str:
        _fatal(line, DUPLICATE_MEMBER)
    stack: list[Any] = [value for name, value in envelope.items if name != "request"]
    while stack:
        value = stack.pop()
        if type(value) is Members:
            if value.duplicated:
                _fatal(line, DUPLICATE_MEMBER)
            stack.extend(member for _, member in value.items)
        elif type(value) is list:
            stack.extend(value)
    return InvalidControlRequest(line=line.number, request_id=request_id, error=DUPLICATE_MEMBER)
