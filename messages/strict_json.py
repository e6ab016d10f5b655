"""The one strict JSON decoder: the wire, provider events, auth.json and every
configuration document (WIRE-014, DECISIONS section 1, DEC-AUTH-1).

The stdlib decoder with an ``object_pairs_hook`` that sees every member
occurrence with its decoded name (so ``"a"`` and ``"\\u0061"`` collide) and
a ``parse_constant`` that refuses NaN/Infinity; a number that overflows to
infinity is refused too. Each caller words the refusals its own way (the
wire's fixed diagnostics, auth.json's paths); the rules are these alone.

- :func:`decode`: the fast path. Objects and arrays come back frozen, built
  inner first in one pass; the first duplicate member raises
  :class:`DuplicateMember`.
- :func:`decode_members`: every object as :class:`Members`, each member
  occurrence in document order, for a caller that must say where a duplicate
  is (the wire's control_request exception, auth.json's paths).
- :func:`loads_strict`: a whole document (UTF-8 bytes or text) with bounded,
  content-free reasons (settings, hook output, session files, scripts).
- :func:`too_deep` and :func:`has_lone_surrogate`: the wire's checks of nesting
  (MAX_DEPTH) and lone surrogate escapes on text that decoded.

Nothing here imports ``dataclasses``: auth.json is parsed on the start-up fast
path.
"""

# No ``from __future__ import annotations``: as in agentx.registry, the
# NamedTuple below would turn string annotations into ForwardRefs on the
# start-up path.
import json
import math
import re
from collections.abc import Callable
from functools import cache
from itertools import accumulate, count
from json.scanner import make_scanner
from operator import sub
from typing import Any, cast

from agentx.messages.frozen import FrozenDict, FrozenJSON

#: The fixed WIRE-014 diagnostic (DECISIONS section 1).
DUPLICATE_MEMBER = "ambiguous JSON: duplicate member name"
#: DECISIONS section 1: deepest accepted nesting of objects and arrays.
MAX_DEPTH = 64


