"""The host's start steps, in order (DESIGN.md "The actors", DEC-CLI-3, WIRE-013).

Each step starts one group of parties and returns a frozen value of typed
handles; a later step takes the values of the earlier ones, so nothing is
bound late and no party calls one that does not exist yet:

1. :func:`~agentx.actors.host_output.start_output`: the writer (the
   credential validator installed before the first write) and
   ``system/init``, the first record; this module is imported only after it;
2. :func:`start_control`: the control broker, the permission arbiter, the
   upload manager and the MCP manager, the parties a turn or the router asks;
3. :func:`~agentx.actors.host_turns.start_turns`: the turn engine, the
   background tasks and the runner;
4. :func:`start_supervisor`: the control dispatcher and the end of input;
5. :func:`start_input`: the router and the reader, the last party (only now
   can a record arrive), and the upload timer.

Every actor reports its failure to the session's
:class:`~agentx.actors.supervision.ExitLatch` (``supervision``), as does the
runner's drain and the writer's latched failure: the latch is the root of the
supervision tree, created before any step.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import pykka
from msgspec import Struct

from agentx.actors.arbiter import PermissionArbiterActor
from agentx.actors.broker import ControlBroker
from agentx.actors.host_output import Output, Session
from agentx.actors.host_wiring import (
    LiveSettings,
    Router,
    Uploads,
    UploadTimer,
)
from agentx.actors.reader import Reader, ReaderHandle, start_reader
from agentx.actors.supervisor import FatalInput, InputEOF, Operations, SupervisorActor
from agentx.actors.upload_manager import UploadManagerActor
from agentx.config.models import resolve_model
from agentx.messages.frozen import FrozenDict
from agentx.permissions.policy import SessionPolicy
from agentx.sessions.identity import SessionIdentity
from agentx.sessions.info import initialize_response
from agentx.sessions.store.files import SESSIONS_DIR_NAME, TRANSCRIPT_FILE_NAME

if TYPE_CHECKING:
    from agentx.actors.host_turns import Turns
    from agentx.actors.initialize_fields import FieldHandler
    from agentx.actors.initialize_wait import InitializeWait
    from agentx.actors.mcp_deferred import DeferredMcp
    from agentx.actors.mcp_manager import McpHandle
    from agentx.mcp.prompt_tool import McpPromptTool

#: ``mcp_status`` of a session with no MCP manager (DEC-SET-2).
NO_MCP_SERVERS = FrozenDict(mcpServers=())


# -- 2. control -------------------------------------------------------------------


class Control(Struct, frozen=True):
    identity: SessionIdentity
    #: Rules and mode for the session (WIRE-PERM-022), shared by the settings
    #: operations and the turn engine.
    policy: SessionPolicy
    settings: LiveSettings
    broker: ControlBroker
    arbiter: pykka.ActorRef[PermissionArbiterActor]
    uploads: Uploads
    #: DEC-SET-2: the MCP manager; in the sdk profile with no server at start,
    #: started by the first operation that needs it (DeferredMcp).
    mcp: McpHandle | DeferredMcp | None


def start_control(s: Session, out: Output) -> Control:
    info, parts = s.info, s.parts
    identity = SessionIdentity(info.session_id)  # /clear renews it
    broker = ControlBroker.start(
        emit=out.sink.emit, new_request_id=s.new_uuid, supervision=s.supervision
    )
    policy = SessionPolicy(
        rules=parts.settings.rules,
        mode=parts.permission_mode,
        cwd=info.cwd,
        add_dirs=parts.add_dirs,
        read_dirs=lambda: (tasks_dir(s),),
        auto_allows_bash=None if parts.sandbox is None else parts.sandbox.auto_allows,
    )
    mcp = _start_mcp(s, broker)
    arbiter = PermissionArbiterActor.start(
        broker=broker,
        emit=out.sink,
        session=identity,
        cwd=info.cwd,
        session_env=s.session_env,
        base_env=s.full_env(),
        header_env=s.header_env,
        new_uuid=s.new_uuid,
        control_channel=s.options.control_channel,
        children=s.children,
        supervision=s.supervision,
        permission_mode=lambda: policy.mode,
        transcript_path=transcript_path(s, identity),
        prompt_tool=_prompt_tool(s, mcp),
    )
    uploads = UploadManagerActor.start(
        sink=out.sink,
        store=parts.store,
        temp_dir=parts.home / "blobs" / "tmp",
        session_id=lambda: identity.id,
        new_uuid=s.new_uuid,
        clock=time.monotonic,
        capability_enabled=info.input_capabilities is not None,
        qualified=parts.runtime.problem if parts.runtime is not None else None,
        manifests=parts.manifests,
        supervision=s.supervision,
    )
    return Control(
        identity=identity,
        policy=policy,
        settings=LiveSettings(
            parts.settings,
            policy=policy,
            model=info.selected.model,
            effort=s.options.effort,
            resolve_model=functools.partial(resolve_model, info.selected, environ=s.full_env()),
        ),
        broker=broker,
        arbiter=arbiter,
        uploads=Uploads(uploads),
        mcp=mcp,
    )


def tasks_dir(s: Session) -> Path:
    """DEC-TURN-3: where the session's background task output goes: its
    directory's ``tasks`` folder, or without persistence a folder in the temp
    directory (tempfile loads only then, DEC-CLI-3)."""
    if s.parts.tasks_dir is not None:
        return s.parts.tasks_dir
    import tempfile  # noqa: PLC0415

    # One folder per user: another user's folder there is refused, not shared
    # (agentx.config.home.check_private).
    return Path(tempfile.gettempdir()) / f"agentx-tasks-{os.getuid()}" / s.info.session_id


def transcript_path(s: Session, identity: SessionIdentity) -> Callable[[], str]:
    """DEC-HOOK-2 ``transcript_path``: the current session's transcript file
    in the file store (``/clear`` renews the id); empty when the session
    keeps no file (``--no-session-persistence``, a PostgreSQL store)."""
    if s.parts.tasks_dir is None:
        return lambda: ""
    sessions = s.parts.home / SESSIONS_DIR_NAME
    return lambda: str(sessions / identity.id / TRANSCRIPT_FILE_NAME)


def _prompt_tool(s: Session, mcp: McpHandle | DeferredMcp | None) -> McpPromptTool | None:
    """``--permission-prompt-tool mcp__<server>__<tool>``: asks go to that
    MCP tool instead of ``can_use_tool`` (loaded only then; the manager is
    then never deferred, :func:`_start_mcp`)."""
    name = s.options.permission_prompt_tool
    if name is None:
        return None
    from agentx.actors.mcp_manager import McpHandle  # noqa: PLC0415
    from agentx.mcp.prompt_tool import McpPromptTool  # noqa: PLC0415

    return McpPromptTool(name, mcp.tools if isinstance(mcp, McpHandle) else None)


def _start_mcp(s: Session, broker: ControlBroker) -> McpHandle | DeferredMcp | None:
    """DEC-SET-2, DEC-PROFILE-1: the MCP manager, when servers are configured
    or the extended or sdk profile may add some; connections start at once,
    after ``system/init``. Imported only then, so a session without MCP
    loads none of it. DEC-CLI-3: the sdk profile's manager with no server
    configured (and no permission prompt tool reading its tools) starts with
    the first operation that needs it (:mod:`agentx.actors.mcp_deferred`)."""
    parts = s.parts
    if not parts.mcp_servers and s.options.profile == "standalone":
        return None
    start = functools.partial(_mcp_handle, s, broker)
    if (
        not parts.mcp_servers
        and s.options.profile == "sdk"
        and s.options.permission_prompt_tool is None
    ):
        from agentx.actors.mcp_deferred import DeferredMcp  # noqa: PLC0415

        return DeferredMcp(start)
    return start()


def _mcp_handle(s: Session, broker: ControlBroker) -> McpHandle:
    """The manager's handle; its actor starts now."""
    info, parts = s.info, s.parts
    from agentx.actors.mcp_manager import BrokerMessenger, McpHandle  # noqa: PLC0415
    from agentx.mcp.tools import McpMedia  # noqa: PLC0415

    return McpHandle(
        configured=parts.mcp_servers,
        scopes=parts.mcp_scopes,
        literals=s.options.credential_literals,
        cwd=info.cwd,
        media=McpMedia(parts.store, qualified=parts.runtime.problem)
        if parts.runtime is not None
        else None,
        children=s.children,
        supervision=s.supervision,
        # DEC-PROFILE-2: only the sdk profile sends mcp_message to the client.
        sdk=BrokerMessenger(broker) if s.options.profile == "sdk" else None,
        context_window=info.selected.context_window,
    )


