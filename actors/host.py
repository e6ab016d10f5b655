"""Host: starts the actor system for one session and returns its exit status.

The CLI and the embedding API both run a :class:`Host` over a byte source and
a byte sink; the credential guard, the ordering and the EOF rules are the same
objects either way. Start order (DEC-CLI-3, WIRE-013): the guard's validator
is installed before the first write, ``system/init`` is the first record, and
only then does the stdin pump start.
"""

from __future__ import annotations

import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pykka
from loguru import logger

from agentx.actors.arbiter import PermissionArbiterActor
from agentx.actors.arbiter_gate import ArbiterGate
from agentx.actors.broker import ControlBroker
from agentx.actors.host_wiring import LiveSettings, PromptMaterials, Router
from agentx.actors.reader import Reader, ReaderHandle, start_reader
from agentx.actors.supervisor import (
    EXIT_FATAL_INPUT,
    EXIT_INTERNAL,
    EXIT_OUTPUT_FAILED,
    ExitLatch,
    FatalInput,
    InputEOF,
    Operations,
    OutputFailed,
    RunnerDrained,
    SupervisorActor,
)
from agentx.actors.task_manager import TASK_PROGRESS_SECONDS, BackgroundTasks
from agentx.actors.turn_output import (
    StateRecorder,
    SummarizingGate,
    ToolProgress,
    TurnOutput,
    flush_events,
)
from agentx.actors.turn_runner import TurnRunnerActor
from agentx.actors.upload_manager import UploadManagerActor
from agentx.actors.writer import FrameBuffer, WriterActor, WriterSink
from agentx.config.settings import Settings
from agentx.media.blobs import Blobs
from agentx.messages import output_modes
from agentx.messages.accounting import Pricing
from agentx.messages.attachments import CommittedManifests
from agentx.messages.dispatch import Profile
from agentx.messages.frozen import FrozenDict
from agentx.messages.guard import CredentialValidator, OutputGuard
from agentx.messages.records import Records
from agentx.messages.stream_guard import stream_guard
from agentx.messages.tasks import TaskBoard
from agentx.permissions.policy import BoundTool, SessionPolicy
from agentx.providers.base import (
    ProviderClient,
)
from agentx.sessions.event_log import InternalEventLog
from agentx.sessions.history import TranscriptSink
from agentx.sessions.identity import SessionIdentity
from agentx.sessions.info import SessionInfo, init_record, initialize_response
from agentx.sessions.setup import StoredTranscript
from agentx.sessions.transcript import Recorded
from agentx.tools.base import ToolContext
from agentx.tools.process import ChildProcesses
from agentx.turns.contracts import EngineConfig, EnginePorts
from agentx.turns.engine import TurnEngine
from agentx.turns.suggestions import PromptSuggester

if TYPE_CHECKING:
    from agentx.actors.mcp_manager import McpHandle

#: How long shutdown waits for each actor to stop.
STOP_SECONDS = 10.0
#: ``mcp_status`` of a session with no MCP manager (DEC-SET-2).
NO_MCP_SERVERS = FrozenDict(mcpServers=())

#: Upload lifecycles are checked for their 120 s timeout this often.
UPLOAD_TICK_SECONDS = 1.0


_ID_SOURCE = random.Random(os.urandom(32))


#: The version-4 nibble and the RFC 4122 variant bits, and the mask that
#: clears the random bits they replace.
_UUID4_BITS = (0x4 << 76) | (0x2 << 62)
_UUID4_MASK = ((1 << 128) - 1) ^ ((0xF << 76) | (0x3 << 62))


def new_uuid() -> str:
    """A random RFC 4122 version-4 id for records and requests, in canonical
    form (what ``str(uuid.UUID(int=..., version=4))`` gives, formatted
    directly: this runs several times per record, on the hot path).

    Record ids need uniqueness, not secrecy: a PRNG seeded once from the OS
    is unique enough and avoids a system call per record.
    """
    h = f"{(_ID_SOURCE.getrandbits(128) & _UUID4_MASK) | _UUID4_BITS:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass(frozen=True, slots=True, kw_only=True)
