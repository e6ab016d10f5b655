"""Everything resolved before the protocol starts (DECISIONS sections 4, 8, 9).

:func:`launch` turns parsed options into a ready :class:`Session`, in named
steps: the configuration (the AgentX home, the strict registry and the
frozen provider selection, WIRE-025; the provider client, the settings and
the tools), the credential literals and the opened session, the session's
public facts (the attachment capability, MOD-A14B, and the
credential-checked public projections, WIRE-024), the host's options and the
``--attach`` files. Every failure here is exit 2 with a credential-free
diagnostic and nothing on stdout.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct
from msgspec.structs import replace

from agentx.actors.host import AgentOptions, Host, HostOptions, HostParts
from agentx.agents.environment import read_environment
from agentx.agents.memory import load_memory
from agentx.config.cli_args import Options
from agentx.config.env_registry import (
    OFFLINE_NOTICE,
    is_offline,
    resolve_registry,
)
from agentx.config.home import agentx_home, os_error_line, private_dirs
from agentx.config.models import select_for_model
from agentx.config.registry import (
    ProviderDescriptor,
    Registry,
    RegistryError,
    check_effort,
    credential_literals,
    literal_members,
    route_binding,
    routing_literals,
)
from agentx.config.request_flags import fallback_model, request_options
from agentx.config.settings import Settings, SettingsError, has_http_hook, load_settings
from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.diagnostics import logger
from agentx.media.deferred import RuntimeVerdict
from agentx.messages.attachment_limits import input_capabilities
from agentx.messages.encode import encode_record
from agentx.messages.frozen import FrozenDict
from agentx.messages.guard import CredentialValidator
from agentx.messages.memory_block import memory_block
from agentx.messages.output_modes import OutputFormat
from agentx.messages.permission_rules import Mode
from agentx.messages.pricing import Pricing
from agentx.messages.profiles import Profile, choose_profile
from agentx.messages.system_prompt import (
    PromptSources,
    built_in,
    environment_block,
    session_prompt,
)
from agentx.providers.base import ProviderClient
from agentx.providers.build import build_client
from agentx.providers.scripted import ScriptError
from agentx.sessions.event_log import EVENTS_FILE_NAME
from agentx.sessions.info import SessionInfo, check_public_projections
from agentx.sessions.setup import OpenedSession, ResumeAt, SessionSetupError, open_session
from agentx.sessions.store.errors import SessionError
from agentx.sessions.store.files import SESSIONS_DIR_NAME
from agentx.sessions.store.select import open_blobs, sessions_root, store_secrets, store_url
from agentx.tools.orphans import Orphans
from agentx.tools.registry import (
    AGENT_TOOL_NAMES,
    UnknownToolError,
    builtin_tools,
    offers_agent,
    offers_skill,
    offers_web_search,
    skill_tool,
    web_search_tool,
    without_agent,
)

if TYPE_CHECKING:
    from agentx.checkpoints.stores import Place
    from agentx.media.blobs import Blobs
    from agentx.messages.attachments import CommittedManifests, Manifest
    from agentx.sandbox.shell import Sandbox
    from agentx.sessions.mirror import TranscriptMirror

EXIT_USAGE = 2
#: DEC-AUTH-3: a header or env value of an MCP server is a credential; one that
#: agentx's own first records already contain could never be written safely.
MCP_LITERAL_COLLISION = (
    "an MCP server header or env value also appears in agentx's own output "
    "(system/init or initialize), so it cannot be guarded as a credential (WIRE-013)"
)


class LaunchError(Exception):
    """Start-up failed before the protocol began; ``status`` is the exit code."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


def _pricing(desc: ProviderDescriptor) -> Pricing | None:
    """Declared rates as they are; ``"catalog"`` becomes the catalog's price for
    this exact provider type and model (DEC-AUTH-2, WIRE-012)."""
    if not isinstance(desc.pricing, str):
        return desc.pricing
    from agentx.config.price_catalog import GenaiPricesCatalog

    return Pricing(0.0, 0.0, catalog=GenaiPricesCatalog(desc.type, desc.model))