# -- 4. supervisor ----------------------------------------------------------------


class Supervisor(Struct, frozen=True):
    ref: pykka.ActorRef[SupervisorActor]
    #: Reads of state fixed for the session, answered on the reader's thread.
    inline: Mapping[str, Callable[[], FrozenDict]]


def start_supervisor(s: Session, out: Output, control: Control, turns: Turns) -> Supervisor:
    init_payload = initialize_response(s.info)
    mcp = control.mcp
    sdk = s.options.profile == "sdk"
    fixed: dict[str, Callable[[], FrozenDict]] = {"initialize": lambda: init_payload}
    if mcp is None:
        fixed["mcp_status"] = lambda: NO_MCP_SERVERS
    ref = SupervisorActor.start(
        emit=out.sink,
        profile=s.options.profile,
        runner=turns.runner,
        operations=Operations(
            initialize=fixed["initialize"],
            context_usage=turns.engine.context_usage,
            mcp_status=mcp.status if mcp is not None else fixed["mcp_status"],
            mcp_set_servers=mcp.set_servers if mcp is not None else None,
            mcp_reconnect=mcp.reconnect if mcp is not None else None,
            mcp_toggle=mcp.toggle if mcp is not None else None,
            get_settings=control.settings.get_settings,
            apply_flag_settings=control.settings.apply_flag_settings,
            stop_task=turns.tasks.stop,
            on_eof=(control.broker.on_eof, control.uploads.on_eof),
            # DEC-PROFILE-2: the sdk profile's initialize fields and live controls.
            initialize_fields=_initialize_fields(s, out, control, turns) if sdk else {},
            set_permission_mode=control.settings.set_permission_mode if sdk else None,
            set_model=control.settings.set_model if sdk else None,
            rewind_files=_rewind_files(turns) if sdk else None,
        ),
        supervision=s.supervision,
    )
    return Supervisor(ref=ref, inline=MappingProxyType(fixed))


