"""Strict JSON for configuration documents (auth.json, settings, scripts, hook output).

The same closed-decoding rules as the wire (WIRE-014, DECISIONS section 1):
duplicate member names rejected by decoded name, NaN/Infinity and overflowing
numbers rejected, objects frozen. Values come back frozen.
"""

from __future__ import annotations

import json
import math
from typing import Any

from agentx.messages.frozen import FrozenDict, FrozenJSON

DUPLICATE_MEMBER = "ambiguous JSON: duplicate member name"


class StrictJSONError(ValueError):
    """A bounded, content-free reason the document was refused."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _array(items: list[Any]) -> tuple[FrozenJSON, ...]:
    return tuple([_array(item) if type(item) is list else item for item in items])


def _pairs(pairs: list[tuple[str, Any]]) -> FrozenDict:
    """Objects are built inner first, so member objects are frozen already;
    member arrays become tuples here, in the same pass."""
    obj = FrozenDict(pairs)
    if len(obj) != len(pairs):
        raise StrictJSONError(DUPLICATE_MEMBER)
    if list in map(type, obj.values()):
        return FrozenDict([(k, _array(v)) if type(v) is list else (k, v) for k, v in pairs])
    return obj


def _constant(name: str) -> Any:
    raise StrictJSONError(f"non-finite number {name} is not JSON")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError("number overflows to infinity")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)


def loads_strict(data: bytes | str) -> FrozenJSON:
    """Decode one strict JSON document (UTF-8 bytes or text) into frozen values."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = _DECODER.decode(text)
    except StrictJSONError:
        raise
    except UnicodeDecodeError:
        raise StrictJSONError("invalid UTF-8") from None
    except RecursionError:
        raise StrictJSONError("nesting too deep") from None
    except ValueError:
        raise StrictJSONError("invalid JSON") from None
    return _array(value) if type(value) is list else value
