"""auth.json version 2, read strictly (DECISIONS section 4, DEC-AUTH-1/2).

``parse_registry`` is pure (bytes in, :class:`~agentx.config.registry.Registry`
out); ``load_registry`` adds the one file read. Every failure is a
:class:`~agentx.config.registry.RegistryError` whose message names the problem and
its JSON path (``providers[1].reasoning.default``) but never a configured
value, so it is safe on stderr (DEC-AUTH-1, exit 2). The path spells only
the schema's member names; an unknown member or a header name, which can be
a mistyped key, appears by position (``providers[0][member 5]``).

Rules implemented here:

- DEC-AUTH-1: duplicate members (decoded-name comparison, so ``"a"`` and
  ``"\\u0061"`` collide) anywhere, unknown members and wrong types all fail.
- DEC-AUTH-2: the closed provider shape, per ``type``.
- DEC-AUTH-4: no auth.json means the built-in registry.

Beyond the letter of DEC-AUTH-2, and written down here: every string is
non-empty and free of control characters (an empty credential would match
every frame; CR/LF in a header is request smuggling); ``endpoint`` is an
http(s) URL; header names are HTTP tokens, unique case-insensitively;
``providers`` is non-empty; ``reasoning.default`` is required exactly when
``efforts`` is non-empty (it must be a member, DEC-CLI-5 needs a default);
``pricing`` has both rates or is the string ``"catalog"``; ``context_window``
is a positive integer; ``timeout_ms`` an integer from 1 to
:data:`~agentx.config.registry.MAX_TIMEOUT_MS`;
auth.json is a regular file of at most :data:`MAX_AUTH_JSON_BYTES` (reading
a FIFO would hang start-up).
"""

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from agentx.config.home import AUTH_FILE_NAME
from agentx.config.registry import (
    BUILTIN_REGISTRY,
    CATALOG_PRICING,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_TIMEOUT_MS,
    EFFORTS,
    MAX_TIMEOUT_MS,
    PROVIDER_TYPES,
    Effort,
    ProviderDescriptor,
    ProviderType,
    Registry,
    RegistryError,
    is_effort,
)
from agentx.messages.closed import closed_breach
from agentx.messages.frozen import FrozenDict
from agentx.messages.pricing import Pricing

#: The only auth.json version this host reads (DEC-AUTH-1).
AUTH_VERSION = 2
#: auth.json is operator configuration; anything larger is refused unread.
MAX_AUTH_JSON_BYTES = 1_048_576

# Compiled on first use through re's own cache, not at import: with no
# auth.json nothing is parsed (start-up, WIRE-026).
_ID_PATTERN = r"[a-z0-9][a-z0-9._-]{0,63}"
_HEADER_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_CONTROL = r"[\x00-\x1f\x7f-\x9f]"

_TOP_MEMBERS = frozenset({"version", "providers"})
_COMMON_MEMBERS = frozenset(
    {"id", "type", "model", "default", "endpoint", "api_key", "headers", "reasoning"}
    | {"pricing", "attachments", "context_window", "timeout_ms"}
)
_TYPE_ONLY_MEMBERS: Mapping[str, ProviderType] = {
    "deployment": "azure_openai",
    "api_version": "azure_openai",
    "script": "scripted",
}
_PROVIDER_MEMBERS = _COMMON_MEMBERS | frozenset(_TYPE_ONLY_MEMBERS)
_REQUIRED_MEMBERS: Mapping[ProviderType, tuple[str, ...]] = {
    "azure_openai": ("id", "model", "endpoint", "deployment", "api_version"),
    "openai": ("id", "model", "endpoint"),
    "anthropic": ("id", "model", "endpoint"),
    "scripted": ("id", "model"),
}
_PRICING_MEMBERS = frozenset({"input_per_mtok", "output_per_mtok"})
_REASONING_MEMBERS = frozenset({"efforts", "default"})
#: The member names a diagnostic may spell out (see ``_child``).
_SCHEMA_NAMES = _TOP_MEMBERS | _PROVIDER_MEMBERS | _PRICING_MEMBERS | _REASONING_MEMBERS


def _is_type(value: str) -> TypeGuard[ProviderType]:
    return value in PROVIDER_TYPES


# --- decoding ------------------------------------------------------------------