def _initialize_fields(
    s: Session, out: Output, control: Control, turns: Turns
) -> Mapping[str, FieldHandler]:
    """DEC-PROFILE-2: the sdk profile's ``initialize`` field handlers (their
    registry loads only in that profile, DEC-CLI-3)."""
    from agentx.actors.initialize_fields import initialize_handlers  # noqa: PLC0415

    return initialize_handlers(s, out, control, turns)


def _rewind_files(turns: Turns) -> Callable[[str, bool], FrozenDict | str]:
    """DEC-PROFILE-2 ``rewind_files``: the session's checkpoints, or Claude
    Code's answer when file checkpointing is off."""
    checkpoints = turns.checkpoints
    if checkpoints is not None:
        return lambda message, dry_run: checkpoints.rewind(message, dry_run=dry_run)

    def not_enabled(message: str, dry_run: bool) -> FrozenDict | str:
        from agentx.messages.checkpoints import NOT_ENABLED, cannot  # noqa: PLC0415

        return cannot(NOT_ENABLED, dry_run=dry_run)

    return not_enabled


# -- 5. input ---------------------------------------------------------------------


class Input(Struct, frozen=True):
    reader: ReaderHandle
    timer: UploadTimer


def start_input(
    s: Session,
    *,
    read_chunk: Callable[[], bytes],
    out: Output,
    control: Control,
    turns: Turns,
    supervisor: Supervisor,
) -> Input:
    """The reader starts last: from here on records arrive (DEC-CLI-3)."""
    waiting = None
    on_eof = functools.partial(supervisor.ref.tell, InputEOF())
    if s.options.await_initialize:
        # Loaded only with --await-initialize (off the start path otherwise).
        from agentx.actors.initialize_wait import InitializeWait  # noqa: PLC0415

        waiting = InitializeWait(supervision=s.supervision)
        on_eof = functools.partial(_eof_after_wait, waiting, on_eof)
    route = Router(
        runner=turns.runner,
        supervisor=supervisor.ref,
        broker=control.broker,
        uploads=control.uploads,
        sink=out.sink,
        update_environment=s.update_env,
        identity=control.identity,
        new_uuid=s.new_uuid,
        pricing=s.options.pricing,
        replay=s.options.replay_user_messages,
        profile=s.options.profile,
        inline=supervisor.inline,
        supervision=s.supervision,
        await_initialize=waiting,
    )
    timer = UploadTimer(control.uploads)
    reader = start_reader(
        read_chunk,
        Reader(
            route=route,
            on_eof=on_eof,
            on_fatal=lambda line, reason: supervisor.ref.tell(FatalInput(line, reason)),
            sdk=s.options.profile == "sdk",
        ),
        s.supervision,
    )
    return Input(reader=reader, timer=timer)


def _eof_after_wait(waiting: InitializeWait, on_eof: Callable[[], None]) -> None:
    """``--await-initialize``: an input that ends with prompts still held
    ends the session (status 2); otherwise the end of input as usual."""
    if waiting.on_eof():
        on_eof()
