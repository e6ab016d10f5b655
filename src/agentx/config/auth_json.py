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

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from agentx.config.auth_schema import (
    ID_PATTERN,
    PROVIDER_MEMBERS,
    REQUIRED_MEMBERS,
    TOP_MEMBERS,
    TYPE_ONLY_MEMBERS,
    boolean_value,
    endpoint_value,
    headers_value,
    member_path,
    models_value,
    object_value,
    pricing_value,
    reasoning_value,
    refuse_unknown,
    require,
    text_value,
    timeout_ms_value,
    window_value,
)
from agentx.config.home import AUTH_FILE_NAME
from agentx.config.registry import (
    BUILTIN_REGISTRY,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_TIMEOUT_MS,
    PROVIDER_TYPES,
    Effort,
    ProviderDescriptor,
    ProviderType,
    Registry,
    RegistryError,
)
from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.messages.frozen import FrozenDict

#: The only auth.json version this host reads (DEC-AUTH-1).
AUTH_VERSION = 2
#: auth.json is operator configuration; anything larger is refused unread.
MAX_AUTH_JSON_BYTES = START_FILE_LIMITS[AUTH_FILE_NAME]

_T = TypeVar("_T")


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
    # lazy, as in route_binding: start-up, WIRE-026 (json is only
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
            where = member_path(path, _unambiguous(name, path), position)
            if name in members:
                raise RegistryError("duplicate member name", path=where)
            members[name] = _unambiguous(member, where)
        return members
    return value


def _provider_type(members: dict[str, Any], path: str) -> ProviderType:
    """The provider's ``type``, checked before any other member (DEC-AUTH-2:
    the closed shape depends on it), and no member of another type."""
    require(members, path, ("type",))
    type_path = member_path(path, "type")
    kind = members["type"]
    if not isinstance(kind, str):
        raise RegistryError("must be a string", path=type_path)
    if not _is_type(kind):
        raise RegistryError(f"must be one of {', '.join(PROVIDER_TYPES)}", path=type_path)
    for name in members:
        owner = TYPE_ONLY_MEMBERS.get(name)
        if owner is not None and owner != kind:
            raise RegistryError(f"is only accepted for type {owner}", path=member_path(path, name))
    return kind


def _provider(value: Any, path: str) -> ProviderDescriptor:
    """One ``providers[]`` entry; its members are checked in a fixed order,
    so the first problem reported is always the same one."""
    members = object_value(value, path)
    kind = _provider_type(members, path)
    refuse_unknown(members, path, PROVIDER_MEMBERS)
    require(members, path, REQUIRED_MEMBERS[kind])

    def member(name: str, check: Callable[[Any, str], _T], absent: _T) -> _T:
        return check(members[name], member_path(path, name)) if name in members else absent

    provider_id = text_value(members["id"], member_path(path, "id"))
    if not re.fullmatch(ID_PATTERN, provider_id):
        raise RegistryError("must match [a-z0-9][a-z0-9._-]{0,63}", path=member_path(path, "id"))
    if "api_key" in members and "api_key_env" in members:
        raise RegistryError(
            "api_key and api_key_env exclude each other; keep one",
            path=member_path(path, "api_key_env"),
        )
    _check_endpoint_path(kind, member("endpoint", endpoint_value, None), path)
    key_env = member("api_key_env", text_value, None)
    if key_env is not None and not re.fullmatch(_VARIABLE, key_env):
        raise RegistryError(
            "must be an environment variable name", path=member_path(path, "api_key_env")
        )
    no_efforts: tuple[tuple[Effort, ...], Effort | None] = ((), None)
    efforts, default_effort = member("reasoning", reasoning_value, no_efforts)
    return ProviderDescriptor(
        id=provider_id,
        type=kind,
        model=text_value(members["model"], member_path(path, "model")),
        declared_default=member("default", boolean_value, False),
        endpoint=member("endpoint", endpoint_value, None),
        deployment=member("deployment", text_value, None),
        api_version=member("api_version", text_value, None),
        api_key=member("api_key", text_value, None),
        headers=member("headers", headers_value, FrozenDict()),
        efforts=efforts,
        default_effort=default_effort,
        pricing=member("pricing", pricing_value, None),
        attachments=member("attachments", boolean_value, True),
        script=member("script", text_value, None),
        context_window=member("context_window", window_value, DEFAULT_CONTEXT_WINDOW),
        timeout_ms=member("timeout_ms", timeout_ms_value, DEFAULT_TIMEOUT_MS),
        models=member("models", models_value, ()),
        api_key_env=key_env,
    )


