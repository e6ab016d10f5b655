"""Strict record decoding and routing (WIRE-001, WIRE-002, WIRE-014, WIRE-021).

:func:`parse_object` is the JSON layer: strict UTF-8 (no BOM, no UTF-16, no
encoded surrogates), the stdlib decoder with an ``object_pairs_hook`` that
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
import math
import re
from collections.abc import Callable
from itertools import accumulate, count
from json.scanner import make_scanner
from operator import sub
from typing import Any, NoReturn, cast

from agentx.messages.framing import MAX_RECORD_BYTES, Line
from agentx.messages.frozen import FrozenDict, FrozenJSON
from agentx.messages.inbound import (
    AttachmentImport,
    ControlRequest,
    ControlResponse,
    InvalidControlRequest,
    InvalidControlResponse,
    InvalidEnvUpdate,
    InvalidUserRecord,
    KeepAlive,
    PriorContextRecord,
    SchemaViolation,
    UncorrelatableControl,
    UnknownRecord,
    UpdateEnvironmentVariables,
    UserRecord,
    parse_attachment_import,
    parse_control_request,
    parse_control_response,
    parse_environment_update,
    parse_user,
)

#: The fixed WIRE-014 diagnostic (DECISIONS section 1).
DUPLICATE_MEMBER = "ambiguous JSON: duplicate member name"
#: DECISIONS section 1: deepest accepted nesting of objects and arrays.
MAX_DEPTH = 64

InboundRecord = (
    UserRecord
    | InvalidUserRecord
    | AttachmentImport
    | ControlRequest
    | InvalidControlRequest
    | ControlResponse
    | InvalidControlResponse
    | UncorrelatableControl
    | KeepAlive
    | UpdateEnvironmentVariables
    | InvalidEnvUpdate
    | PriorContextRecord
    | UnknownRecord
)


class FatalDecodeError(Exception):
    """The input stream cannot go on (WIRE-001): one diagnostic naming the
    line, exit status 1. ``message`` is bounded and never echoes content."""

    def __init__(self, line_number: int, message: str) -> None:
        super().__init__(f"line {line_number}: {message}")
        self.line_number = line_number
        self.message = message


# --- the JSON layer ---------------------------------------------------------


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _DuplicateSeen(Exception):
    pass


def _array(items: list[Any]) -> tuple[FrozenJSON, ...]:
    if list in map(type, items):
        return tuple([_array(item) if type(item) is list else item for item in items])
    return tuple(items)


def _freeze_members(pairs: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Arrays among an object's member values become tuples. Object values
    are frozen already: the hook built them first."""
    return [(k, _array(v)) if type(v) is list else (k, v) for k, v in pairs]


def _object(pairs: list[tuple[str, Any]]) -> FrozenDict:
    obj = FrozenDict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateSeen
    return obj


def _object_with_arrays(pairs: list[tuple[str, Any]]) -> FrozenDict:
    obj = FrozenDict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateSeen
    if list in map(type, obj.values()):
        return FrozenDict(_freeze_members(pairs))
    return obj


class _DuplicateRecorder:
    """The slow path after a duplicate: build the whole value anyway and keep
    every object that had a duplicate member, so routing can tell where."""

    __slots__ = ("duplicates", "freeze_arrays")

    def __init__(self, *, freeze_arrays: bool) -> None:
        self.duplicates: list[FrozenDict] = []
        self.freeze_arrays = freeze_arrays

    def object(self, pairs: list[tuple[str, Any]]) -> FrozenDict:
        if self.freeze_arrays:
            pairs = _freeze_members(pairs)
        obj = FrozenDict(pairs)
        if len(obj) != len(pairs):
            self.duplicates.append(obj)
        return obj


def _constant(_name: str) -> NoReturn:
    raise _Refused("NaN and Infinity are not JSON")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused("number overflows to infinity")
    return value


def _decoder(hook: Callable[[list[tuple[str, Any]]], FrozenDict]) -> json.JSONDecoder:
    return json.JSONDecoder(object_pairs_hook=hook, parse_constant=_constant, parse_float=_float)


#: Stateless decoders for the fast path (no duplicate seen), each with the
#: scanner that :func:`_decode` calls directly.
_PLAIN = _decoder(_object)
_WITH_ARRAYS = _decoder(_object_with_arrays)
# typeshed types the scanner's context as a scanner; the decoder is the real one.
_SCAN_PLAIN = make_scanner(cast(Any, _PLAIN))
_SCAN_WITH_ARRAYS = make_scanner(cast(Any, _WITH_ARRAYS))
#: What ``json.JSONDecoder.decode`` skips around the value (RFC 8259 whitespace).
_JSON_WHITESPACE = " \t\n\r"
_BOM = codecs.BOM_UTF8

#: A JSON string token; possessive so matching stays linear.
_STRING_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
#: An opening bracket steps +1, a closing one -1 (encoded as 2 and 0, minus 1).
_BRACKET_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")
#: Escape tokens in order: an escaped backslash, a valid surrogate pair, or a
#: lone surrogate (group 1). Scanned left to right every match starts at a
#: real escape, since only ``\\\\`` has a backslash as its second character.
_ESCAPE_TOKEN = re.compile(
    r"\\\\"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)


