"""Frozen JSON values (DESIGN.md "Messages are values").

JSON payloads that pass between actors (tool input, API message content) are
frozen at decode time: objects become :class:`FrozenDict`, arrays become
tuples. ``FrozenDict`` is a ``dict`` subclass so the encoder serialises it
without a copy, but every mutating method raises ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

JSONScalar = str | int | float | bool | None
#: A frozen JSON value: scalars, tuples of values, FrozenDicts of values.
FrozenJSON = Any


class FrozenDict(dict[str, Any]):
    """An immutable JSON object. Mutation raises ``TypeError``."""

    __slots__ = ()

    def _immutable(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict is immutable")

    __setitem__ = _immutable
    __delitem__ = _immutable
    __ior__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


def freeze(value: Any) -> FrozenJSON:
    """Deep-freeze a JSON-shaped value (dicts, lists/tuples, scalars)."""
    if isinstance(value, FrozenDict):
        return value
    if isinstance(value, Mapping):
        return FrozenDict((str(k), freeze(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Return a plain mutable copy (dicts and lists) of a frozen value."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


def repr_without(value: Any, hidden: frozenset[str]) -> str:
    """The repr of a ``msgspec.Struct`` without the fields named in
    ``hidden`` (a credential, or bytes too large to print), each shown as
    ``...``: what ``field(repr=False)`` of a dataclass gave (WIRE-013)."""
    shown = ", ".join(
        f"{name}=..." if name in hidden else f"{name}={getattr(value, name)!r}"
        for name in value.__struct_fields__
    )
    return f"{type(value).__name__}({shown})"
