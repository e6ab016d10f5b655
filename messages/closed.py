"""Closed members: the one check that an object names only the members it may,
and every member it must (WIRE-021, WIRE-PERM-022, DEC-AUTH-1), and the JSON
Schema form of the same rule for the published schema.

Each caller words the breach its own way (the wire's fixed diagnostics, a
permission update's member name, auth.json's path); the rule is here alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Any

_NONE: frozenset[str] = frozenset()


class Breach(tuple[frozenset[str], tuple[str, ...]]):
    """How an object broke its closed member set: an immutable pair. A tuple
    subclass, not a ``NamedTuple``, whose class costs ten times as much to
    define before the ``initialize`` response (start-up, DEC-CLI-3)."""

    __slots__ = ()

    def __new__(cls, *, missing: frozenset[str], unknown: tuple[str, ...]) -> Breach:
        return super().__new__(cls, (missing, unknown))

    @property
    def missing(self) -> frozenset[str]:
        """Required names the object lacks."""
        return self[0]

    @property
    def unknown(self) -> tuple[str, ...]:
        """Names outside the allowed set, in the object's order."""
        return self[1]


def closed_breach(
    members: Mapping[str, object], allowed: Set[str], required: Set[str] = _NONE
) -> Breach | None:
    """None when ``members`` holds every ``required`` name and only ``allowed``
    ones (``allowed`` includes ``required``); else what is wrong."""
    names = members.keys()
    if names >= required and names <= allowed:
        return None
    return Breach(
        missing=frozenset(required - names),
        unknown=tuple([name for name in names if name not in allowed]),
    )


def closed_schema(properties: Mapping[str, Any], required: Iterable[str]) -> dict[str, Any]:
    """The JSON Schema of a closed object: every member named in ``properties``."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": sorted(required),
        "additionalProperties": False,
    }
