"""Which profile serves ``--model``, and as which model id (DEC-CLI-5, DEC-AUTH-2).

``--model`` takes a model id or an alias at start and selects the profile
that serves it; the choice is frozen for the process (WIRE-025). A profile
serves its ``model`` and every id matching one of its ``models`` patterns
(shell-style, ``*`` for any; ``"any"`` in auth.json). The aliases are
Claude Code's: ``default`` is the profile's own model on every type;
``sonnet``, ``opus`` and ``haiku`` are understood by ``anthropic`` profiles
only: the profile's own model when its name holds the family, else the id
``ANTHROPIC_DEFAULT_<FAMILY>_MODEL`` names, else :data:`ALIAS_MODELS`,
when the profile serves that id.

Without ``--provider`` the effective default is asked first, then every
other profile in registry order; the first that serves the model is chosen.
Diagnostics name neither the requested model (a mistyped flag can hold a
key) nor a profile's route.
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from agentx.config.registry import ProviderDescriptor, Registry, RegistryError, select_provider

#: Claude Code's family aliases and the Anthropic model each names by default.
ALIAS_MODELS: Mapping[str, str] = {
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-7",
    "haiku": "claude-haiku-4-5",
}
#: ``default``: the profile's own model.
DEFAULT_ALIAS = "default"


def serves(desc: ProviderDescriptor, model: str) -> bool:
    """``desc`` serves ``model`` by its ``model`` or one of its ``models`` patterns."""
    return model == desc.model or any(fnmatchcase(model, pattern) for pattern in desc.models)


def resolve_model(
    desc: ProviderDescriptor, requested: str, environ: Mapping[str, str]
) -> str | None:
    """The model id ``desc`` serves for ``requested`` (an id or an alias), or None."""
    if requested == DEFAULT_ALIAS:
        return desc.model
    if requested in ALIAS_MODELS:
        if desc.type != "anthropic":
            return None
        if requested in desc.model:
            return desc.model
        named = (
            environ.get(f"ANTHROPIC_DEFAULT_{requested.upper()}_MODEL") or ALIAS_MODELS[requested]
        )
        return named if serves(desc, named) else None
    return requested if serves(desc, requested) else None


def select_for_model(
    registry: Registry,
    provider_id: str | None,
    requested: str | None,
    environ: Mapping[str, str],
) -> ProviderDescriptor:
    """The selected profile with the model it runs frozen in (DEC-AUTH-4, DEC-CLI-5)."""
    if requested is None:
        return select_provider(registry, provider_id)
    if provider_id is not None:
        return _with_model(select_provider(registry, provider_id), requested, environ, "--provider")
    default = registry.effective_default()
    order = ([default] if default is not None else []) + [
        p for p in registry.providers if p is not default
    ]
    for desc in order:
        model = resolve_model(desc, requested, environ)
        if model is not None:
            return desc._replace(model=model)
    raise RegistryError(
        "--model: no configured provider serves the requested model "
        "(agentx --list-providers shows them)"
    )


def validate_model(desc: ProviderDescriptor, requested: str, environ: Mapping[str, str]) -> str:
    """The id a live model change within ``desc`` runs (the ``sdk`` profile's
    ``set_model``; never a provider switch): raises :class:`RegistryError`
    when ``desc`` does not serve ``requested``."""
    model = resolve_model(desc, requested, environ)
    if model is None:
        raise RegistryError(f"the requested model is not served by provider {desc.id}")
    return model


def _with_model(
    desc: ProviderDescriptor, requested: str, environ: Mapping[str, str], chosen_by: str
) -> ProviderDescriptor:
    model = resolve_model(desc, requested, environ)
    if model is None:
        raise RegistryError(
            f"--model: the provider chosen by {chosen_by} does not serve the requested model"
        )
    return desc._replace(model=model)
