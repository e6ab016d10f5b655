"""The provider registry (DECISIONS section 4): its types and what is derived from it.

The registry is read from the AgentX-home ``auth.json`` version 2 by
:mod:`agentx.config.auth_json`. Every failure is a :class:`RegistryError` whose
message names the problem (and, for auth.json, its JSON path) but never a
configured value, so it is safe on stderr (DEC-AUTH-1, exit 2).

Rules implemented here:

- DEC-AUTH-2: :class:`ProviderDescriptor`, the closed provider shape.
- DEC-AUTH-3: :func:`credential_literals`, the credential union (secret values only).
- DEC-AUTH-3a: :func:`routing_literals`, the routing data no projection may carry.
- DEC-AUTH-4: :func:`select_provider` and the built-in ``local`` registry.
- DEC-AUTH-5: :func:`route_binding`.
- DEC-CLI-5: :func:`check_effort` for ``--effort``.

``context_window`` (a positive integer, default
:data:`DEFAULT_CONTEXT_WINDOW`) is the profile's window in tokens: the
maximum of ``get_context_usage`` and the base of automatic compaction
(DEC-AUTH-2).
"""

# No ``from __future__ import annotations`` here: typing.NamedTuple turns string
# annotations into ForwardRefs, and the first ForwardRef's compile() initialises
# the AST types (~1 ms of start-up, WIRE-026). Every annotation below is defined
# before it is used.
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeGuard, get_args

from agentx.messages.frozen import FrozenDict
from agentx.messages.pricing import Pricing

ProviderType = Literal["azure_openai", "openai", "anthropic", "scripted"]
Effort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]

#: DEC-AUTH-2 provider types and effort vocabulary (canonical order), as on the wire.
PROVIDER_TYPES: tuple[ProviderType, ...] = get_args(ProviderType)
EFFORTS: tuple[Effort, ...] = get_args(Effort)
#: The context window (tokens) of a profile that declares none.
DEFAULT_CONTEXT_WINDOW = 200_000
#: DEC-AUTH-2 ``timeout_ms``: the overall deadline of one model request, and
#: the largest accepted (one hour: a bound, so a typo cannot mean "forever").
DEFAULT_TIMEOUT_MS = 600_000
MAX_TIMEOUT_MS = 3_600_000
#: DEC-AUTH-2 ``"pricing": "catalog"``: prices from the maintained catalog.
CATALOG_PRICING = "catalog"


def is_effort(value: str) -> TypeGuard[Effort]:
    """``value`` is one of the DEC-AUTH-2 effort names."""
    return value in EFFORTS


class RegistryError(ValueError):
    """A registry, selection or catalog failure (exit 2, DECISIONS section 8).

    ``path`` is the JSON path of the offending member ("" when the problem is
    not located in the document). The message never carries a configured
    value: it is written to stderr before any credential validator exists.
    """

    def __init__(self, problem: str, *, path: str = "", source: str = "") -> None:
        self.path = path
        self.problem = problem
        located = f"{path}: {problem}" if path else problem
        super().__init__(f"{source}: {located}" if source else located)


class ProviderDescriptor(NamedTuple):
    """One auth.json provider entry (DEC-AUTH-2); build it with keywords.

    A ``NamedTuple``, not a dataclass, so prelaunch discovery imports neither
    ``dataclasses`` nor ``inspect`` (WIRE-026 start-up budget).
    Routing and credential fields are left out of ``repr`` (secrets,
    DEC-AUTH-3, and routing data, DEC-AUTH-3a), so logging a descriptor is safe.
    """

    id: str
    type: ProviderType
    model: str
    declared_default: bool
    endpoint: str | None = None
    deployment: str | None = None
    api_version: str | None = None
    api_key: str | None = None
    headers: FrozenDict = FrozenDict()
    efforts: tuple[Effort, ...] = ()
    default_effort: Effort | None = None
    #: Declared rates, :data:`CATALOG_PRICING`, or None (cost unknown).
    pricing: Pricing | str | None = None
    attachments: bool = True
    script: str | None = None
    context_window: int = DEFAULT_CONTEXT_WINDOW
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    #: DEC-AUTH-2 ``models``: the other models the profile serves, as
    #: shell-style patterns (``"any"`` is ``("*",)``); empty: only ``model``.
    models: tuple[str, ...] = ()
    #: Made from environment variables, not auth.json (DEC-AUTH-4).
    from_environment: bool = False
    #: DEC-AUTH-3 ``api_key_env``: the variable ``api_key`` is read from at start.
    api_key_env: str | None = None

    def __repr__(self) -> str:
        return _redacted_repr(self, _ROUTE_FIELDS)