class HostOptions:
    profile: Profile = "standalone"
    output_format: output_modes.OutputFormat = "stream-json"
    replay_user_messages: bool = False
    include_partial_messages: bool = False
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str = ""
    effort: str | None = None
    pricing: Pricing | None = None
    credential_literals: frozenset[str] = field(default_factory=frozenset)
    #: DEC-TURN-5, WIRE-004: ``--prompt-suggestions``, ``--post-turn-summaries``.
    prompt_suggestions: bool = False
    post_turn_summaries: bool = False
    #: False for text input (``-p``): no host can answer a permission ask;
    #: the PermissionRequest hooks alone decide (DEC-EOF-2).
    control_channel: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class HostParts:
    """Domain objects resolved before the protocol starts (see agentx.launch)."""

    settings: Settings
    tools: tuple[Any, ...]
    policy: SessionPolicy
    home: Path
    store: Blobs
    #: DEC-SET-2: the merged ``mcpServers`` (name -> server configuration).
    mcp_servers: FrozenDict = field(default_factory=FrozenDict)
    #: Which settings source configured each server (``mcp_status`` ``scope``).
    mcp_scopes: FrozenDict = field(default_factory=FrozenDict)
    add_dirs: tuple[Path, ...] = ()
    #: Manifests committed before the protocol (``--attach``), shared with uploads.
    manifests: CommittedManifests = field(default_factory=CommittedManifests)
    #: Prior context of a resumed session (never executed) and the transcript sink.
    history: tuple[Recorded, ...] = ()
    transcript: TranscriptSink | None = None
    #: Where background tasks write their output files (None: a per-session
    #: temp directory) and the internal-event log (None: kept nowhere).
    tasks_dir: Path | None = None
    events_file: Path | None = None


class _Environment:
    """The environment tools and hooks see; updated by update_environment_variables."""

    def __init__(self, base: Mapping[str, str], session: Mapping[str, str]) -> None:
        self._lock = threading.Lock()
        self._base = dict(base)
        self._session = dict(session)

    def update(self, variables: Mapping[str, str]) -> None:
        with self._lock:
            self._session.update(variables)

    def session(self) -> dict[str, str]:
        with self._lock:
            return dict(self._session)

    def full(self) -> dict[str, str]:
        with self._lock:
            return {**self._base, **self._session}


