"""The auth.json schema: its member names and the check of each value (DEC-AUTH-2).

Every check takes the decoded value and its JSON path and returns the typed
value or raises :class:`~agentx.config.registry.RegistryError` naming the
path, never the value (DEC-AUTH-1). :mod:`agentx.config.auth_json` decodes
the document and assembles the provider descriptors from these checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from agentx.config.registry import (
    CATALOG_PRICING,
    EFFORTS,
    MAX_TIMEOUT_MS,
    Effort,
    ProviderType,
    RegistryError,
    is_effort,
)
from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict
from agentx.messages.pricing import Pricing

# Compiled on first use through re's own cache, not at import: with no
# auth.json nothing is parsed (start-up, WIRE-026).
ID_PATTERN = r"[a-z0-9][a-z0-9._-]{0,63}"
_HEADER_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_CONTROL = r"[\x00-\x1f\x7f-\x9f]"

TOP_MEMBERS = frozenset({"version", "providers"})
_COMMON_MEMBERS = frozenset(
    {"id", "type", "model", "default", "endpoint", "api_key", "api_key_env", "headers"}
    | {"reasoning"}
    | {"pricing", "attachments", "context_window", "timeout_ms", "models"}
)
TYPE_ONLY_MEMBERS: Mapping[str, ProviderType] = {
    "deployment": "azure_openai",
    "api_version": "azure_openai",
    "script": "scripted",
}
PROVIDER_MEMBERS = _COMMON_MEMBERS | frozenset(TYPE_ONLY_MEMBERS)
REQUIRED_MEMBERS: Mapping[ProviderType, tuple[str, ...]] = {
    "azure_openai": ("id", "model", "endpoint", "deployment", "api_version"),
    "openai": ("id", "model", "endpoint"),
    "anthropic": ("id", "model", "endpoint"),
    "scripted": ("id", "model"),
}
_RATE_NAMES = ("input_per_mtok", "output_per_mtok")
_PRICING_MEMBERS = frozenset(_RATE_NAMES)
_REASONING_MEMBERS = frozenset({"efforts", "default"})
#: The member names a diagnostic may spell out (see :func:`member_path`).
_SCHEMA_NAMES = TOP_MEMBERS | PROVIDER_MEMBERS | _PRICING_MEMBERS | _REASONING_MEMBERS


def member_path(path: str, name: str, position: int = 0) -> str:
    """The JSON path of member ``name`` of the object at ``path``.

    Only names of the auth.json schema are spelled out. Any other member (an
    unknown one, a header name) is shown by its 1-based ``position`` in the
    object, never by name: a mistyped member or header name can be a key.
    """
    if name in _SCHEMA_NAMES:
        return f"{path}.{name}" if path else name
    shown = f"member {position}" if position else "a member"
    return f"{path}[{shown}]" if path else shown


def object_value(value: Any, path: str) -> dict[str, Any]:
    """The members of a JSON object."""
    if not isinstance(value, dict):
        raise RegistryError("must be an object", path=path)
    return value


def refuse_unknown(members: dict[str, Any], path: str, allowed: frozenset[str]) -> None:
    """Fail on the first member not in ``allowed`` (DEC-AUTH-1), by position.

    The line suggests the closest allowed member (``did you mean "api_key"?``):
    a name of the format itself, so it leaks neither the unknown name, which
    may be a misplaced key, nor any value (DEC-AUTH-1a).
    """
    breach = closed_breach(members, allowed)
    if breach is not None:
        name = breach.unknown[0]
        position = list(members).index(name) + 1
        problem = "unknown member"
        closest = closest_member(name, allowed - members.keys())
        if closest is not None:
            problem += f'; did you mean "{closest}"?'
        raise RegistryError(problem, path=member_path(path, name, position))


def closest_member(name: str, allowed: Iterable[str]) -> str | None:
    """The allowed member a mistyped ``name`` most likely meant, if any is close
    (case, ``-`` for ``_`` and small typos forgiven)."""
    # Only on this error path: start-up imports stay small (DEC-CLI-3).
    from difflib import get_close_matches  # noqa: PLC0415

    folded = {candidate.lower().replace("_", ""): candidate for candidate in allowed}
    key = name.lower().replace("-", "").replace("_", "")
    matches = get_close_matches(key, list(folded), n=1, cutoff=0.75)
    return folded[matches[0]] if matches else None


def require(members: dict[str, Any], path: str, names: tuple[str, ...] | frozenset[str]) -> None:
    """Fail on the first missing member of ``names``."""
    for name in sorted(names):
        if name not in members:
            raise RegistryError("missing required member", path=member_path(path, name))


def text_value(value: Any, path: str) -> str:
    """A non-empty string free of control characters."""
    if not isinstance(value, str):
        raise RegistryError("must be a string", path=path)
    if not value:
        raise RegistryError("must not be empty", path=path)
    if re.search(_CONTROL, value):
        raise RegistryError("must not contain control characters", path=path)
    return value


def boolean_value(value: Any, path: str) -> bool:
    """A JSON boolean."""
    if not isinstance(value, bool):
        raise RegistryError("must be a boolean", path=path)
    return value


def rate_value(value: Any, path: str) -> float:
    """A non-negative price per million tokens."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RegistryError("must be a number", path=path)
    if value < 0:
        raise RegistryError("must not be negative", path=path)
    return float(value)