def _decode(data: bytes) -> Any:
    """The one strict decoder (WIRE-014 rules): UTF-8, finite numbers, every
    member occurrence kept as :class:`~agentx.messages.strict_json.Members`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RegistryError(f"not UTF-8 (byte offset {exc.start})") from None
    # lazy, as in _child and route_binding: start-up, WIRE-026 (json is only
    # needed once there is an auth.json to parse or a binding to compute)
    import json  # noqa: PLC0415

    from agentx.messages.strict_json import StrictJSONError, decode_members  # noqa: PLC0415

    try:
        return decode_members(text)
    except json.JSONDecodeError as exc:
        raise RegistryError(
            # json's own messages may end in "at" ("Unterminated string starting at").
            f"not valid JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno} "
            f"column {exc.colno})"
        ) from None
    except StrictJSONError:  # NonFiniteNumber, NumberOverflow
        raise RegistryError("not valid JSON (a number is not finite)") from None
    except ValueError:
        raise RegistryError("not valid JSON (an integer is too long)") from None
    except RecursionError:
        raise RegistryError("not valid JSON (nesting too deep)") from None


def _child(path: str, name: str, position: int = 0) -> str:
    """The JSON path of member ``name`` of the object at ``path``.

    Only names of the auth.json schema are spelled out. Any other member (an
    unknown one, a header name) is shown by its 1-based ``position`` in the
    object, never by name: a mistyped member or header name can be a key.
    """
    if name in _SCHEMA_NAMES:
        return f"{path}.{name}" if path else name
    shown = f"member {position}" if position else "a member"
    return f"{path}[{shown}]" if path else shown


def _unambiguous(value: Any, path: str) -> Any:
    """Turn decoded pairs into dicts, failing on any duplicate or lone surrogate (DEC-AUTH-1)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RegistryError("string holds a lone surrogate escape", path=path) from None
        return value
    if isinstance(value, list):
        return [_unambiguous(item, f"{path}[{index}]") for index, item in enumerate(value)]
    from agentx.messages.strict_json import Members  # noqa: PLC0415 (loaded by _decode)

    if isinstance(value, Members):
        members: dict[str, Any] = {}
        for position, (name, member) in enumerate(value.items, start=1):
            where = _child(path, _unambiguous(name, path), position)
            if name in members:
                raise RegistryError("duplicate member name", path=where)
            members[name] = _unambiguous(member, where)
        return members
    return value


# --- schema --------------------------------------------------------------------


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RegistryError("must be an object", path=path)
    return value


def _refuse_unknown(members: dict[str, Any], path: str, allowed: frozenset[str]) -> None:
    breach = closed_breach(members, allowed)
    if breach is not None:
        name = breach.unknown[0]
        position = list(members).index(name) + 1
        raise RegistryError("unknown member", path=_child(path, name, position))


def _require(members: dict[str, Any], path: str, names: tuple[str, ...] | frozenset[str]) -> None:
    for name in sorted(names):
        if name not in members:
            raise RegistryError("missing required member", path=_child(path, name))


def _text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise RegistryError("must be a string", path=path)
    if not value:
        raise RegistryError("must not be empty", path=path)
    if re.search(_CONTROL, value):
        raise RegistryError("must not contain control characters", path=path)
    return value


def _boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise RegistryError("must be a boolean", path=path)
    return value