class Host:
    def __init__(
        self,
        *,
        info: SessionInfo,
        client: ProviderClient,
        options: HostOptions,
        parts: HostParts,
        read_chunk: Callable[[], bytes],
        write: Callable[[bytes], int | None],
        environ: Mapping[str, str],
        on_result: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> None:
        self._info = info
        self._client = client
        self._options = options
        self._parts = parts
        self._read_chunk = read_chunk
        self._write = write
        self._on_result = on_result
        self._env = _Environment(environ, parts.settings.env)
        self._exit = ExitLatch()
        if isinstance(parts.transcript, StoredTranscript):
            # DEC-STORE-1: the session was taken while the store was away: exit 4.
            parts.transcript.on_taken(lambda: self._exit.decide(EXIT_INTERNAL))
        self._refs: list[pykka.ActorRef[Any]] = []
        self._reader: ReaderHandle | None = None
        self._events = InternalEventLog(parts.events_file)
        #: Every child process group of this session (DECISIONS section 8).
        self._children = ChildProcesses()

    def run(self) -> int:
        """Run the session to its end and return the exit status."""
        try:
            return self._run()
        finally:
            # Only this host's actors: an embedding application may run others.
            if self._reader is not None:
                _stop_reader(self._reader)
            for ref in reversed(self._refs):
                _stop(ref)
            # After the writer's last flush (and its transcript sync).
            flush_events(self._events, close=True)
            if self._parts.transcript is not None:
                self._parts.transcript.close()

    def _start_mcp(self) -> McpHandle | None:
        """DEC-SET-2, DEC-PROFILE-1: the MCP manager, when servers are configured or the
        extended profile may add some; connections start at once, after
        ``system/init`` and without delaying anything. Imported only then, so
        a session without MCP loads none of it."""
        info, opts, parts = self._info, self._options, self._parts
        if not parts.mcp_servers and opts.profile != "extended":
            return None
        from agentx.actors.mcp_manager import McpHandle  # noqa: PLC0415
        from agentx.mcp.tools import McpMedia  # noqa: PLC0415

        mcp = McpHandle(
            configured=parts.mcp_servers,
            scopes=parts.mcp_scopes,
            literals=opts.credential_literals,
            cwd=info.cwd,
            media=McpMedia(parts.store) if info.input_capabilities is not None else None,
            children=self._children,
        )
        self._refs.append(mcp.ref)
        return mcp

    def _select(
        self, output_format: output_modes.OutputFormat
    ) -> Callable[[Mapping[str, Any]], bool]:
        select = output_modes.selects(output_format)
        if self._on_result is None:
            return select
        return output_modes.observing_results(select, self._on_result)

    def _run(self) -> int:
        info, opts, parts = self._info, self._options, self._parts
        frames = FrameBuffer(
            self._write, barrier=parts.transcript.sync if parts.transcript is not None else None
        )
        guard = OutputGuard(
            frames,
            state_lock=threading.Lock(),
            write_lock=threading.RLock(),
            encode=output_modes.encoder(opts.output_format),
        )
        guard.install_validator(CredentialValidator(opts.credential_literals))
        supervisor_box: list[pykka.ActorRef[SupervisorActor]] = []

        def tell_supervisor(message: object) -> None:
            supervisor_box[0].tell(message)

        writer_ref = WriterActor.start(
            guard=guard,
            frames=frames,
            on_failure=lambda kind: tell_supervisor(OutputFailed(kind)),
            select=self._select(opts.output_format),
            stream=stream_guard(opts.credential_literals),
        )
        self._refs.append(writer_ref)
        sink = WriterSink(writer_ref)
        sink.emit((init_record(info, uuid=new_uuid()),))
        identity = SessionIdentity(info.session_id)  # /clear renews it (DEC-COMPAT-2)

        broker = ControlBroker.start(emit=sink.emit, new_request_id=new_uuid)
        self._refs.append(broker.actor_ref)
        arbiter_ref = PermissionArbiterActor.start(
            broker=broker,
            emit=sink,
            session=identity,
            cwd=info.cwd,
            session_env=self._env.session,
            base_env=self._env.full(),
            new_uuid=new_uuid,
            control_channel=opts.control_channel,
            children=self._children,
        )
        self._refs.append(arbiter_ref)
        settings = LiveSettings(
            parts.settings, policy=parts.policy, model=info.selected.model, effort=opts.effort
        )
        gate = ArbiterGate(arbiter_ref, hooks_for=settings.hooks_for, new_uuid=new_uuid)
        uploads_ref = UploadManagerActor.start(
            sink=sink,
            store=parts.store,
            temp_dir=parts.home / "blobs" / "tmp",
            session_id=lambda: identity.id,
            new_uuid=new_uuid,
            clock=time.monotonic,
            capability_enabled=info.input_capabilities is not None,
            manifests=parts.manifests,
        )
        self._refs.append(uploads_ref)
        uploads = uploads_ref.proxy()
        mcp = self._start_mcp()
        events = self._events

        def hold_result() -> None:
            tasks.hold_result()

        turn_output = TurnOutput(sink, hold_result=hold_result)
        state = StateRecorder(
            turn_output, identity, new_uuid, before_idle=lambda: flush_events(events)
        )

        def task_ended(task_id: str, status: str) -> None:
            events.task_ended(task_id, status)
            state.task_finished()

        tasks = BackgroundTasks(
            board=TaskBoard(
                session_id=lambda: identity.id,
                new_uuid=new_uuid,
                progress_interval=TASK_PROGRESS_SECONDS,
            ),
            emit=turn_output,
            tasks_dir=parts.tasks_dir
            or Path(tempfile.gettempdir()) / "agentx-tasks" / info.session_id,
            new_uuid=new_uuid,
            on_started=state.task_started,
            on_ended=task_ended,
            children=self._children,
        )
        ctx = ToolContext(
            cwd=info.cwd,
            add_dirs=parts.add_dirs,
            env=_LiveEnv(self._env),
            background=tasks,
            children=self._children,
        )
        tools = tuple(BoundTool(tool, ctx, parts.policy) for tool in parts.tools)
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
            ),
            provider=self._client,
            tools=tools,
            policy=parts.policy,
            ports=EnginePorts(
                gate=SummarizingGate(gate, turn_output, identity, new_uuid)
                if opts.post_turn_summaries
                else gate,
                state=state,
                emit=turn_output,
                new_uuid=new_uuid,
                progress=ToolProgress(turn_output, identity, new_uuid),
                message_ids=new_uuid,
                live_tools=mcp.tools if mcp is not None else None,
                tool_media=mcp.media.take if mcp is not None and mcp.media is not None else None,
            ),
            transcript=parts.transcript,
            identity=identity,
        )
        engine.restore(parts.history)

        materials = PromptMaterials(uploads)

        def abort_permissions(trailing: Records) -> None:
            broker.abort_all_permissions()
            if trailing:
                sink.emit(trailing)

        runner_ref = TurnRunnerActor.start(
            engine=engine,
            state=state,
            turn_output=turn_output,
            emit=sink,
            session=identity,
            new_uuid=new_uuid,
            pricing=opts.pricing,
            to_turn=materials.to_turn,
            check_refs=materials.check_refs,
            abort_permissions=abort_permissions,
            on_drained=lambda: tell_supervisor(RunnerDrained()),
            replay_user_messages=opts.replay_user_messages,
            suggest=PromptSuggester(
                provider=self._client,
                model=info.selected.model,
                system=opts.system_prompt,
                tools=tuple(tool.spec for tool in tools),
                effort=opts.effort,
                history=lambda: engine.history,
            )
            if opts.prompt_suggestions
            else None,
            post_turn_summaries=opts.post_turn_summaries,
            events=events,
        )
        self._refs.append(runner_ref)
        init_payload = initialize_response(info)
        # Reads of state fixed for the session: the router answers them on
        # the reader's thread, the supervisor when it is still busy.
        fixed: dict[str, Callable[[], FrozenDict]] = {"initialize": lambda: init_payload}
        if mcp is None:
            fixed["mcp_status"] = lambda: NO_MCP_SERVERS

        supervisor_ref = SupervisorActor.start(
            emit=sink,
            profile=opts.profile,
            runner=runner_ref,
            operations=Operations(
                initialize=fixed["initialize"],
                context_usage=engine.context_usage,
                mcp_status=mcp.status if mcp is not None else fixed["mcp_status"],
                mcp_set_servers=mcp.set_servers if mcp is not None else None,
                mcp_reconnect=mcp.reconnect if mcp is not None else None,
                mcp_toggle=mcp.toggle if mcp is not None else None,
                get_settings=settings.get_settings,
                apply_flag_settings=settings.apply_flag_settings,
                stop_task=tasks.stop,
                on_eof=(broker.on_eof, lambda: uploads.on_eof().get()),
                on_shutdown=(tasks.stop_all, self._children.terminate_all),
            ),
            exit_latch=self._exit,
        )
        self._refs.append(supervisor_ref)
        supervisor_box.append(supervisor_ref)
        route = Router(
            runner=runner_ref,
            supervisor=supervisor_ref,
            broker=broker,
            uploads=uploads,
            sink=sink,
            update_environment=self._env.update,
            identity=identity,
            new_uuid=new_uuid,
            pricing=opts.pricing,
            replay=opts.replay_user_messages,
            profile=opts.profile,
            inline=fixed,
        )
        stop_ticks = threading.Event()
        threading.Thread(
            target=_tick, args=(uploads_ref, stop_ticks), name="agentx-upload-timer", daemon=True
        ).start()
        self._reader = start_reader(
            self._read_chunk,
            Reader(
                route=route,
                on_eof=lambda: supervisor_ref.tell(InputEOF()),
                on_fatal=lambda line, reason: supervisor_ref.tell(FatalInput(line, reason)),
            ),
        )
        code = self._exit.wait()
        assert code is not None
        stop_ticks.set()
        _stop_reader(self._reader)
        _stop(runner_ref)
        # Finite background work ends with the session: each task still
        # reports ``stopped``, then ``idle`` follows (WIRE-004).
        tasks.shutdown()
        _stop(arbiter_ref)
        broker.stop()
        _stop(uploads_ref)
        healthy = sink.drain(timeout=STOP_SECONDS)
        # DECISIONS section 8: a latched output failure is status 3 even when
        # the input side had already finished cleanly.
        return code if healthy or code == EXIT_FATAL_INPUT else EXIT_OUTPUT_FAILED


