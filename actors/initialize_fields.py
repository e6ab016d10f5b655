"""The ``initialize`` fields this host applies in the ``sdk`` profile (DEC-PROFILE-2).

:func:`initialize_handlers` is the one registry: a field the host can apply
has exactly one entry here, a :class:`FieldHandler`. Every other member of
an ``initialize`` is refused with a correlated error naming it, and the
session ends (:mod:`agentx.messages.initialize` decides; the supervisor
carries it out). Adding a field is adding one entry: its pure ``check`` of
the value (the wire shape, no IO), and its ``apply``, which installs the
value in the session before the ``initialize`` is answered and before any
turn runs (the router holds prompts until then).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from agentx.diagnostics import logger
from agentx.messages.initialize import FieldCheck

if TYPE_CHECKING:
    from agentx.actors.host_output import Output, Session
    from agentx.actors.host_steps import Control
    from agentx.actors.host_turns import Turns
    from agentx.actors.mcp_deferred import DeferredMcp
    from agentx.actors.mcp_manager import McpHandle
    from agentx.hooks.session import SessionHooks
    from agentx.messages.system_prompt import PromptSources
    from agentx.turns.engine import TurnEngine


class FieldHandler(Struct, frozen=True, kw_only=True):
    """One applied ``initialize`` field.

    ``check`` sees the decoded (frozen) value and returns None, or a sentence
    saying what is wrong with it (the request is then refused, nothing is
    applied). ``apply`` runs on the supervisor's thread, only when every
    field of the request passed its check; it may return members to add to
    the ``initialize`` response (e.g. ``hooks_applied``).
    """

    check: FieldCheck
    apply: Callable[[Any], Mapping[str, Any] | None]


def initialize_handlers(
    s: Session, out: Output, control: Control, turns: Turns
) -> Mapping[str, FieldHandler]:
    """DEC-PROFILE-2: field name -> its handler, for the ``sdk`` profile.

    ``s`` is the session (options, parts, supervision), ``out`` the writer's
    sink, ``control`` the broker (outbound requests such as ``hook_callback``
    and ``mcp_message``: ``control.broker.ask``), the policy and the live
    settings, ``turns`` the engine, the runner and the background tasks.
    """
    handlers: dict[str, FieldHandler] = {}
    if turns.hooks is not None:
        handlers["hooks"] = _hooks_handler(turns.hooks)
    handlers["jsonSchema"] = _json_schema_handler(turns)
    if turns.engine.agents_offered:
        handlers.update(_agent_handlers(turns))
    if turns.suggestions is not None:
        handlers["promptSuggestions"] = FieldHandler(
            check=_boolean, apply=_switch(turns.suggestions.switch)
        )
    if s.options.prompt_sources is not None:
        handlers.update(_prompt_handlers(s.options.prompt_sources, turns.engine))
    if control.mcp is not None:
        handlers.update(_mcp_handlers(control.mcp, s.options.credential_literals))
    skills = next((tool for tool in s.parts.tools if tool.name == "Skill"), None)
    if skills is not None:
        handlers["skills"] = _skills_handler(skills)
    return MappingProxyType(handlers)


def _skills_handler(tool: Any) -> FieldHandler:
    """DEC-PROFILE-2, DEC-TURN-3: ``skills``, the SDKs' allowlist: the
    ``Skill`` tool offers only the skills it names (its skills are read at
    the first turn, after this). Its check loads only when the field is
    sent (DEC-CLI-3)."""

    def check(value: Any) -> str | None:
        from agentx.messages.skills import allowlist_problem  # noqa: PLC0415

        return allowlist_problem(value)

    def apply(value: Any) -> None:
        tool.restrict(tuple(value))

    return FieldHandler(check=check, apply=apply)


def _mcp_handlers(mcp: McpHandle | DeferredMcp, known: frozenset[str]) -> dict[str, FieldHandler]:
    """The TypeScript SDK's MCP servers (DEC-PROFILE-2, DEC-SET-2):
    ``sdkMcpServers`` names in-process servers reached with ``mcp_message``;
    ``mcpServers`` carries the other servers (its default delivery, with
    ``--await-initialize``); both connect as first attempts, so the first
    model request waits for them. ``apply`` starts the connections and
    returns: it never waits for the client (the handshake's ``mcp_message``
    answers come through the reader this request holds).
    ``sdkMcpServerManifests`` is the SDK's optional cache of those
    handshakes; agentx does the handshake over ``mcp_message`` as the SDK
    must allow, and says so per server (``not_honoured``). Their core
    (:mod:`agentx.messages.mcp.sdk`) loads only when one of them is sent
    (DEC-CLI-3)."""

    def sdk_check(value: Any) -> str | None:
        from agentx.messages.mcp.sdk import sdk_servers_problem  # noqa: PLC0415

        return sdk_servers_problem(value)

    def servers_check(value: Any) -> str | None:
        from agentx.messages.mcp.sdk import initial_servers_problem  # noqa: PLC0415

        return initial_servers_problem(value, known)

    def manifests_check(value: Any) -> str | None:
        from agentx.messages.mcp.sdk import manifests_problem  # noqa: PLC0415

        return manifests_problem(value)

    def add_sdk(value: Any) -> None:
        from agentx.messages.mcp.sdk import sdk_servers  # noqa: PLC0415

        mcp.add_initial(sdk_servers(value))

    def add_servers(value: Any) -> Mapping[str, Any]:
        from agentx.messages.mcp.config import parse_servers  # noqa: PLC0415

        mcp.add_initial(parse_servers(value))
        return {"mcp_servers_applied": True}

    def manifests(value: Any) -> Mapping[str, Any]:
        return {"sdk_mcp_manifests_parked": {name: "not_honoured" for name in value}}

    return {
        "sdkMcpServers": FieldHandler(check=sdk_check, apply=add_sdk),
        "mcpServers": FieldHandler(check=servers_check, apply=add_servers),
        "sdkMcpServerManifests": FieldHandler(check=manifests_check, apply=manifests),
    }


def _prompt_handlers(sources: PromptSources, engine: TurnEngine) -> dict[str, FieldHandler]:
    """``systemPrompt`` (a string, or the TypeScript SDK's array of blocks),
    ``appendSystemPrompt``, ``excludeDynamicSections`` and
    ``planModeInstructions`` (DEC-PROFILE-2; in the standalone profile
    DEC-COMPAT-4 still refuses a prompt). Each applied field joins what the
    request already set, and the engine's prompt is composed again from the
    start's sources (:func:`~agentx.messages.system_prompt.session_prompt`)."""
    from agentx.messages.system_prompt import (  # noqa: PLC0415
        client_prompt,
        client_prompt_problem,
        client_text_problem,
        session_prompt,
    )

    chosen: dict[str, Any] = {}

    def setting(name: str, convert: Callable[[Any], Any]) -> Callable[[Any], None]:
        def apply(value: Any) -> None:
            chosen[name] = convert(value)
            prompt = session_prompt(sources, **chosen)
            engine.set_prompt(prompt.system, prompt.first_context)

        return apply

    return {
        "systemPrompt": FieldHandler(
            check=client_prompt_problem, apply=setting("replacement", client_prompt)
        ),
        "appendSystemPrompt": FieldHandler(check=client_text_problem, apply=setting("append", str)),
        "excludeDynamicSections": FieldHandler(
            check=_boolean, apply=setting("exclude_dynamic", bool)
        ),
        "planModeInstructions": FieldHandler(
            check=client_text_problem,
            apply=lambda value: engine.set_plan_instructions(str(value) or None),
        ),
    }


def _json_schema_handler(turns: Turns) -> FieldHandler:
    """``jsonSchema``: the TS SDK's ``outputFormat`` (DEC-CLI-5 ``--json-schema``
    by another road): from the first turn on, every turn ends with a valid
    ``StructuredOutput`` call. ``jsonschema`` loads only when one is sent."""

    def check(value: Any) -> str | None:
        from agentx.messages.structured_output import schema_problem  # noqa: PLC0415

        return schema_problem(value)

    def apply(value: Any) -> None:
        turns.engine.set_output_schema(value)

    return FieldHandler(check=check, apply=apply)


def _agent_handlers(turns: Turns) -> dict[str, FieldHandler]:
    """``agents`` (the SDKs' ``AgentDefinition`` values, the highest-precedence
    source), ``forwardSubagentText`` and ``appendSubagentSystemPrompt``
    (DEC-PROFILE-2, DEC-TURN-3): applied when the ``Agent`` tool is offered
    (else refused by name). The definitions' core loads only when sent."""
    engine = turns.engine

    def check_agents(value: Any) -> str | None:
        from agentx.messages.agents.definitions import DefinitionError, from_json  # noqa: PLC0415

        try:
            from_json(value, "sdk")
        except DefinitionError as exc:
            return str(exc)
        return None

    def apply_agents(value: Any) -> None:
        from agentx.messages.agents.definitions import from_json  # noqa: PLC0415

        engine.set_agents(from_json(value, "sdk"))

    def forward(value: Any) -> None:
        engine.set_agents(forward_text=bool(value))

    def append(value: Any) -> None:
        engine.set_agents(append_prompt=value)

    return {
        "agents": FieldHandler(check=check_agents, apply=apply_agents),
        "forwardSubagentText": FieldHandler(check=_boolean, apply=forward),
        "appendSubagentSystemPrompt": FieldHandler(check=_string, apply=append),
    }


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _hooks_handler(hooks: SessionHooks) -> FieldHandler:
    """``hooks``: the SDK's callback hooks, each answered through a
    ``hook_callback`` request (DEC-PROFILE-2, DECISIONS section 3). The
    response says they are registered and that ``onFailure`` is honoured,
    which the Python SDK checks for ``on_failure="block"``."""
    from agentx.messages.hooks.callbacks import check_initialize_hooks  # noqa: PLC0415
    from agentx.messages.hooks.config import initialize_groups  # noqa: PLC0415
    from agentx.messages.hooks.events import FIRED  # noqa: PLC0415

    def apply(value: Any) -> Mapping[str, Any]:
        groups = initialize_groups(value)
        for event in sorted({g.event for g in groups} - FIRED):
            logger.warning("initialize registers {} hooks; agentx never fires {}", event, event)
        hooks.definitions.set_callbacks(groups)
        return {"hooks_applied": True, "hook_on_failure_supported": True}

    return FieldHandler(check=check_initialize_hooks, apply=apply)


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _switch(switch: Callable[[bool], None]) -> Callable[[Any], Mapping[str, Any] | None]:
    """Apply a boolean field; nothing to add to the response."""

    def apply(value: Any) -> None:
        switch(bool(value))

    return apply
