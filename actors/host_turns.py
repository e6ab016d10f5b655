"""The host's third start step: the turns (DESIGN.md "The actors").

:func:`start_turns` takes the values of the output and control steps
(:mod:`agentx.actors.host_steps`) and returns :class:`Turns`: the turn engine
over the bound tools, the background tasks (DEC-TURN-5) and the runner.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pykka
from msgspec import Struct
from msgspec.structs import replace

from agentx.actors.arbiter_gate import ArbiterGate
from agentx.actors.host_output import Output, Session
from agentx.actors.host_steps import Control, tasks_dir, transcript_path
from agentx.actors.host_wiring import PromptMaterials
from agentx.actors.supervision import RunnerDrained
from agentx.actors.task_manager import TASK_PROGRESS_SECONDS, BackgroundTasks
from agentx.actors.turn_output import SummarizingGate, ToolProgress, TurnOutput
from agentx.actors.turn_runner import TurnRunnerActor
from agentx.diagnostics import logger
from agentx.messages.encode import fs_text
from agentx.messages.frozen import FrozenDict
from agentx.permissions.policy import BoundTool
from agentx.tools.base import PathAccess, ToolContext, path_access
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import AgentSetup, EngineConfig, EnginePorts
from agentx.turns.engine import TurnEngine

if TYPE_CHECKING:
    from agentx.checkpoints.keeper import Checkpoints
    from agentx.hooks.runner import CallbackPort, HookRunner
    from agentx.hooks.session import SessionHooks
    from agentx.messages.tasks import TaskBoard
    from agentx.sessions.identity import SessionIdentity
    from agentx.turns.suggestions import PromptSuggester


class Turns(Struct, frozen=True):
    engine: TurnEngine
    tasks: BackgroundTasks
    runner: pykka.ActorRef[TurnRunnerActor]
    #: DECISIONS section 3: None when no hook can be defined in this session.
    hooks: SessionHooks | None = None
    #: DEC-PROFILE-2: the sdk profile's prompt suggestions, switched by
    #: ``initialize``'s ``promptSuggestions`` (None in the other profiles).
    suggestions: SuggestionSwitch | None = None
    #: DEC-PROFILE-2: the session's file checkpoints (None: not kept).
    checkpoints: Checkpoints | None = None


class SuggestionSwitch:
    """The prompt suggester, on or off (``--prompt-suggestions`` starts it on;
    the sdk profile's ``initialize`` may switch it). ``make`` builds the
    suggester the first time a suggestion is asked for while on (DEC-CLI-3:
    a session that never switches suggestions on never loads it)."""

    def __init__(self, make: Callable[[], PromptSuggester], *, enabled: bool) -> None:
        self._make = make
        self._suggester: PromptSuggester | None = None
        self._lock = threading.Lock()
        self._enabled = threading.Event()
        if enabled:
            self._enabled.set()

    def switch(self, enabled: bool) -> None:
        if enabled:
            self._enabled.set()
        else:
            self._enabled.clear()

    def __call__(self, scope: CancelScope) -> str | None:
        if not self._enabled.is_set():
            return None
        with self._lock:
            if self._suggester is None:
                self._suggester = self._make()
            suggester = self._suggester
        return suggester(scope)


def start_turns(s: Session, out: Output, control: Control) -> Turns:
    """The turn output and session state, the background tasks, the engine
    over the bound tools, and the runner that drives it."""
    identity, new_uuid, events = control.identity, s.new_uuid, s.events
    # The turn output also publishes the session state (DEC-TURN-2).
    turn_output = TurnOutput(out.sink, identity, new_uuid, events=events)
    tasks = _background_tasks(s, control, turn_output)
    ctx = ToolContext(
        cwd=s.info.cwd,
        add_dirs=s.parts.add_dirs,
        env=s.live_env,
        background=tasks,
        children=s.children,
        sandbox=s.parts.sandbox,
    )
    checkpoints = _checkpoints(s, control, ctx)
    ctx = replace(ctx, checkpoints=checkpoints)
    tools = tuple(BoundTool(tool, ctx, control.policy) for tool in s.parts.tools)
    hooks = _hooks(s, control, turn_output)
    engine = _engine(
        s, control, turn_output, tools, hooks, out=out, tasks=tasks, checkpoints=checkpoints
    )
    opts = s.options
    materials = PromptMaterials(control.uploads, mentions=opts.profile == "sdk")
    switch = None
    if opts.profile == "sdk":
        switch = SuggestionSwitch(
            functools.partial(_suggester, s, tools, engine), enabled=opts.prompt_suggestions
        )
        suggest: Callable[[CancelScope], str | None] | None = switch
    else:
        suggest = _suggester(s, tools, engine) if opts.prompt_suggestions else None
    runner = TurnRunnerActor.start(
        engine=engine,
        turn_output=turn_output,
        emit=out.sink,
        session=identity,
        new_uuid=new_uuid,
        pricing=opts.pricing,
        to_turn=materials.to_turn,
        check_refs=materials.check_refs,
        abort_permissions=control.broker.abort_all_permissions,
        on_drained=functools.partial(s.supervision.report, RunnerDrained()),
        replay_user_messages=opts.replay_user_messages,
        suggest=suggest,
        post_turn_summaries=opts.post_turn_summaries,
        supervision=s.supervision,
    )
    return Turns(
        engine=engine,
        tasks=tasks,
        runner=runner,
        hooks=hooks,
        suggestions=switch,
        checkpoints=checkpoints,
    )


def _checkpoints(s: Session, control: Control, ctx: ToolContext) -> Checkpoints | None:
    """DEC-PROFILE-2: the file checkpoints, when the session keeps them (the
    package loads only then). A rewind restores through the path policy a
    Write call without a grant has now: deny rules, the working
    directories and the sandbox's read-only paths."""
    place = s.parts.checkpoints
    if place is None:
        return None
    from agentx.checkpoints.keeper import Checkpoints  # noqa: PLC0415

    policy = control.policy

    def access() -> PathAccess:
        return path_access(replace(ctx, access=policy.access("Write", FrozenDict())), "Write")

    return Checkpoints(place, access)


def _background_tasks(s: Session, control: Control, turn_output: TurnOutput) -> BackgroundTasks:
    identity = control.identity

    def new_board() -> TaskBoard:
        # DEC-CLI-3: the task core loads with the first task, not at start.
        from agentx.messages.tasks import TaskBoard  # noqa: PLC0415

        return TaskBoard(
            session_id=lambda: identity.id,
            new_uuid=s.new_uuid,
            progress_interval=TASK_PROGRESS_SECONDS,
        )

    tasks = BackgroundTasks(
        new_board=new_board,
        emit=turn_output,
        tasks_dir=tasks_dir(s),
        new_uuid=s.new_uuid,
        on_started=turn_output.task_started,
        on_ended=turn_output.task_finished,
        children=s.children,
        ephemeral=s.parts.tasks_dir is None,
    )
    # The background tasks emit through the turn output, and the result waits
    # on them after an interrupt (the hard-interrupt order).
    turn_output.hold_results_on(tasks.hold_result)
    return tasks


def _engine(
    s: Session,
    control: Control,
    turn_output: TurnOutput,
    tools: tuple[BoundTool, ...],
    hooks: SessionHooks | None,
    *,
    out: Output,
    tasks: BackgroundTasks,
    checkpoints: Checkpoints | None,
) -> TurnEngine:
    """The turn engine over the resumed history (never executed)."""
    info, opts, parts = s.info, s.options, s.parts
    identity, new_uuid = control.identity, s.new_uuid
    hooks_for = (
        control.settings.hooks_for
        if hooks is None
        else functools.partial(hooks.specs, "PermissionRequest")
    )
    gate = ArbiterGate(
        control.arbiter,
        hooks_for=hooks_for,
        new_uuid=new_uuid,
        show=hooks.show if hooks is not None else None,
    )
    mcp = control.mcp
    engine = TurnEngine(
        config=EngineConfig(
            session_id=info.session_id,
            model=info.selected.model,
            pricing=opts.pricing,
            system_prompt=opts.system_prompt,
            effort=opts.effort,
            max_turns=opts.max_turns,
            max_budget_usd=opts.max_budget_usd,
            include_partial_messages=opts.include_partial_messages,
            context_window=info.selected.context_window,
            fallback_model=info.fallback_model,
            # Spec "System and lifecycle events": the standalone profile writes no api_retry.
            retry_records=opts.profile != "standalone",
            json_schema=opts.json_schema,
            memory=opts.memory,
            first_context=opts.first_context,
            agents=_agents(s, identity),
        ),
        provider=s.client,
        tools=tools,
        policy=control.policy,
        ports=EnginePorts(
            gate=SummarizingGate(gate, turn_output, identity, new_uuid)
            if opts.post_turn_summaries
            else gate,
            state=turn_output,
            emit=turn_output,
            new_uuid=new_uuid,
            progress=ToolProgress(turn_output, identity, new_uuid),
            message_ids=new_uuid,
            live_tools=mcp.tools if mcp is not None else None,
            live_tools_ready=mcp.tools.wait_ready if mcp is not None else None,
            stream_room=out.window.room,
            tool_media=mcp.media.take if mcp is not None and mcp.media is not None else None,
            hooks=hooks,
            live_model=control.settings.live_model,
            tasks=tasks,
            begin_message=checkpoints.begin_message if checkpoints is not None else None,
        ),
        transcript=parts.transcript,
        identity=identity,
    )
    engine.restore(parts.history, parts.turns)
    return engine


def _agents(s: Session, identity: SessionIdentity) -> AgentSetup | None:
    """DEC-TURN-3: the Agent tool's setup: the agent files of the selected
    sources (read at the first turn), models resolved within the selected
    provider (DEC-CLI-5), and where its sidechains are stored (the session's
    transcript: SubagentStop's agent_transcript_path)."""
    opts = s.options.agents
    if opts is None:
        return None
    cwd, desc, environ = s.info.cwd, s.info.selected, s.full_env

    def load_files() -> tuple[Any, ...]:
        from agentx.agents.files import load_agent_files  # noqa: PLC0415

        return load_agent_files(cwd, opts.user_home, opts.setting_sources, logger.warning)

    def resolve(requested: str) -> str | None:
        from agentx.config.models import resolve_model  # noqa: PLC0415

        return resolve_model(desc, requested, environ())

    return AgentSetup(
        flag_agents=opts.flag_agents,
        load_files=load_files,
        environment=opts.environment,
        resolve_model=resolve,
        append_prompt=opts.append_prompt,
        transcript_path=transcript_path(s, identity),
    )


def _hooks(s: Session, control: Control, turn_output: TurnOutput) -> SessionHooks | None:
    """DECISIONS section 3: the session's hooks, when settings define some or
    the profile lets a client define some later (``apply_flag_settings``,
    ``initialize``). Imported only then, so a session without hooks loads
    none of the hook machinery."""
    if not s.parts.settings.hooks and s.options.profile == "standalone":
        return None
    from agentx.hooks.env_file import SessionEnvFile  # noqa: PLC0415
    from agentx.hooks.session import HookDefinitions, SessionHooks, message_lines  # noqa: PLC0415
    from agentx.messages.hooks.events import FIRED, Common  # noqa: PLC0415
    from agentx.messages.outbound import informational  # noqa: PLC0415

    for event in s.parts.settings.hooks:
        if event not in FIRED:
            logger.warning("settings define {} hooks; agentx never fires {}", event, event)
    info, identity, policy = s.info, control.identity, control.policy
    transcript = transcript_path(s, identity)
    base_env = dict(s.full_env())

    log_message = message_lines(s.options.credential_literals)

    def show(event: str, message: str, quiet: bool) -> None:
        """DECISIONS section 3: a hook's systemMessage as Claude Code shows it
        to an SDK client, a ``system/informational`` warning line."""
        if quiet:
            log_message(event, message, quiet)
            return
        record = informational(message, level="warning", session_id=identity.id, uuid=s.new_uuid())
        turn_output.emit((record,))

    def runner() -> HookRunner:
        # DEC-CLI-3: the runner, the hook process and the SDK's callback port
        # load with the first hook that runs, never at start.
        from agentx.hooks.process import hook_env  # noqa: PLC0415
        from agentx.hooks.runner import HookRunner, RunnerPorts  # noqa: PLC0415

        def env() -> dict[str, str]:
            return hook_env(s.session_env(), base_env, project_dir=info.cwd)

        return HookRunner(
            RunnerPorts(
                cwd=info.cwd,
                env=env,
                children=s.children,
                emit=turn_output,
                session_id=lambda: identity.id,
                new_uuid=s.new_uuid,
                callbacks=_callbacks(s, control),
                header_env=s.header_env,
            )
        )

    return SessionHooks(
        runner=runner,
        definitions=HookDefinitions(control.settings.hooks),
        common=lambda: Common(
            session_id=identity.id,
            transcript_path=transcript(),
            cwd=fs_text(str(info.cwd)),
            permission_mode=policy.mode,
        ),
        include_events=s.options.include_hook_events,
        start_source=s.options.session_source,
        show=log_message if s.options.profile == "standalone" else show,
        env_file=SessionEnvFile(s.update_env, s.options.credential_literals),
    )


def _callbacks(s: Session, control: Control) -> CallbackPort | None:
    """DEC-PROFILE-2: SDK callback hooks exist only in the ``sdk`` profile."""
    if s.options.profile != "sdk":
        return None
    from agentx.actors.hook_callbacks import BrokerHookCallbacks  # noqa: PLC0415

    return BrokerHookCallbacks(control.broker)


def _suggester(s: Session, tools: tuple[BoundTool, ...], engine: TurnEngine) -> PromptSuggester:
    # DEC-CLI-3: loaded only where suggestions may be asked for (the sdk
    # profile, ``--prompt-suggestions``).
    from agentx.turns.suggestions import PromptSuggester  # noqa: PLC0415

    return PromptSuggester(
        provider=s.client,
        model=s.info.selected.model,
        system=lambda: engine.system_prompt,
        tools=tuple(tool.spec for tool in tools),
        effort=s.options.effort,
        history=lambda: engine.history,
    )
