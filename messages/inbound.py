"""Inbound records: the shared vocabulary and the small record kinds (spec
"Input records", WIRE-002, WIRE-021).

Every record carries ``line``, the 1-based physical line number it came from.
The ``parse_*`` functions take an already decoded, frozen, duplicate-free JSON
object and either build the typed record or raise :class:`SchemaViolation`
with a bounded reason that names only protocol member names, never input
content. :func:`agentx.messages.decode.decode_line` decides what a violation
means for each record type (DECISIONS section 1). The member tables and
grammars are public: :mod:`agentx.messages.schema_inbound` builds the
published inbound schema from them (WIRE-021).

Here: :class:`SchemaViolation`, the identifier grammars, the closed-member
checks every parser words its violations with, and ``keep_alive``,
``update_environment_variables``, replayed prior context and unknown records.
The other kinds have a module each: ``user`` in
:mod:`agentx.messages.inbound_user`, ``control_request``/``control_response``
in :mod:`agentx.messages.inbound_control`, ``attachment_import`` in
:mod:`agentx.messages.inbound_import`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from msgspec import Struct

from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict


class SchemaViolation(Exception):
    """A record broke its closed schema; ``reason`` is bounded and content-free."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: Identifier grammars of the user and attachment_import records (WIRE-017/018),
#: as pattern sources: ``re`` compiles (and caches) each on its first match, so
#: a text session never compiles them (start-up, DEC-CLI-3).
ATTACHMENT_ID: Final = r"att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}"
UPLOAD_ID: Final = r"upl_[A-Za-z0-9][A-Za-z0-9_-]{0,62}"
SHA256: Final = r"[0-9a-f]{64}"
STORAGE_ID: Final = r"blob_sha256_[0-9a-f]{64}"
#: Canonical RFC 4122 text, versions 1-5, variant 10xx.
RFC4122: Final = r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


# --- keep_alive, environment updates, prior context, unknown ---------------


class KeepAlive(Struct, frozen=True, kw_only=True):
    """``keep_alive``: ignored semantically."""

    line: int


class UpdateEnvironmentVariables(Struct, frozen=True, kw_only=True):
    """``update_environment_variables``: a string-to-string map."""

    line: int
    variables: FrozenDict


class InvalidEnvUpdate(Struct, frozen=True, kw_only=True):
    """An environment update that is not a valid map: an input error."""

    line: int
    reason: str


class PriorContextRecord(Struct, frozen=True, kw_only=True):
    """A replayed ``assistant``/``system`` record from a compatible transport:
    prior context only, never executed (spec "Input records")."""

    line: int
    type: str
    raw: FrozenDict


class UnknownRecord(Struct, frozen=True, kw_only=True):
    """A record of an unknown top-level ``type``: warned and ignored (WIRE-002)."""

    line: int
    type: str


def parse_environment_update(obj: FrozenDict, *, line: int) -> UpdateEnvironmentVariables:
    """Names are nonempty without ``=`` or NUL; values are strings without NUL."""
    variables = obj.get("variables")
    if type(variables) is not FrozenDict:
        raise SchemaViolation("update_environment_variables: variables must be an object")
    for name, value in variables.items():
        if not name or "=" in name or "\0" in name:
            raise SchemaViolation("update_environment_variables: invalid variable name")
        if type(value) is not str or "\0" in value:
            raise SchemaViolation("update_environment_variables: values must be strings")
    return UpdateEnvironmentVariables(line=line, variables=variables)


# --- closed-schema helpers (WIRE-021) --------------------------------------


def require_closed(
    obj: Mapping[str, Any], required: frozenset[str], allowed: frozenset[str], what: str
) -> None:
    """The WIRE-021 violation when ``obj`` fails its closed schema."""
    breach = closed_breach(obj, allowed, required)
    if breach is None:
        return
    if breach.missing:
        raise SchemaViolation(f"{what}: missing member {min(breach.missing)}")
    raise SchemaViolation(f"{what}: unknown member")


def string_member(obj: Mapping[str, Any], name: str, what: str) -> str:
    value = obj[name]
    if type(value) is not str:
        raise SchemaViolation(f"{what}: {name} must be a string")
    return value


def matching_member(obj: Mapping[str, Any], name: str, grammar: str, what: str) -> str:
    """``obj[name]``, a string the ``grammar`` source matches in full."""
    value = obj[name]
    if type(value) is not str or re.fullmatch(grammar, value) is None:
        raise SchemaViolation(f"{what}: {name} is malformed")
    return value


def positive_int_member(obj: Mapping[str, Any], name: str, what: str) -> int:
    value = obj[name]
    if type(value) is not int or value < 1:
        raise SchemaViolation(f"{what}: {name} must be a positive integer")
    return value