def _rate(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RegistryError("must be a number", path=path)
    if value < 0:
        raise RegistryError("must not be negative", path=path)
    return float(value)


def _window(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RegistryError("must be a positive integer", path=path)
    return value


def _endpoint(value: Any, path: str) -> str:
    text = _text(value, path)
    try:
        parts = urlsplit(text)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in text
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        valid = False
    if not valid:
        raise RegistryError("must be an http or https URL", path=path)
    return text


def _headers(value: Any, path: str) -> FrozenDict:
    members = _object(value, path)
    seen: set[str] = set()
    for position, (name, header) in enumerate(members.items(), start=1):
        where = _child(path, name, position)
        if not re.fullmatch(_HEADER_NAME, name):
            raise RegistryError("is not a valid HTTP header name", path=where)
        if name.lower() in seen:
            raise RegistryError("duplicate header name (names are case-insensitive)", path=where)
        seen.add(name.lower())
        _text(header, where)
    return FrozenDict(members)


def _reasoning(value: Any, path: str) -> tuple[tuple[Effort, ...], Effort | None]:
    members = _object(value, path)
    _refuse_unknown(members, path, _REASONING_MEMBERS)
    _require(members, path, ("efforts",))
    where = _child(path, "efforts")
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
    default_path = _child(path, "default")
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


def _timeout_ms(value: Any, path: str) -> int:
    """DEC-AUTH-2 ``timeout_ms``: an integer from 1 to :data:`MAX_TIMEOUT_MS`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TIMEOUT_MS:
        raise RegistryError(f"must be an integer from 1 to {MAX_TIMEOUT_MS}", path=path)
    return value


def _pricing(value: Any, path: str) -> Pricing | str:
    if value == CATALOG_PRICING:
        return CATALOG_PRICING
    if isinstance(value, str):
        raise RegistryError(f'must be an object or the string "{CATALOG_PRICING}"', path=path)
    members = _object(value, path)
    _refuse_unknown(members, path, _PRICING_MEMBERS)
    _require(members, path, _PRICING_MEMBERS)
    return Pricing(
        input_per_mtok=_rate(members["input_per_mtok"], _child(path, "input_per_mtok")),
        output_per_mtok=_rate(members["output_per_mtok"], _child(path, "output_per_mtok")),
    )


def _provider(value: Any, path: str) -> ProviderDescriptor:
    members = _object(value, path)
    _require(members, path, ("type",))
    type_path = _child(path, "type")
    kind = members["type"]
    if not isinstance(kind, str):
        raise RegistryError("must be a string", path=type_path)
    if not _is_type(kind):
        raise RegistryError(f"must be one of {', '.join(PROVIDER_TYPES)}", path=type_path)
    for name in members:
        owner = _TYPE_ONLY_MEMBERS.get(name)
        if owner is not None and owner != kind:
            raise RegistryError(f"is only accepted for type {owner}", path=_child(path, name))
    _refuse_unknown(members, path, _PROVIDER_MEMBERS)
    _require(members, path, _REQUIRED_MEMBERS[kind])

    def optional_text(name: str) -> str | None:
        return _text(members[name], _child(path, name)) if name in members else None

    provider_id = _text(members["id"], _child(path, "id"))
    if not re.fullmatch(_ID_PATTERN, provider_id):
        raise RegistryError("must match [a-z0-9][a-z0-9._-]{0,63}", path=_child(path, "id"))
    efforts: tuple[Effort, ...] = ()
    default_effort: Effort | None = None
    if "reasoning" in members:
        efforts, default_effort = _reasoning(members["reasoning"], _child(path, "reasoning"))
    return ProviderDescriptor(
        id=provider_id,
        type=kind,
        model=_text(members["model"], _child(path, "model")),
        declared_default=_boolean(members.get("default", False), _child(path, "default")),
        endpoint=(
            _endpoint(members["endpoint"], _child(path, "endpoint"))
            if "endpoint" in members
            else None
        ),
        deployment=optional_text("deployment"),
        api_version=optional_text("api_version"),
        api_key=optional_text("api_key"),
        headers=(
            _headers(members["headers"], _child(path, "headers"))
            if "headers" in members
            else FrozenDict()
        ),
        efforts=efforts,
        default_effort=default_effort,
        pricing=_pricing(members["pricing"], _child(path, "pricing"))
        if "pricing" in members
        else None,
        attachments=_boolean(members.get("attachments", True), _child(path, "attachments")),
        script=optional_text("script"),
        context_window=(
            _window(members["context_window"], _child(path, "context_window"))
            if "context_window" in members
            else DEFAULT_CONTEXT_WINDOW
        ),
        timeout_ms=(
            _timeout_ms(members["timeout_ms"], _child(path, "timeout_ms"))
            if "timeout_ms" in members
            else DEFAULT_TIMEOUT_MS
        ),
    )


def _document(value: Any) -> tuple[ProviderDescriptor, ...]:
    members = _object(value, "")
    _refuse_unknown(members, "", _TOP_MEMBERS)
    _require(members, "", _TOP_MEMBERS)
    version = members["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version != AUTH_VERSION:
        raise RegistryError(f"must be the integer {AUTH_VERSION}", path="version")
    entries = members["providers"]
    if not isinstance(entries, list):
        raise RegistryError("must be an array", path="providers")
    if not entries:
        raise RegistryError("must list at least one provider", path="providers")
    providers: list[ProviderDescriptor] = []
    for index, entry in enumerate(entries):
        path = f"providers[{index}]"
        provider = _provider(entry, path)
        if any(p.id == provider.id for p in providers):
            raise RegistryError("duplicate provider id", path=f"{path}.id")
        if provider.declared_default and any(p.declared_default for p in providers):
            raise RegistryError("a second provider declares default true", path=f"{path}.default")
        providers.append(provider)
    return tuple(providers)


def parse_registry(data: bytes, *, source: str) -> Registry:
    """Parse auth.json bytes strictly (DEC-AUTH-1/2).

    ``source`` labels diagnostics (e.g. ``"auth.json"``); it must not be the
    file's path, which is itself a credential literal (DEC-AUTH-3). The
    returned registry has no ``source_path``; :func:`load_registry` sets it.
    """
    try:
        providers = _document(_unambiguous(_decode(data), ""))
    except RegistryError as exc:
        raise RegistryError(exc.problem, path=exc.path, source=source) from None
    return Registry(providers=providers)


def load_registry(home: Path) -> Registry:
    """Read ``home/auth.json``; when it does not exist, the built-in registry (DEC-AUTH-4).

    A relative ``script`` is resolved against the directory holding auth.json.
    """
    path = home / AUTH_FILE_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        if path.is_symlink():
            raise RegistryError("is a dangling symbolic link", source=AUTH_FILE_NAME) from None
        return BUILTIN_REGISTRY
    except OSError as exc:
        problem = f"cannot be opened ({type(exc).__name__})"
        raise RegistryError(problem, source=AUTH_FILE_NAME) from None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise RegistryError("is not a regular file", source=AUTH_FILE_NAME)
            data = handle.read(MAX_AUTH_JSON_BYTES + 1)
    except OSError as exc:
        problem = f"cannot be read ({type(exc).__name__})"
        raise RegistryError(problem, source=AUTH_FILE_NAME) from None
    if len(data) > MAX_AUTH_JSON_BYTES:
        problem = f"is larger than {MAX_AUTH_JSON_BYTES} bytes"
        raise RegistryError(problem, source=AUTH_FILE_NAME)
    parsed = parse_registry(data, source=AUTH_FILE_NAME)
    base = path.parent.absolute()
    providers = tuple(
        p._replace(script=str(base / p.script)) if p.script is not None else p
        for p in parsed.providers
    )
    return Registry(providers=providers, source_path=path.absolute())