class Registry(NamedTuple):
    """The providers in auth.json order; ``source_path`` is None for the built-in registry.

    A ``NamedTuple`` for start-up (WIRE-026); ``repr`` leaves out ``source_path``.
    """

    providers: tuple[ProviderDescriptor, ...]
    source_path: Path | None = None

    def __repr__(self) -> str:
        return _redacted_repr(self, _SOURCE_FIELDS)

    def effective_default(self) -> ProviderDescriptor | None:
        """A singleton is the default; else the declared one; else none (DEC-AUTH-2)."""
        if len(self.providers) == 1:
            return self.providers[0]
        return next((p for p in self.providers if p.declared_default), None)

    def get(self, provider_id: str) -> ProviderDescriptor | None:
        """The provider with exactly this id, if any."""
        return next((p for p in self.providers if p.id == provider_id), None)


def _redacted_repr(record: ProviderDescriptor | Registry, hidden: frozenset[str]) -> str:
    """``repr`` without the ``hidden`` fields (DEC-AUTH-3: they hold credential literals).

    ``typing.NamedTuple`` cannot leave a field out of its generated ``repr``,
    so the two registry types route theirs through here.
    """
    shown = (f"{name}={getattr(record, name)!r}" for name in record._fields if name not in hidden)
    return f"{type(record).__name__}({', '.join(shown)})"


#: The routing and credential fields of a descriptor (DEC-AUTH-3, DEC-AUTH-3a).
_ROUTE_FIELDS = frozenset({"endpoint", "deployment", "api_version", "api_key", "headers"})
#: The auth.json path is routing data (DEC-AUTH-3a).
_SOURCE_FIELDS = frozenset({"source_path"})


#: DEC-AUTH-4: with no auth.json the registry is one offline echo provider, so
#: a fresh install runs. Its cost is a known zero (it calls no paid service,
#: WIRE-012); it has no efforts; attachments follow runtime qualification.
BUILTIN_REGISTRY = Registry(
    providers=(
        ProviderDescriptor(
            id="local",
            type="scripted",
            model="local-echo",
            declared_default=False,
            pricing=Pricing(input_per_mtok=0.0, output_per_mtok=0.0),
        ),
    ),
)


# --- selection and derived values ------------------------------------------------


def select_provider(registry: Registry, provider_id: str | None) -> ProviderDescriptor:
    """``--provider ID`` or the effective default (DEC-AUTH-4).

    The diagnostics name neither the requested id nor the configured ones (a
    tiny credential could be a substring of either); ``--list-providers``
    shows the ids.
    """
    if provider_id is not None:
        chosen = registry.get(provider_id)
        if chosen is None:
            raise RegistryError(
                "--provider: no provider with that id (agentx --list-providers shows them)"
            )
        return chosen
    default = registry.effective_default()
    if default is None:
        raise RegistryError("several providers and no default: pass --provider ID")
    return default


def check_effort(desc: ProviderDescriptor, effort: str | None) -> Effort | None:
    """Validate ``--effort`` against the selection (DEC-CLI-5; ``--model`` is
    :mod:`agentx.config.models`).

    Returns the effort the process runs with: the requested one, else the
    profile's declared default (None when it declares none).
    """
    if effort is None:
        return desc.default_effort
    if not desc.efforts:
        raise RegistryError("--effort: the selected provider declares no reasoning efforts")
    if not is_effort(effort) or effort not in desc.efforts:
        raise RegistryError(f"--effort must be one of {', '.join(desc.efforts)}")
    return effort


#: DEC-AUTH-3: header names whose values are protocol, not secrets (lower case).
PUBLIC_HEADERS = frozenset(
    {"anthropic-version", "anthropic-beta", "user-agent", "accept", "content-type"}
)