class StrictJSONError(ValueError):
    """A bounded, content-free reason the document was refused."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class DuplicateMember(StrictJSONError):
    """An object names the same member twice, compared by decoded name."""

    def __init__(self) -> None:
        super().__init__(DUPLICATE_MEMBER)


class NonFiniteNumber(StrictJSONError):
    """A ``NaN``, ``Infinity`` or ``-Infinity`` literal (``constant``)."""

    def __init__(self, constant: str) -> None:
        super().__init__(f"non-finite number {constant} is not JSON")
        self.constant = constant


class NumberOverflow(StrictJSONError):
    """A number literal that overflows a float to infinity."""

    def __init__(self) -> None:
        super().__init__("number overflows to infinity")


class Members(tuple[tuple[str, Any], ...]):
    """Every member occurrence of one JSON object, in document order: an
    immutable tuple of ``(name, value)`` pairs. A tuple subclass, not a
    ``NamedTuple``, whose class costs ten times as much to define before the
    ``initialize`` response (start-up, DEC-CLI-3)."""

    __slots__ = ()

    @property
    def items(self) -> tuple[tuple[str, Any], ...]:
        """The ``(name, value)`` pairs, duplicates included."""
        return self

    @property
    def duplicated(self) -> bool:
        """Some decoded member name occurs more than once."""
        return len({name for name, _ in self.items}) != len(self.items)


# --- the object builders and number rules ---------------------------------------


def _array(items: list[Any]) -> tuple[FrozenJSON, ...]:
    if list in map(type, items):
        return tuple([_array(item) if type(item) is list else item for item in items])
    return tuple(items)


def _object(pairs: list[tuple[str, Any]]) -> FrozenDict:
    obj = FrozenDict(pairs)
    if len(obj) != len(pairs):
        raise DuplicateMember
    return obj


def _object_with_arrays(pairs: list[tuple[str, Any]]) -> FrozenDict:
    """Objects are built inner first, so member objects are frozen already;
    member arrays become tuples here, in the same pass."""
    obj = FrozenDict(pairs)
    if len(obj) != len(pairs):
        raise DuplicateMember
    if list in map(type, obj.values()):
        return FrozenDict([(k, _array(v)) if type(v) is list else (k, v) for k, v in pairs])
    return obj


def _members(pairs: list[tuple[str, Any]]) -> Members:
    return Members(pairs)


def _constant(name: str) -> Any:
    raise NonFiniteNumber(name)


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NumberOverflow
    return value


def _decoder(hook: Callable[[list[tuple[str, Any]]], Any]) -> json.JSONDecoder:
    return json.JSONDecoder(object_pairs_hook=hook, parse_constant=_constant, parse_float=_float)


#: Stateless decoders, each with the scanner that :func:`decode` calls directly.
_PLAIN = _decoder(_object)
_WITH_ARRAYS = _decoder(_object_with_arrays)
_MEMBERS = _decoder(_members)
# typeshed types the scanner's context as a scanner; the decoder is the real one.
_SCAN_PLAIN = make_scanner(cast(Any, _PLAIN))
_SCAN_WITH_ARRAYS = make_scanner(cast(Any, _WITH_ARRAYS))
#: What ``json.JSONDecoder.decode`` skips around the value (RFC 8259 whitespace).
_JSON_WHITESPACE = " \t\n\r"


# --- decoding ----------------------------------------------------------------------


def decode(text: str) -> FrozenJSON:
    """One JSON value, frozen.

    Raises :class:`DuplicateMember`, :class:`NonFiniteNumber`,
    :class:`NumberOverflow`, ``json.JSONDecodeError`` (syntax), ``ValueError``
    (an integer too long to convert) or ``RecursionError`` (runaway nesting).

    ``decoder.decode(text)`` without its two Python call layers when the
    value starts at the first character and only JSON whitespace follows it.
    Anything else (leading whitespace, no value, extra data) is decoded again
    by ``decoder.decode``, so every syntax diagnostic is the stdlib's own.
    The common object without arrays skips array freezing.
    """
    decoder, scan = (_WITH_ARRAYS, _SCAN_WITH_ARRAYS) if "[" in text else (_PLAIN, _SCAN_PLAIN)
    try:
        value, end = scan(text, 0)
    except StopIteration:
        value = decoder.decode(text)
    else:
        if end != len(text) and text[end:].strip(_JSON_WHITESPACE):
            value = decoder.decode(text)
    return _array(value) if type(value) is list else value


def decode_members(text: str) -> Any:
    """One JSON value with every object as :class:`Members` and arrays as lists;
    refuses what :func:`decode` refuses except duplicates, which it keeps."""
    return _MEMBERS.decode(text)


def loads_strict(data: bytes | str) -> FrozenJSON:
    """Decode one strict JSON document (UTF-8 bytes or text) into frozen values."""
    try:
        return decode(data.decode("utf-8") if isinstance(data, bytes) else data)
    except StrictJSONError:
        raise
    except UnicodeDecodeError:
        raise StrictJSONError("invalid UTF-8") from None
    except RecursionError:
        raise StrictJSONError("nesting too deep") from None
    except ValueError:
        raise StrictJSONError("invalid JSON") from None


# --- the wire's checks on decoded text -------------------------------------------

_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
#: An opening bracket steps +1, a closing one -1 (encoded as 2 and 0, minus 1).
_BRACKET_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


# The three patterns are compiled on first use, not at import (start-up,
# DEC-CLI-3), and kept: a record with an escape is checked on every line.
@cache
def _string_token() -> re.Pattern[bytes]:
    """A JSON string token; possessive so matching stays linear."""
    return re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)


@cache
def _surrogate_hint() -> re.Pattern[str]:
    return re.compile(r"\\u[dD][89a-fA-F]")


@cache
def _escape_token() -> re.Pattern[str]:
    """Escape tokens in order: an escaped backslash, a valid surrogate pair,
    or a lone surrogate (group 1). Scanned left to right every match starts
    at a real escape, since only ``\\\\`` has a backslash as its second
    character."""
    return re.compile(
        r"\\\\"
        r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
        r"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
    )


def too_deep(data: bytes) -> bool:
    """Nesting beyond MAX_DEPTH, for text already known to be valid JSON:
    strip string tokens, then take the running bracket balance. (A caller
    may skip this when the text has at most MAX_DEPTH opening brackets.)"""
    steps = _string_token().sub(b"", data).translate(_BRACKET_STEP, _NOT_BRACKET)
    return max(map(sub, accumulate(steps), count(1)), default=0) > MAX_DEPTH


def has_lone_surrogate(text: str) -> bool:
    """A ``\\uD800``-``\\uDFFF`` escape that is not half of a valid pair
    (a caller may skip this when the text has no backslash at all)."""
    if _surrogate_hint().search(text) is None:
        return False
    return any(match.group(1) for match in _escape_token().finditer(text))