def _capabilities(config: _Config, *, attach: bool) -> FrozenDict | None:
    """MOD-A14B: advertise input_capabilities when the provider accepts
    attachments; the runtime check waits for the first attachment that needs
    it (:class:`~agentx.media.deferred.RuntimeVerdict`), except with
    ``--attach``, whose files are imported before the protocol starts."""
    if config.runtime is None:
        return None
    if attach and config.runtime.problem() is not None:
        return None
    return input_capabilities()


class Session(Struct, frozen=True, kw_only=True):
    info: SessionInfo
    client: ProviderClient
    options: HostOptions
    parts: HostParts
    environ: dict[str, str]
    #: ``--attach`` manifests committed for ``prompt_uuid`` (DEC-CLI-1).
    attachments: tuple[Manifest, ...] = ()
    prompt_uuid: str | None = None

    def one_shot(self, prompt: str) -> bytes:
        return one_shot_input(prompt, self.attachments, self.prompt_uuid)

    def run(
        self,
        *,
        read_chunk: Callable[[], bytes],
        write: Callable[[bytes], int | None],
        on_result: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> int:
        return self.host(read_chunk=read_chunk, write=write, on_result=on_result).run()

    def host(
        self,
        *,
        read_chunk: Callable[[], bytes],
        write: Callable[[bytes], int | None],
        on_result: Callable[[Mapping[str, Any]], None] | None = None,
        orphans: Orphans | None = None,
    ) -> Host:
        """The session's host, not yet running (the CLI hands it its signals
        and, owning its process, the adopted orphans: DEC-EXIT-1)."""
        return Host(
            info=self.info,
            client=self.client,
            options=self.options,
            parts=self.parts,
            read_chunk=read_chunk,
            write=write,
            environ=self.environ,
            on_result=on_result,
            orphans=orphans,
        )


def _prompt_sources(options: Options, built: tuple[str, str]) -> PromptSources:
    """DEC-CLI-5: the built-in prompt and its dynamic block, the flags'
    replacement (``--system-prompt``, ``--system-prompt-file``), appended
    text and ``--exclude-dynamic-system-prompt-sections``."""
    base = options.system_prompt or ""
    if options.system_prompt_file is not None:
        limit = START_FILE_LIMITS["system prompt"]
        try:
            data = read_start_file(options.system_prompt_file, limit, "--system-prompt-file")
            base = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            raise LaunchError("--system-prompt-file cannot be read") from None
        except StartFileError as exc:
            raise LaunchError(str(exc)) from None
    built_in, environment = built
    return PromptSources(
        built_in=built_in,
        environment=environment,
        replacement=base or None,
        append=options.append_system_prompt,
        exclude_dynamic=options.exclude_dynamic_sections,
    )


def _built_in_prompt(
    config: _Config,
    info: SessionInfo,
    mode: Mode,
    add_dirs: tuple[Path, ...],
    environ: Mapping[str, str],
) -> tuple[str, str]:
    """The built-in system prompt for this session's tools and mode, and its
    dynamic environment block (:mod:`agentx.messages.system_prompt`)."""
    env = read_environment(
        cwd=config.workdir,
        additional_directories=add_dirs,
        environ=environ,
        model=info.selected.model,
        today=date.today(),
    )
    return built_in(_tool_names(config), None, plan_mode=mode == "plan"), environment_block(env)


def _tool_names(config: _Config) -> list[str]:
    """The tools offered, as ``system/init`` and the built-in prompt name them."""
    return [tool.name for tool in config.tools] + (["Agent"] if config.agent else [])


def _agent_options(options: Options, environ: Mapping[str, str], environment: str) -> AgentOptions:
    """DEC-TURN-3, DEC-CLI-5: what the ``Agent`` tool is built from. ``--agents``
    is checked here (exit 2 naming what is wrong); the agent files are read
    at the first turn, never at start."""
    flag: tuple[Any, ...] = ()
    if options.agents is not None:
        from agentx.messages.agents.definitions import DefinitionError, from_json
        from agentx.messages.strict_json import StrictJSONError, loads_strict

        try:
            flag = from_json(loads_strict(options.agents), "flag")
        except StrictJSONError:
            raise LaunchError("--agents: not valid JSON") from None
        except DefinitionError as exc:
            raise LaunchError(f"--agents: {exc}") from None
    return AgentOptions(
        flag_agents=flag,
        append_prompt=options.append_subagent_system_prompt,
        environment=environment,
        setting_sources=tuple(options.setting_sources),
        user_home=Path(environ.get("HOME") or Path.home()),
    )


def _task_paths(
    home: Path, session_id: str, *, persistent: bool
) -> tuple[Path | None, Path | None]:
    """DEC-TURN-3, DEC-TURN-5: a persistent session keeps its background task
    output files and its internal-event log in its directory; otherwise the
    host uses a temp directory for the files and keeps no log."""
    if not persistent:
        return None, None
    session_dir = home / SESSIONS_DIR_NAME / session_id
    return session_dir / "tasks", session_dir / EVENTS_FILE_NAME


def _checkpoint_place(config: _Config, opened: _Opened, environ: Mapping[str, str]) -> Place | None:
    """DEC-PROFILE-2: where the session's file checkpoints go, when it keeps
    them (:func:`agentx.messages.checkpoints.enabled`): beside its transcript,
    or in a temp folder without persistence. Nothing of them loads unless
    the SDKs' variable is set at all."""
    if "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING" not in environ:  # checkpoints.ENABLE_VAR
        return None
    from agentx.checkpoints.stores import CHECKPOINTS_DIR, Place
    from agentx.messages.checkpoints import SETTING, enabled

    sources = config.settings.sources
    if not enabled(environ, [s.settings[SETTING] for s in sources if SETTING in s.settings]):
        return None
    session_id = opened.session.session_id
    if opened.session.transcript is None:
        return Place(kind="temp", location="", session_id=session_id)
    root = sessions_root(opened.store_url, config.home)
    if root is None:
        return Place(kind="postgres", location=str(opened.store_url), session_id=session_id)
    folder = root / session_id / CHECKPOINTS_DIR
    return Place(kind="files", location=str(folder), session_id=session_id)


def _output_format(name: str) -> OutputFormat:
    if name == "json":
        return "json"
    return "text" if name == "text" else "stream-json"


def one_shot_input(
    prompt: str, attachments: tuple[Manifest, ...] = (), prompt_uuid: str | None = None
) -> bytes:
    """DEC-CLI-1/2: a text prompt becomes one ordinary user record, then EOF.

    With ``--attach`` files it is the versioned form (WIRE-017) carrying every
    committed manifest of its prompt UUID, so WIRE-020 admits it.
    """
    message: dict[str, Any] = {"role": "user", "content": prompt}
    if attachments:
        blocks = [{"type": "text", "text": prompt}, *(m.to_wire() for m in attachments)]
        message = {"role": "user", "content_version": 1, "content": blocks}
    record: dict[str, Any] = {"type": "user", "message": message, "parent_tool_use_id": None}
    if prompt_uuid is not None:
        record["uuid"] = prompt_uuid
    return encode_record(record)


def launch(options: Options, *, environ: dict[str, str], cwd: str) -> Session:
    """Resolve everything before the protocol starts; raises :class:`LaunchError`.

    Any file-system failure here is exit 2 with one line naming the path and
    the OS error, never a traceback (DECISIONS section 8).
    """
    try:
        return _launch(options, environ=environ, cwd=cwd)
    except OSError as exc:
        raise LaunchError(f"cannot start: {os_error_line(exc)}") from None


def _launch(options: Options, *, environ: dict[str, str], cwd: str) -> Session:
    home = private_dirs(agentx_home(environ))
    workdir = Path(cwd)
    config = _configure(options, home=home, workdir=workdir, environ=environ)
    sandbox = _sandbox(options, config, environ)
    try:
        return _launch_with(options, config, sandbox, environ=environ)
    except BaseException:
        if sandbox is not None:
            sandbox.close()
        raise


def _sandbox(options: Options, config: _Config, environ: Mapping[str, str]) -> Sandbox | None:
    """DEC-PERM-BASH-5: the Bash sandbox the settings ask for; exit 2 when it
    cannot be what they ask. Its modules load only when it is on (start-up time)."""
    if config.settings.effective.get("sandbox") is None:
        return None  # no block: off (parse_sandbox), its grammar not loaded (DEC-CLI-3)
    try:
        if not config.settings.sandbox.enabled:
            return None
        from agentx.sandbox.setup import SandboxStartError, start_sandbox
    except SettingsError as exc:
        raise LaunchError(str(exc)) from None
    try:
        return start_sandbox(
            config.settings,
            cwd=config.workdir,
            add_dirs=tuple(Path(d).resolve() for d in options.add_dirs),
            home=config.home,
            environ_home=environ.get("HOME") or str(Path.home()),
        )
    except (SandboxStartError, SettingsError) as exc:
        raise LaunchError(str(exc)) from None


def _launch_with(
    options: Options, config: _Config, sandbox: Sandbox | None, *, environ: dict[str, str]
) -> Session:
    home = config.home
    opened = _open(options, config, environ=environ)
    mode: Mode = options.permission_mode or config.settings.default_mode or "default"
    info = _session_info(options, config, opened, mode, sandbox)
    attachments, prompt_uuid, manifests = _attach(options, info, config, opened.blobs)
    tasks_dir, events_file = _task_paths(
        home,
        opened.session.session_id,
        persistent=opened.session.transcript is not None and opened.store_url is None,
    )
    settings = config.settings
    add_dirs = tuple(Path(d).resolve() for d in options.add_dirs)
    parts = HostParts(
        settings=settings,
        tools=config.tools,
        permission_mode=mode,
        home=home,
        store=opened.blobs,
        add_dirs=add_dirs,
        mcp_servers=config.mcp_servers,
        mcp_scopes=config.mcp_scopes,
        manifests=manifests,
        history=opened.session.history,
        turns=opened.session.turns,
        transcript=opened.session.transcript,
        tasks_dir=tasks_dir,
        events_file=events_file,
        sandbox=sandbox,
        runtime=config.runtime if info.input_capabilities is not None else None,
        checkpoints=_checkpoint_place(config, opened, environ),
    )
    built = _built_in_prompt(config, info, mode, add_dirs, environ)
    host_options = _host_options(options, config, opened.literals, built, environ)
    if config.agent:
        host_options = replace(
            host_options, agents=_agent_options(options, environ, environment=built[1])
        )
    logger.set_session(info.session_id)
    if info.provider_notice is not None:
        # DEC-AUTH-4: the one stderr line, once started; a WARNING line that
        # does not load loguru (a text session stays light, DEC-CLI-3).
        logger.light_warning(info.provider_notice)
    return Session(
        info=info,
        client=config.client,
        options=host_options,
        parts=parts,
        environ=environ,
        attachments=attachments,
        prompt_uuid=prompt_uuid,
    )


class _Config(Struct, frozen=True):
    """The first step: the home, the registry's selection and its client,
    the merged settings and the tools."""

    home: Path
    workdir: Path
    registry: Registry
    desc: ProviderDescriptor
    effort: str | None
    client: ProviderClient
    settings: Settings
    tools: tuple[Any, ...]
    #: DEC-TURN-3: whether the ``Agent`` tool is offered.
    agent: bool
    #: DEC-PROFILE-1/2: the control profile (flag, setting, SDK environment).
    profile: Profile
    #: DEC-SET-2: the MCP servers to start (settings, ``.mcp.json``, ``--mcp-config``).
    mcp_servers: FrozenDict = FrozenDict()
    mcp_scopes: FrozenDict = FrozenDict()
    #: DEC-CLI-5 ``--fallback-model``, resolved within the selected provider.
    fallback: str | None = None
    #: MOD-A14B, decided when an attachment first needs it; None when the
    #: provider accepts no attachments.
    runtime: RuntimeVerdict | None = None


def _configure(
    options: Options, *, home: Path, workdir: Path, environ: Mapping[str, str]
) -> _Config:
    try:
        # DEC-AUTH-4: auth.json, else the environment, else offline.
        registry = resolve_registry(home, environ)
        desc = select_for_model(registry, options.provider, options.model, environ)
        effort = check_effort(desc, options.effort)
        # DEC-CLI-5: the fallback model and how every request is asked.
        fallback = fallback_model(desc, options.fallback_model, environ)
        asked = request_options(
            desc,
            thinking=options.thinking,
            max_thinking_tokens=options.max_thinking_tokens,
            thinking_display=options.thinking_display,
            task_budget=options.task_budget,
            betas=options.betas,
        )
        client = build_client(desc, asked)
        settings = load_settings(
            home=home,
            cwd=workdir,
            flag=options.settings,
            policy_path=environ.get("AGENTX_POLICY"),
            sources=options.setting_sources,
            allowed_tools=options.allowed_tools,
            disallowed_tools=options.disallowed_tools,
        )
        # DEC-CLI-5: a tool a deny rule covers entirely is not offered at all.
        # The rules are parsed once for every tool (start-up, DEC-CLI-3).
        denies = settings.rules.fully_denies
        tools = tuple(
            tool for tool in builtin_tools(without_agent(options.tools)) if not denies(tool.name)
        )
        if offers_skill(options.tools) and not denies("Skill"):
            # DEC-TURN-3: the session's Skill tool (its skills are read at the first turn).
            user_home = Path(environ.get("HOME") or Path.home())
            tools = (*tools, skill_tool(workdir, user_home, options.setting_sources))
        if offers_web_search(options.tools, desc.type) and not denies("WebSearch"):
            # DEC-TURN-3: the provider's own search, through the session's client.
            tools = (*tools, web_search_tool(client))
        # DEC-TURN-3: the Agent tool, unless --tools leaves it out or a deny
        # rule covers it (either of its names).
        agent = offers_agent(options.tools) and not any(denies(n) for n in AGENT_TOOL_NAMES)
        profile = choose_profile(
            options.control_profile,
            settings.control_profile,
            environ.get("CLAUDE_CODE_ENTRYPOINT"),
        )
        mcp_servers, mcp_scopes = _mcp_servers(options, settings, workdir, profile)
    except (RegistryError, ScriptError, SettingsError, UnknownToolError) as exc:
        raise LaunchError(str(exc)) from None
    return _Config(
        home=home,
        workdir=workdir,
        registry=registry,
        desc=desc,
        effort=effort,
        client=client,
        settings=settings,
        tools=tools,
        agent=agent,
        profile=profile,
        mcp_servers=mcp_servers,
        mcp_scopes=mcp_scopes,
        fallback=fallback,
        runtime=RuntimeVerdict(home) if desc.attachments else None,
    )


def _mirror(options: Options, workdir: Path, environ: Mapping[str, str]) -> TranscriptMirror | None:
    """DEC-STORE-1 ``--session-mirror``: the transcript's mirror (loaded only then)."""
    if not options.session_mirror:
        return None
    from agentx.sessions.mirror import TranscriptMirror, projects_dir

    return TranscriptMirror(projects=projects_dir(environ), cwd=workdir)


def _mcp_servers(
    options: Options, settings: Settings, workdir: Path, profile: Profile
) -> tuple[FrozenDict, FrozenDict]:
    """DEC-SET-2: the settings' servers, unless ``--mcp-config`` or a
    ``.mcp.json`` adds some (only then is their module loaded)."""
    if not (options.mcp_config or options.strict_mcp_config) and not os.path.lexists(
        workdir / ".mcp.json"
    ):
        return settings.mcp_servers, settings.mcp_scopes
    from agentx.mcp.start import session_servers
    from agentx.messages.mcp.config import McpConfigError

    try:
        chosen = session_servers(
            settings,
            cwd=workdir,
            configs=options.mcp_config,
            strict=options.strict_mcp_config,
            sdk=profile == "sdk",
        )
    except McpConfigError as exc:
        raise SettingsError(str(exc)) from None
    return chosen.servers, chosen.scopes


class _Opened(Struct, frozen=True):
    """The second step: every credential literal, the blobs and the opened
    session."""

    literals: frozenset[str]
    #: The MCP servers' header and env values alone (their own diagnostic).
    server_literals: frozenset[str]
    store_url: str | None
    blobs: Blobs
    session: OpenedSession


def _http_hook_literals(settings: Settings, environ: Mapping[str, str]) -> frozenset[str]:
    """DEC-AUTH-3: what the http hooks send in their headers (and their URLs'
    secrets) joins the union before the first write; the headers are
    interpolated from this same start environment (DECISIONS section 3)."""
    hooks = settings.hooks
    if not has_http_hook(hooks):
        return frozenset()
    from agentx.hooks.http_post import http_hook_literals

    return http_hook_literals(hooks, {**environ, **settings.env})


def _mcp_literals(servers: FrozenDict) -> frozenset[str]:
    """The configured MCP servers' header and env values (DEC-AUTH-3); with
    none configured the MCP grammar is not loaded (DEC-CLI-3)."""
    if not servers:
        return frozenset()
    from agentx.messages.mcp.config import credential_literals

    return credential_literals(servers.values())


def _open(options: Options, config: _Config, *, environ: Mapping[str, str]) -> _Opened:
    # DEC-AUTH-3: MCP header and env values join the union before the first write.
    server_literals = _mcp_literals(config.mcp_servers)
    # DEC-STORE-1 / DEC-AUTH-3: the session store's URL and password too.
    chosen_store = store_url(options.session_store, environ)
    try:
        # DEC-STORE-1: attachment blobs live where the sessions live.
        blobs = open_blobs(None if options.no_session_persistence else chosen_store, config.home)
    except SessionError as exc:
        raise LaunchError(f"session store: {exc}") from None
    literals = frozenset(
        credential_literals(config.registry)
        | server_literals
        | store_secrets(chosen_store, environ)
        | _http_hook_literals(config.settings, environ)
    )
    if literals:
        # DEC-AUTH-3: stderr carries none of the union either (no encoder
        # guards it, so every diagnostic line is redacted from here on).
        from agentx.providers.errors import Redactor

        logger.redact_with(Redactor(tuple(literals)))
    # DEC-AUTH-6: nothing the output guard would refuse is persisted.
    persistable = CredentialValidator(literals)
    try:
        opened = open_session(
            home=config.home,
            desc=config.desc,
            blobs=blobs,
            resume=options.resume,
            session_id=options.session_id,
            cwd=config.workdir,
            continue_=options.continue_,
            fork=options.fork_session,
            at=ResumeAt(message=options.resume_session_at, drops_turn=options.resume_drops_turn)
            if options.resume_session_at is not None
            else None,
            persistent=not options.no_session_persistence,
            admit=persistable.check_spelled if len(persistable) else None,
            store_url=chosen_store,
            mirror=_mirror(options, config.workdir, environ),
        )
    except (SessionSetupError, ValueError) as exc:
        raise LaunchError(str(exc)) from None
    return _Opened(
        literals=literals,
        server_literals=server_literals,
        store_url=chosen_store,
        blobs=blobs,
        session=opened,
    )


def _mcp_entries(configured: FrozenDict) -> tuple[FrozenDict, ...]:
    """``system/init`` ``mcp_servers`` (DEC-SET-2); the MCP status table is
    loaded only when servers are configured."""
    if not configured:
        return ()
    from agentx.messages.mcp.status import initial_entries

    return initial_entries(configured)


def _session_info(
    options: Options, config: _Config, opened: _Opened, mode: Mode, sandbox: Sandbox | None
) -> SessionInfo:
    """The session's public facts, checked against every credential (WIRE-024)."""
    desc = config.desc
    info = SessionInfo(
        session_id=opened.session.session_id,
        cwd=config.workdir,
        registry=config.registry,
        selected=desc,
        tools=tuple(_tool_names(config)),
        permission_mode=mode,
        control_profile=config.profile,
        input_capabilities=_capabilities(config, attach=bool(options.attach)),
        route_binding=route_binding(desc),
        mcp_servers=_mcp_entries(config.mcp_servers),
        provider_notice=OFFLINE_NOTICE if is_offline(config.registry) else None,
        fallback_model=config.fallback,
        sandbox=None if sandbox is None else sandbox.report(),
    )
    try:
        check_public_projections(info, opened.server_literals)
    except RegistryError:
        raise LaunchError(MCP_LITERAL_COLLISION) from None
    try:
        # DEC-AUTH-3a: routing data is checked here, where the projections are built.
        check_public_projections(
            info,
            opened.literals | routing_literals(config.registry),
            literal_members(config.registry),
        )
    except RegistryError as exc:
        raise LaunchError(str(exc)) from None
    return info


def _json_schema(text: str | None) -> FrozenDict | None:
    """DEC-CLI-5 ``--json-schema``: strict JSON that is a usable schema, else
    exit 2 with one sentence. ``jsonschema`` loads only when it is given."""
    if text is None:
        return None
    from agentx.messages.strict_json import StrictJSONError, loads_strict
    from agentx.turns.structured import OutputSchema, SchemaError

    try:
        schema = loads_strict(text)
        if not isinstance(schema, FrozenDict):
            raise SchemaError("the JSON schema must be a JSON object")
        OutputSchema(schema)
    except (StrictJSONError, ValueError) as exc:
        raise LaunchError(f"--json-schema: {exc}") from None
    return schema


def _memory(options: Options, config: _Config, environ: Mapping[str, str]) -> str | None:
    """DEC-SET-1: the memory files of the selected sources, as one block."""
    user_home = Path(environ.get("HOME") or Path.home())
    files = load_memory(config.workdir, user_home, options.setting_sources, logger.light_warning)
    return memory_block(files)


def _host_options(
    options: Options,
    config: _Config,
    literals: frozenset[str],
    built: tuple[str, str],
    environ: Mapping[str, str],
) -> HostOptions:
    sources = _prompt_sources(options, built)
    prompt = session_prompt(sources)
    return HostOptions(
        profile=config.profile,
        output_format=_output_format(options.output_format),
        replay_user_messages=options.replay_user_messages,
        include_partial_messages=options.include_partial_messages,
        include_hook_events=options.include_hook_events,
        session_source="resume" if options.resume or options.continue_ else "startup",
        max_turns=options.max_turns,
        max_budget_usd=options.max_budget_usd,
        system_prompt=prompt.system,
        first_context=prompt.first_context,
        prompt_sources=sources,
        json_schema=_json_schema(options.json_schema),
        memory=_memory(options, config, environ),
        effort=config.effort,
        pricing=_pricing(config.desc),
        credential_literals=literals,
        prompt_suggestions=options.prompt_suggestions,
        post_turn_summaries=options.post_turn_summaries,
        control_channel=options.input_format == "stream-json",
        await_initialize=options.await_initialize,
        permission_prompt_tool=options.permission_prompt_tool,
    )


def _attach(
    options: Options, info: SessionInfo, config: _Config, blobs: Blobs
) -> tuple[tuple[Manifest, ...], str | None, CommittedManifests | None]:
    """``--attach``: the files committed for the one-shot prompt's UUID
    (DEC-CLI-1), and the session's manifests holding them (None without
    ``--attach``: the upload manager keeps its own, made at its first use)."""
    if not options.attach:
        return (), None, None
    if info.input_capabilities is None:
        raise LaunchError("--attach: the selected provider does not accept attachments")
    prompt_uuid = str(uuid.uuid4())
    # Pillow and pypdf load with the first attachment, never for a text session.
    from agentx.media.initial_attachments import AttachError, import_initial
    from agentx.messages.attachments import CommittedManifests

    manifests = CommittedManifests()
    try:
        attachments = import_initial(
            options.attach, prompt_uuid=prompt_uuid, store=blobs, manifests=manifests
        )
    except AttachError as exc:
        raise LaunchError(str(exc)) from None
    return attachments, prompt_uuid, manifests