def _stop_reader(reader: ReaderHandle) -> None:
    """End the input's routing, bounded like :func:`_stop` (the reader's
    thread may stay blocked on an open stdin: a daemon, it holds nothing)."""
    if not reader.stop(STOP_SECONDS):
        logger.error("the reader did not stop within {:.0f} s", STOP_SECONDS)


def _stop(ref: pykka.ActorRef[Any]) -> None:
    """Stop one actor, bounded: an actor that does not stop in time is
    reported and left behind (a daemon thread), and the exit status already
    decided stands (never hang, never trade the status for a traceback)."""
    try:
        ref.stop(block=True, timeout=STOP_SECONDS)
    except pykka.Timeout:
        logger.error("{} did not stop within {:.0f} s", ref.actor_class.__name__, STOP_SECONDS)


def _tick(uploads_ref: pykka.ActorRef[UploadManagerActor], stop: threading.Event) -> None:
    proxy = uploads_ref.proxy()
    while not stop.wait(UPLOAD_TICK_SECONDS):
        try:
            proxy.tick()
        except pykka.ActorDeadError:
            return


class _LiveEnv(Mapping[str, str]):
    """A read-only live view of the session environment for tools."""

    def __init__(self, env: _Environment) -> None:
        self._env = env

    def __getitem__(self, key: str) -> str:
        return self._env.full()[key]

    def __iter__(self) -> Any:
        return iter(self._env.full())

    def __len__(self) -> int:
        return len(self._env.full())
