"""The session's self-description: ``system/init`` and the ``initialize``
response (DECISIONS section 11, WIRE-016, WIRE-023, WIRE-024).

Both are built once at start-up from the frozen selection, before the first
write, and checked against the credential union there: if any public
projection would carry a credential literal, start-up fails before a catalog
is encoded (WIRE-024), instead of the guard latching mid-session.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct

from agentx import __version__
from agentx.config import catalog
from agentx.config.registry import ProviderDescriptor, Registry
from agentx.messages.encode import fs_text
from agentx.messages.frozen import FrozenDict, freeze, repr_without
from agentx.messages.slash_commands import COMMANDS

OUTPUT_STYLE = "default"


class SessionInfo(Struct, frozen=True, kw_only=True):
    session_id: str
    cwd: Path
    registry: Registry
    selected: ProviderDescriptor
    tools: tuple[str, ...]
    permission_mode: str
    control_profile: str
    input_capabilities: FrozenDict | None
    #: DEC-AUTH-5: the opaque route binding the session store records and
    #: compares on resume; never part of any record.
    route_binding: str = ""
    mcp_servers: tuple[FrozenDict, ...] = ()
    #: DEC-AUTH-4: the sentence saying that nothing is configured and the
    #: offline echo provider answers (None when a provider is configured).
    provider_notice: str | None = None
    #: DEC-CLI-5 ``--fallback-model`` (reported in ``system/init``).
    fallback_model: str | None = None
    #: DEC-PERM-BASH-5: ``{enabled, tier, network, reason}`` when the settings
    #: turn the Bash sandbox on (absent otherwise).
    sandbox: FrozenDict | None = None

    def __repr__(self) -> str:
        return repr_without(self, frozenset({"route_binding"}))


def init_record(info: SessionInfo, *, uuid: str) -> FrozenDict:
    """``system/init`` (DEC-CLI-3: the first stdout record)."""
    record: dict[str, Any] = {
        "type": "system",
        "subtype": "init",
        "apiKeySource": catalog.account(info.selected)["apiKeySource"],
        "agentx_version": __version__,
        "cwd": fs_text(str(info.cwd)),
        "tools": list(info.tools),
        "mcp_servers": list(info.mcp_servers),
        **catalog.init_provider_fields(info.selected),
        "permissionMode": info.permission_mode,
        "slash_commands": [spec.name for spec in COMMANDS],
        "output_style": OUTPUT_STYLE,
        "skills": [],
        "plugins": [],
        "control_profile": info.control_profile,
    }
    if info.input_capabilities is not None:
        record["input_capabilities"] = info.input_capabilities
    if info.provider_notice is not None:
        record["provider_notice"] = info.provider_notice
    if info.fallback_model is not None:
        record["fallback_model"] = info.fallback_model
    if info.sandbox is not None:
        record["sandbox"] = info.sandbox
    record["uuid"] = uuid
    record["session_id"] = info.session_id
    return freeze(record)  # type: ignore[no-any-return]


def initialize_response(info: SessionInfo) -> FrozenDict:
    """The fieldless ``initialize`` success payload (WIRE-024 catalog included)."""
    payload: dict[str, Any] = {
        "commands": [spec.to_wire() for spec in COMMANDS],
        "agents": [],
        "output_style": OUTPUT_STYLE,
        "available_output_styles": [OUTPUT_STYLE],
        "models": catalog.models_projection(info.selected),
        "providers": catalog.providers_catalog(info.registry, info.selected.id),
        "account": catalog.account(info.selected),
        "pid": os.getpid(),
        "control_profile": info.control_profile,
    }
    if info.input_capabilities is not None:
        payload["input_capabilities"] = info.input_capabilities
    if info.sandbox is not None:
        payload["sandbox"] = info.sandbox
    return freeze(payload)  # type: ignore[no-any-return]


def check_public_projections(
    info: SessionInfo, literals: Iterable[str], members: Mapping[str, str] | None = None
) -> None:
    """WIRE-024: fail start-up (RegistryError) if a projection holds a credential;
    ``members`` names each literal's member for the error (DEC-AUTH-3). With
    no literal (the built-in registry) nothing can be disclosed, and neither
    projection is built to be checked (start-up, DEC-CLI-3)."""
    literals = tuple(literals)
    if not literals:
        return
    catalog.assert_catalog_safe(initialize_response(info), literals, members)
    catalog.assert_catalog_safe(init_record(info, uuid="0"), literals, members)