def _document(value: Any) -> tuple[ProviderDescriptor, ...]:
    members = object_value(value, "")
    refuse_unknown(members, "", TOP_MEMBERS)
    require(members, "", TOP_MEMBERS)
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
    file's path, which is routing data no diagnostic spells (DEC-AUTH-3a). The
    returned registry has no ``source_path``; :func:`load_registry` sets it.
    """
    try:
        providers = _document(_unambiguous(_decode(data), ""))
    except RegistryError as exc:
        raise RegistryError(exc.problem, path=exc.path, source=source) from None
    return Registry(providers=providers)


def _check_endpoint_path(kind: ProviderType, endpoint: str | None, path: str) -> None:
    """DEC-AUTH-2: the endpoint is the API's base URL. An ``anthropic`` one ending
    in ``/v1`` would be posted to ``.../v1/v1/messages``: a start-up error naming
    the member (never its value, DEC-AUTH-3a). An ``openai`` endpoint is left
    as written: servers differ (``/v1``, ``/v1beta/openai``, the root)."""
    if endpoint is None:
        return
    # Not urllib: prelaunch discovery imports none of it (WIRE-026 start-up).
    after_scheme = endpoint.partition("://")[2]
    url_path = after_scheme.partition("/")[2].partition("?")[0].partition("#")[0]
    url_path = "/" + url_path.rstrip("/")
    if kind == "anthropic" and url_path.endswith("/v1"):
        raise RegistryError(
            "an anthropic endpoint is the base URL without /v1 (agentx adds "
            "/v1/messages); remove the trailing /v1",
            path=member_path(path, "endpoint"),
        )


#: DEC-AUTH-3 ``api_key_env``: a portable environment variable name.
_VARIABLE = r"[A-Za-z_][A-Za-z0-9_]{0,127}"


def with_environment_keys(registry: Registry, environ: Mapping[str, str]) -> Registry:
    """DEC-AUTH-3: each ``api_key_env`` entry gets its key from the environment;
    the value is then an ``api_key`` like any other (credential union, request
    header). An unset or empty variable fails start-up naming the member and
    the variable, never a value."""
    providers = []
    for index, provider in enumerate(registry.providers):
        if provider.api_key_env is None:
            providers.append(provider)
            continue
        value = environ.get(provider.api_key_env, "")
        if not value:
            raise RegistryError(
                f"the environment variable {provider.api_key_env} is not set or empty",
                path=f"providers[{index}].api_key_env",
                source=AUTH_FILE_NAME,
            )
        providers.append(provider._replace(api_key=value))
    return registry._replace(providers=tuple(providers))


def load_registry(home: Path) -> Registry:
    """Read ``home/auth.json``; when it does not exist, the built-in registry (DEC-AUTH-4).

    A relative ``script`` is resolved against the directory holding auth.json.
    """
    path = home / AUTH_FILE_NAME
    try:
        data = read_start_file(path, MAX_AUTH_JSON_BYTES, AUTH_FILE_NAME, name_path=False)
    except FileNotFoundError:
        return BUILTIN_REGISTRY
    except StartFileError as exc:
        raise RegistryError(exc.problem, source=AUTH_FILE_NAME) from None
    parsed = parse_registry(data, source=AUTH_FILE_NAME)
    base = path.parent.absolute()
    providers = tuple(
        p._replace(script=str(base / p.script)) if p.script is not None else p
        for p in parsed.providers
    )
    return Registry(providers=providers, source_path=path.absolute())