def endpoint_secrets(endpoint: str) -> set[str]:
    """The secret parts of an endpoint URL (DEC-AUTH-3): its user-info (a user
    name there is often a token) and every query-string value, raw and
    percent-decoded. The rest of the URL is routing data (DEC-AUTH-3a)."""
    # lazy: start-up, WIRE-026 (only a registry with endpoints pays for it)
    from urllib.parse import parse_qsl, unquote, urlsplit  # noqa: PLC0415

    found: set[str] = set()
    try:
        parts = urlsplit(endpoint)
        userinfo = (parts.username, parts.password)
    except ValueError:
        return found
    for value in userinfo:
        if value:
            found |= {value, unquote(value)}
    for raw in parts.query.split("&"):
        value = raw.partition("=")[2]
        if value:
            found.add(value)
    found.update(value for _, value in parse_qsl(parts.query) if value)
    return found


def credential_literals(registry: Registry) -> frozenset[str]:
    """The raw credential union of DEC-AUTH-3 (the guard adds escaped spellings).

    Secret values only: every ``api_key``, every header value but the public
    protocol headers', and the secret parts of every endpoint
    (:func:`endpoint_secrets`), of every provider, selected or not. Routing
    data is not here (DEC-AUTH-3a: :func:`routing_literals`). The built-in
    registry has none, so its output stays byte-identical (WIRE-013).
    """
    literals: set[str] = set()
    for provider in registry.providers:
        if provider.api_key is not None:
            literals.add(provider.api_key)
        if provider.endpoint is not None:
            literals |= endpoint_secrets(provider.endpoint)
        literals.update(
            value for name, value in provider.headers.items() if name.lower() not in PUBLIC_HEADERS
        )
    return frozenset(literals)


def literal_members(registry: Registry) -> dict[str, str]:
    """Each credential and routing literal -> the member it came from, spelled
    with public names only (the format's member names and the provider id), so
    a start-up error can say which member to fix (DEC-AUTH-3)."""
    named: dict[str, str] = {}
    for provider in registry.providers:
        owner = f'of provider "{provider.id}"'
        for member in ("endpoint", "deployment", "api_version"):
            value = getattr(provider, member)
            if value is not None:
                named.setdefault(value, f"{member} {owner}")
        if provider.endpoint is not None:
            for secret in endpoint_secrets(provider.endpoint):
                named[secret] = f"the user-info or query of the endpoint {owner}"
        for name, value in provider.headers.items():
            if name.lower() not in PUBLIC_HEADERS:
                named[value] = f"a headers value {owner}"
        if provider.api_key is not None:
            named[provider.api_key] = f"api_key {owner}"
    return named


def routing_literals(registry: Registry) -> frozenset[str]:
    """DEC-AUTH-3a: routing data, private but not secret: every ``endpoint``,
    ``deployment`` and ``api_version`` and the auth.json path. Every projection
    agentx builds is checked against these (scenario 27); the streaming union
    is not, so a model may write ``https://api.anthropic.com``."""
    literals: set[str] = set()
    for provider in registry.providers:
        for value in (provider.endpoint, provider.deployment, provider.api_version):
            if value is not None:
                literals.add(value)
    if registry.source_path is not None:
        literals.add(str(registry.source_path))
    return frozenset(literals)


def route_binding(desc: ProviderDescriptor) -> str:
    """The opaque route binding stored with a session (DEC-AUTH-5); never emitted.

    sha256 hex over a versioned JSON array of (type, endpoint, deployment,
    api_version): JSON quoting keeps field boundaries unambiguous and keeps
    an absent field (null) distinct from any string.
    """
    # lazy: start-up, WIRE-026 (discovery computes no binding)
    import json  # noqa: PLC0415

    canonical = json.dumps(
        ["agentx-route-binding/1", desc.type, desc.endpoint, desc.deployment, desc.api_version],
        ensure_ascii=True,
        separators=(",", ":"),
    )
    return _sha256_hex(canonical.encode("ascii"))


def _sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, by CPython's built-in implementation when
    it has one (``_sha256`` in 3.11, ``_sha2`` later: the module hashlib
    itself falls back to), else by hashlib. The digest is the same; importing
    hashlib initialises OpenSSL, about 3 ms of CPU before the ``initialize``
    response, for one 64-byte digest (start-up, DEC-CLI-3)."""
    from importlib import import_module  # noqa: PLC0415

    for name in ("_sha256", "_sha2"):
        try:
            builtin: Any = import_module(name)
        except ImportError:
            continue
        return str(builtin.sha256(data).hexdigest())
    import hashlib  # noqa: PLC0415

    return hashlib.sha256(data).hexdigest()