def window_value(value: Any, path: str) -> int:
    """``context_window``: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RegistryError("must be a positive integer", path=path)
    return value


def endpoint_value(value: Any, path: str) -> str:
    """An http or https URL with a host."""
    text = text_value(value, path)
    try:
        parts = urlsplit(text)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in text
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        valid = False
    if not valid:
        raise RegistryError("must be an http or https URL", path=path)
    return text


def headers_value(value: Any, path: str) -> FrozenDict:
    """HTTP headers: token names, unique case-insensitively, text values."""
    members = object_value(value, path)
    seen: set[str] = set()
    for position, (name, header) in enumerate(members.items(), start=1):
        where = member_path(path, name, position)
        if not re.fullmatch(_HEADER_NAME, name):
            raise RegistryError("is not a valid HTTP header name", path=where)
        if name.lower() in seen:
            raise RegistryError("duplicate header name (names are case-insensitive)", path=where)
        seen.add(name.lower())
        text_value(header, where)
    return FrozenDict(members)


def reasoning_value(value: Any, path: str) -> tuple[tuple[Effort, ...], Effort | None]:
    """``reasoning``: the declared efforts and the default, required exactly when any
    is declared."""
    members = object_value(value, path)
    refuse_unknown(members, path, _REASONING_MEMBERS)
    require(members, path, ("efforts",))
    where = member_path(path, "efforts")
    declared = members["efforts"]
    if not isinstance(declared, list):
        raise RegistryError("must be an array", path=where)
    efforts: list[Effort] = []
    for index, item in enumerate(declared):
        item_path = f"{where}[{index}]"
        if not isinstance(item, str):
            raise RegistryError("must be a string", path=item_path)
        if not is_effort(item):
            raise RegistryError(f"must be one of {', '.join(EFFORTS)}", path=item_path)
        if item in efforts:
            raise RegistryError("duplicate effort", path=item_path)
        efforts.append(item)
    default_path = member_path(path, "default")
    if "default" not in members:
        if efforts:
            raise RegistryError("is required when efforts are declared", path=default_path)
        return (), None
    chosen = members["default"]
    if not isinstance(chosen, str):
        raise RegistryError("must be a string", path=default_path)
    if not is_effort(chosen) or chosen not in efforts:
        raise RegistryError("must be one of the declared efforts", path=default_path)
    return tuple(efforts), chosen


#: DEC-AUTH-2 ``models``: the profile serves any model.
ANY_MODEL = "any"


def models_value(value: Any, path: str) -> tuple[str, ...]:
    """``models``: ``"any"``, or the distinct model ids (shell-style patterns
    allowed) the profile serves besides ``model``."""
    if value == ANY_MODEL:
        return ("*",)
    if not isinstance(value, list):
        raise RegistryError(f'must be an array or the string "{ANY_MODEL}"', path=path)
    models: list[str] = []
    for index, item in enumerate(value):
        model = text_value(item, f"{path}[{index}]")
        if model in models:
            raise RegistryError("duplicate model", path=f"{path}[{index}]")
        models.append(model)
    return tuple(models)


def timeout_ms_value(value: Any, path: str) -> int:
    """DEC-AUTH-2 ``timeout_ms``: an integer from 1 to :data:`MAX_TIMEOUT_MS`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TIMEOUT_MS:
        raise RegistryError(f"must be an integer from 1 to {MAX_TIMEOUT_MS}", path=path)
    return value


def pricing_value(value: Any, path: str) -> Pricing | str:
    """Both rates, or the string ``"catalog"``."""
    if value == CATALOG_PRICING:
        return CATALOG_PRICING
    if isinstance(value, str):
        raise RegistryError(f'must be an object or the string "{CATALOG_PRICING}"', path=path)
    members = object_value(value, path)
    refuse_unknown(members, path, _PRICING_MEMBERS)
    require(members, path, _PRICING_MEMBERS)
    return Pricing(
        input_per_mtok=rate_value(members["input_per_mtok"], member_path(path, "input_per_mtok")),
        output_per_mtok=rate_value(
            members["output_per_mtok"], member_path(path, "output_per_mtok")
        ),
    )