def _too_deep(data: bytes) -> bool:
    """Nesting beyond MAX_DEPTH, for text already known to be valid JSON:
    strip string tokens, then take the running bracket balance. (The caller
    skips this when the line has at most MAX_DEPTH opening brackets.)"""
    steps = _STRING_TOKEN.sub(b"", data).translate(_BRACKET_STEP, _NOT_BRACKET)
    return max(map(sub, accumulate(steps), count(1)), default=0) > MAX_DEPTH


def _has_lone_surrogate(text: str) -> bool:
    """A ``\\uD800``-``\\uDFFF`` escape that is not half of a valid pair
    (the caller skips this when the text has no backslash at all)."""
    if _SURROGATE_HINT.search(text) is None:
        return False
    return any(match.group(1) for match in _ESCAPE_TOKEN.finditer(text))


def _decode(text: str, arrays: bool) -> Any:
    """``decoder.decode(text)`` without its two Python call layers when the
    value starts at the first character and only JSON whitespace follows it.
    Anything else (leading whitespace, no value, extra data) is decoded again
    by ``decoder.decode``, so every WIRE-001 diagnostic is the stdlib's own."""
    decoder, scan = (_WITH_ARRAYS, _SCAN_WITH_ARRAYS) if arrays else (_PLAIN, _SCAN_PLAIN)
    try:
        value, end = scan(text, 0)
    except StopIteration:
        return decoder.decode(text)
    if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
        return decoder.decode(text)
    return value


def _parse(line: Line) -> tuple[FrozenDict, tuple[FrozenDict, ...]]:
    """Decode ``line`` into a frozen object plus the objects that carried a
    duplicate member (empty on the fast path)."""
    data = line.data
    if data.startswith(_BOM):
        _fatal(line, "a byte order mark is not allowed")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _fatal(line, "invalid UTF-8")
    # Gates on the text: a one-character ``in`` on str is a memchr, and the
    # common record skips array freezing, the depth scan and the escape scan.
    arrays = "[" in text
    duplicates: tuple[FrozenDict, ...] = ()
    try:
        try:
            value = _decode(text, arrays)
        except _DuplicateSeen:
            recorder = _DuplicateRecorder(freeze_arrays=arrays)
            value = _decoder(recorder.object).decode(text)
            duplicates = tuple(recorder.duplicates)
    except _Refused as refused:
        _fatal(line, refused.reason)
    except RecursionError:
        _fatal(line, f"nesting deeper than {MAX_DEPTH} levels")
    except json.JSONDecodeError as error:
        # json's own messages may end in "at" ("Unterminated string starting at").
        _fatal(line, f"invalid JSON: {error.msg.removesuffix(' at')} at column {error.colno}")
    except ValueError:
        _fatal(line, "invalid JSON: number out of range")
    if type(value) is not FrozenDict:
        _fatal(line, "a record must be a JSON object")
    opening = text.count("{") + text.count("[") if arrays else text.count("{")
    if opening > MAX_DEPTH and _too_deep(data):
        _fatal(line, f"nesting deeper than {MAX_DEPTH} levels")
    if "\\" in text and _has_lone_surrogate(text):
        _fatal(line, "lone surrogate escape")
    return value, duplicates


def parse_object(line: Line) -> FrozenDict:
    """The strict JSON layer alone: a frozen object, or ``FatalDecodeError``
    (a duplicate member anywhere is fatal here)."""
    value, duplicates = _parse(line)
    if duplicates:
        _fatal(line, DUPLICATE_MEMBER)
    return value


def _fatal(line: Line, message: str) -> NoReturn:
    raise FatalDecodeError(line.number, message)


# --- routing ----------------------------------------------------------------


def decode_line(line: Line) -> InboundRecord:
    """Decode one framed line into its inbound record (DECISIONS section 1)."""
    obj, duplicates = _parse(line)
    if duplicates:
        return _ambiguous(line, obj, duplicates)
    kind = obj.get("type")
    if type(kind) is not str:
        _fatal(line, "a record must have a string type")
    if kind == "user":
        try:
            return parse_user(obj, line=line.number, raw_size=len(line.data))
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


def _ambiguous(
    line: Line, obj: FrozenDict, duplicates: tuple[FrozenDict, ...]
) -> InvalidControlRequest:
    """WIRE-014 with the DECISIONS section 1 exception: duplicates confined to
    a control_request's ``request`` value, with ``type`` and ``request_id``
    unambiguous, are a correlated error; any other duplicate is fatal.

    Objects outside ``request`` are collected by walking the envelope without
    entering ``request``. A duplicate object that is not reachable at all was
    dropped by a later same-named member, so its nearest reachable ancestor
    is itself a duplicate-bearing object and decides the case.
    """
    request_id = obj.get("request_id")
    if obj.get("type") != "control_request" or type(request_id) is not str:
        _fatal(line, DUPLICATE_MEMBER)
    outside = {id(obj)}
    stack: list[Any] = [value for name, value in obj.items() if name != "request"]
    while stack:
        value = stack.pop()
        if type(value) is FrozenDict:
            outside.add(id(value))
            stack.extend(value.values())
        elif type(value) is tuple:
            stack.extend(value)
    if any(id(duplicate) in outside for duplicate in duplicates):
        _fatal(line, DUPLICATE_MEMBER)
    return InvalidControlRequest(line=line.number, request_id=request_id, error=DUPLICATE_MEMBER)
