"""The registry: auth.json, else the environment, else offline (DEC-AUTH-4).

With an ``auth.json`` in the home it alone is the registry. Without one, the
variables the providers' own SDKs read make an implicit registry, so a
migrating user's first call reaches a real model:

- ``anthropic`` (type ``anthropic``): ``ANTHROPIC_API_KEY`` (``x-api-key``)
  and/or ``ANTHROPIC_AUTH_TOKEN`` (``Authorization: Bearer``), at
  ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``); model
  ``ANTHROPIC_MODEL`` (an id or alias, default ``sonnet``); serves every
  ``claude-*`` id and the aliases.
- ``openai`` (type ``openai``): ``OPENAI_API_KEY`` at ``OPENAI_BASE_URL``
  (default ``https://api.openai.com/v1``); model ``OPENAI_MODEL`` (default
  :data:`OPENAI_DEFAULT_MODEL`); serves any model (an OpenAI-compatible
  server names its own).
- ``azure-openai`` (type ``azure_openai``): ``AZURE_OPENAI_API_KEY`` (or
  ``AZURE_OPENAI_AD_TOKEN``, sent as a bearer token) at
  ``AZURE_OPENAI_ENDPOINT``, with ``OPENAI_API_VERSION`` and
  ``AZURE_OPENAI_DEPLOYMENT`` (its model; it serves only that one).

They are listed in that order and the first is the default, so with both
Anthropic and OpenAI variables Anthropic serves unless ``--provider`` or
``--model`` picks another. With none of them the built-in offline ``local``
echo provider is the registry (:data:`~agentx.config.registry.BUILTIN_REGISTRY`).
The secret values of every such variable join the credential union whether
or not an auth.json exists (:func:`environment_secrets`, DEC-AUTH-3).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentx.config.home import AUTH_FILE_NAME
from agentx.config.registry import (
    BUILTIN_REGISTRY,
    Effort,
    ProviderDescriptor,
    Registry,
    RegistryError,
)
from agentx.messages.frozen import FrozenDict

ANTHROPIC_ENDPOINT = "https://api.anthropic.com"
OPENAI_ENDPOINT = "https://api.openai.com/v1"
#: The model of the ``openai`` environment profile without ``OPENAI_MODEL``.
OPENAI_DEFAULT_MODEL = "gpt-5"
#: The variables whose values are secrets (DEC-AUTH-3).
SECRET_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
)
#: The sentence of the offline notice (stderr, and ``system/init``'s ``provider_notice``).
OFFLINE_NOTICE = (
    "no provider is configured (no auth.json, no ANTHROPIC_API_KEY, OPENAI_API_KEY or "
    "AZURE_OPENAI_API_KEY): answering with the offline echo provider"
)
_ANTHROPIC_EFFORTS: tuple[Effort, ...] = ("low", "medium", "high", "xhigh", "max")
_OPENAI_EFFORTS: tuple[Effort, ...] = ("minimal", "low", "medium", "high", "xhigh")


def resolve_registry(home: Path, environ: Mapping[str, str]) -> Registry:
    """auth.json, else the environment's registry, else the built-in one.

    The auth.json parser loads only when there is a file to read: a session
    without one never imports it (start-up, DEC-CLI-3). Any other outcome of
    the look (a file, a link, a path that cannot be searched) is the
    parser's to read or report, exactly as without the look.
    """
    try:
        os.lstat(home / AUTH_FILE_NAME)
    except FileNotFoundError:
        return environment_registry(environ) or BUILTIN_REGISTRY
    except OSError:
        pass
    from agentx.config.auth_json import load_registry, with_environment_keys  # noqa: PLC0415

    registry = load_registry(home)
    if registry is not BUILTIN_REGISTRY:
        return with_environment_keys(registry, environ)
    return environment_registry(environ) or BUILTIN_REGISTRY


def is_offline(registry: Registry) -> bool:
    """Nothing is configured: the built-in echo registry (DEC-AUTH-4)."""
    return registry is BUILTIN_REGISTRY


def environment_secrets(environ: Mapping[str, str]) -> frozenset[str]:
    """The values of :data:`SECRET_VARIABLES` that are set (DEC-AUTH-3)."""
    return frozenset(environ[name] for name in SECRET_VARIABLES if environ.get(name))


def environment_registry(environ: Mapping[str, str]) -> Registry | None:
    """The implicit registry of the provider variables, or None when none is set.

    A set variable with an unusable value (an endpoint that is not an http(s)
    URL, a control character) is a start-up error naming the variable, never
    its value.
    """
    providers = tuple(
        desc
        for desc in (_anthropic(environ), _openai(environ), _azure(environ))
        if desc is not None
    )
    if not providers:
        return None
    first = providers[0]._replace(declared_default=True)
    return Registry(providers=(first, *providers[1:]))


def _value(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    if not value:
        return None
    # The auth.json value checks load only when a variable is set (start-up, DEC-CLI-3).
    from agentx.config.auth_schema import text_value  # noqa: PLC0415

    return text_value(value, name)


def _endpoint(environ: Mapping[str, str], name: str, default: str) -> str:
    value = environ.get(name)
    if not value:
        return default
    from agentx.config.auth_schema import endpoint_value  # noqa: PLC0415 - as in _value

    return endpoint_value(value, name)


def _anthropic(environ: Mapping[str, str]) -> ProviderDescriptor | None:
    key = _value(environ, "ANTHROPIC_API_KEY")
    token = _value(environ, "ANTHROPIC_AUTH_TOKEN")
    if key is None and token is None:
        return None
    from agentx.config.models import resolve_model  # noqa: PLC0415 - a cycle: models needs registry

    desc = ProviderDescriptor(
        id="anthropic",
        type="anthropic",
        model="claude-*",
        declared_default=False,
        endpoint=_endpoint(environ, "ANTHROPIC_BASE_URL", ANTHROPIC_ENDPOINT),
        api_key=key,
        headers=FrozenDict({"Authorization": f"Bearer {token}"} if token else {}),
        efforts=_ANTHROPIC_EFFORTS,
        pricing="catalog",
        models=("claude-*",),
        from_environment=True,
    )
    wanted = _value(environ, "ANTHROPIC_MODEL") or "sonnet"
    model = resolve_model(desc, wanted, environ)
    if model is None:
        raise RegistryError("ANTHROPIC_MODEL names no Claude model or alias")
    return desc._replace(model=model)


def _openai(environ: Mapping[str, str]) -> ProviderDescriptor | None:
    key = _value(environ, "OPENAI_API_KEY")
    if key is None:
        return None
    return ProviderDescriptor(
        id="openai",
        type="openai",
        model=_value(environ, "OPENAI_MODEL") or OPENAI_DEFAULT_MODEL,
        declared_default=False,
        endpoint=_endpoint(environ, "OPENAI_BASE_URL", OPENAI_ENDPOINT),
        api_key=key,
        efforts=_OPENAI_EFFORTS,
        pricing="catalog",
        models=("*",),
        from_environment=True,
    )


def _azure(environ: Mapping[str, str]) -> ProviderDescriptor | None:
    key = _value(environ, "AZURE_OPENAI_API_KEY")
    token = _value(environ, "AZURE_OPENAI_AD_TOKEN")
    if key is None and token is None:
        return None
    missing = [
        name
        for name in ("AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION", "AZURE_OPENAI_DEPLOYMENT")
        if not environ.get(name)
    ]
    if missing:
        raise RegistryError(f"an Azure OpenAI key is set but not {', '.join(missing)}")
    deployment = _value(environ, "AZURE_OPENAI_DEPLOYMENT")
    assert deployment is not None
    return ProviderDescriptor(
        id="azure-openai",
        type="azure_openai",
        model=deployment,
        declared_default=False,
        endpoint=_endpoint(environ, "AZURE_OPENAI_ENDPOINT", ""),
        deployment=deployment,
        api_version=_value(environ, "OPENAI_API_VERSION"),
        api_key=key,
        headers=FrozenDict({"Authorization": f"Bearer {token}"} if token else {}),
        efforts=_OPENAI_EFFORTS,
        pricing="catalog",
        from_environment=True,
    )
