"""Host: runs one session's actor system and returns its exit status.

The CLI and the embedding API both run a :class:`Host` over a byte source and
a byte sink; the credential guard, the ordering and the EOF rules are the same
objects either way. :meth:`Host.run` is the composition root: the named start
steps (output, in :mod:`agentx.actors.host_output`; control, turns, supervisor
and input, in :mod:`agentx.actors.host_steps` and
:mod:`agentx.actors.host_turns`), then the wait for the session's ending on
its :class:`~agentx.actors.supervision.ExitLatch`, then
:class:`~agentx.actors.shutdown.Shutdown`, the one ordered shutdown every
ending runs under one deadline (DECISIONS section 8).

Start-up (DEC-CLI-3): this module imports only the first step; the later
steps and the shutdown are imported once ``system/init`` is with the writer,
so the spawn-to-``system/init`` an SDK pays on every ``query()`` does not
include the import of the rest of the actor system (about half of agentx's
own import time).
"""

from __future__ import annotations

import os
import threading
from _random import Random
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from agentx.actors.host_output import Output, Session, start_output
from agentx.actors.supervision import (
    EXIT_INTERNAL,
    ExitLatch,
    Failed,
    StoreFailed,
    supervise_threads,
)
from agentx.messages import output_modes
from agentx.messages.frozen import FrozenDict
from agentx.messages.system_prompt import PromptSources
from agentx.sessions.event_log import InternalEventLog
from agentx.sessions.setup import StoredTranscript
from agentx.tools.child_env import child_environment
from agentx.tools.orphans import Orphans
from agentx.tools.process import ChildProcesses

if TYPE_CHECKING:
    from agentx.actors.host_steps import Control, Input, Supervisor
    from agentx.actors.host_turns import Turns
    from agentx.checkpoints.stores import Place
    from agentx.config.settings import Settings
    from agentx.media.blobs import Blobs
    from agentx.media.deferred import RuntimeVerdict
    from agentx.messages.accounting import Pricing
    from agentx.messages.attachments import CommittedManifests
    from agentx.messages.permission_rules import Mode
    from agentx.messages.profiles import Profile
    from agentx.messages.session_ledger import StoredTurn
    from agentx.providers.base import ProviderClient
    from agentx.sandbox.shell import Sandbox
    from agentx.sessions.history import TranscriptSink
    from agentx.sessions.info import SessionInfo
    from agentx.sessions.transcript import Recorded

#: DEC-CLI-3 start-up: the C generator :class:`random.Random` is built on,
#: seeded from the OS; the ``random`` module around it (``bisect``, the
#: distributions) is not needed for ids and stays off the start path.
_ID_SOURCE = Random(int.from_bytes(os.urandom(32), "big"))


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


class AgentOptions(Struct, frozen=True, kw_only=True):
    """DEC-TURN-3: what the ``Agent`` tool is built from (read at start; the
    turns step builds the engine's :class:`~agentx.turns.contracts.AgentSetup`)."""

    #: ``--agents`` definitions, checked at start (``AgentDefinition`` values).
    flag_agents: tuple[Any, ...] = ()
    #: ``--append-subagent-system-prompt``.
    append_prompt: str | None = None
    #: The environment block of the built-in prompt; every subagent's prompt ends with it.
    environment: str = ""
    #: The setting sources whose agent files are read (DEC-SET-1).
    setting_sources: tuple[str, ...] = ()
    #: Where ``~/.claude/agents`` is.
    user_home: Path = Path("/")


class HostOptions(Struct, frozen=True, kw_only=True):
    profile: Profile = "standalone"
    output_format: output_modes.OutputFormat = "stream-json"
    replay_user_messages: bool = False
    include_partial_messages: bool = False
    #: DEC-HOOK-4: ``--include-hook-events``.
    include_hook_events: bool = False
    #: DECISIONS section 3: SessionStart's source when the session begins.
    session_source: str = "startup"
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str = ""
    #: DEC-CLI-5: the dynamic block moved into the first prompt, if it was.
    first_context: str | None = None
    #: DEC-PROFILE-2: what the prompt is made of, for the sdk profile's
    #: ``initialize`` (``systemPrompt``, ``appendSystemPrompt``, ...).
    prompt_sources: PromptSources | None = None
    #: DEC-CLI-5 ``--json-schema``: the structured output schema.
    json_schema: FrozenDict | None = None
    #: DEC-SET-1: the memory files' block for the first prompt.
    memory: str | None = None
    #: DEC-TURN-3: the ``Agent`` tool's setup (None: not offered).
    agents: AgentOptions | None = None
    effort: str | None = None
    pricing: Pricing | None = None
    credential_literals: frozenset[str] = field(default_factory=frozenset)
    #: DEC-TURN-5, WIRE-004: ``--prompt-suggestions``, ``--post-turn-summaries``.
    prompt_suggestions: bool = False
    post_turn_summaries: bool = False
    #: DEC-PROFILE-2 ``--await-initialize``: prompts before ``initialize`` wait for it.
    await_initialize: bool = False
    #: False for text input (``-p``): no host can answer a permission ask;
    #: the PermissionRequest hooks alone decide (DEC-EOF-2).
    control_channel: bool = True
    #: ``--permission-prompt-tool mcp__<server>__<tool>``; None: ``can_use_tool``.
    permission_prompt_tool: str | None = None


class HostParts(Struct, frozen=True, kw_only=True):
    """Domain objects resolved before the protocol starts (see agentx.launch)."""

    settings: Settings
    tools: tuple[Any, ...]
    #: The session's starting permission mode; the control step builds the
    #: SessionPolicy over it and the settings' rules (after ``system/init``).
    permission_mode: Mode
    home: Path
    store: Blobs
    #: DEC-SET-2: the merged ``mcpServers`` (name -> server configuration).
    mcp_servers: FrozenDict = field(default_factory=FrozenDict)
    #: Which settings source configured each server (``mcp_status`` ``scope``).
    mcp_scopes: FrozenDict = field(default_factory=FrozenDict)
    add_dirs: tuple[Path, ...] = ()
    #: Manifests committed before the protocol (``--attach``), shared with
    #: uploads (None: none; the upload manager makes the session's own at its
    #: first use, DEC-CLI-3).
    manifests: CommittedManifests | None = None
    #: Prior context of a resumed session (never executed) and the transcript sink.
    history: tuple[Recorded, ...] = ()
    #: The resumed session's stored turns (``/cost`` after ``--resume``).
    turns: tuple[StoredTurn, ...] = ()
    transcript: TranscriptSink | None = None
    #: Where background tasks write their output files (None: a per-session
    #: temp directory) and the internal-event log (None: kept nowhere).
    tasks_dir: Path | None = None
    events_file: Path | None = None
    #: DEC-PERM-BASH-5: the Bash sandbox (None: off), closed at shutdown.
    sandbox: Sandbox | None = None
    #: MOD-A14B, decided before the first attachment is admitted (None: the
    #: provider accepts none; see :mod:`agentx.media.runtime_check`).
    runtime: RuntimeVerdict | None = None
    #: DEC-PROFILE-2: where the file checkpoints go (None: none are kept).
    checkpoints: Place | None = None


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
        orphans: Orphans | None = None,
    ) -> None:
        self._read_chunk = read_chunk
        self._write = write
        # DEC-AUTH-3: agentx's own variables reach tools without the credentials it holds.
        env = _Environment(
            child_environment(environ, options.credential_literals), parts.settings.env
        )
        #: The root of the supervision tree (the CLI's signal gate reports to it).
        self.supervision = ExitLatch()
        if isinstance(parts.transcript, StoredTranscript):
            # DEC-STORE-1: the session was taken while the store was away: exit 4.
            parts.transcript.on_taken(lambda: self.supervision.decide(EXIT_INTERNAL))
            # DEC-STORE-6: a failed barrier ends the session (exit 4).
            parts.transcript.on_failed(lambda why: self.supervision.report(StoreFailed(why)))
        self._session = Session(
            info=info,
            options=options,
            parts=parts,
            client=client,
            supervision=self.supervision,
            new_uuid=new_uuid,
            events=InternalEventLog(parts.events_file),
            session_env=env.session,
            full_env=env.full,
            update_env=env.update,
            live_env=_LiveEnv(env),
            children=ChildProcesses(orphans=orphans),
            on_result=on_result,
            header_env=FrozenDict({**environ, **parts.settings.env}),
        )

    def _on_shutdown(self, turns: Turns | None) -> tuple[Callable[[], None], ...]:
        """The steps every ending runs, in this order, on one thread within
        the shutdown's deadline, while the active turn is cancelled
        (DECISIONS section 8): no background task starts any more and each
        will report ``stopped``; every child process group is TERMed, then
        KILLed after a short grace."""
        stop_tasks = (turns.tasks.stop_all,) if turns is not None else ()
        sandbox = self._session.parts.sandbox
        close = (sandbox.close,) if sandbox is not None else ()
        if turns is not None and turns.checkpoints is not None:
            close = (*close, turns.checkpoints.close)
        return (*stop_tasks, self._session.children.terminate_all, *close)

    def run(self, *, on_started: Callable[[], None] | None = None) -> int:
        """Run the session to its end and return the exit status;
        ``on_started`` is called once the start steps are done (or failed)."""
        with supervise_threads(self.supervision):
            started = _Started()
            try:
                self._start(started)
            except Exception as exc:  # a start step failed: an internal failure
                self.supervision.report(Failed("the host's start", exc))
            if on_started is not None:
                on_started()
            self.supervision.wait()
            # Loaded by ``_start`` (a start that failed before it loads it here).
            from agentx.actors.shutdown import Shutdown  # noqa: PLC0415

            return Shutdown(
                self._session,
                output=started.output,
                control=started.control,
                turns=started.turns,
                supervisor=started.supervisor,
                input_=started.input,
                on_shutdown=self._on_shutdown(started.turns),
            ).run()

    def _start(self, started: _Started) -> None:
        s = self._session
        started.output = out = start_output(s, write=self._write)
        # DEC-CLI-3: ``system/init`` is with the writer; only now is the rest
        # of the actor system imported (its import is most of a start-up),
        # the ordered shutdown with it (DECISIONS section 8): not when the
        # process ends, when the import fails if the package's files are gone
        # by then (an upgrade in place) and the ending skips every step.
        import agentx.actors.shutdown  # noqa: PLC0415, F401
        from agentx.actors.host_steps import (  # noqa: PLC0415
            start_control,
            start_input,
            start_supervisor,
        )
        from agentx.actors.host_turns import start_turns  # noqa: PLC0415

        started.control = control = start_control(s, out)
        started.turns = turns = start_turns(s, out, control)
        started.supervisor = supervisor = start_supervisor(s, out, control, turns)
        started.input = start_input(
            s,
            read_chunk=self._read_chunk,
            out=out,
            control=control,
            turns=turns,
            supervisor=supervisor,
        )


class _Started(Struct):
    """What the start steps got to, for the shutdown (a step may fail)."""

    output: Output | None = None
    control: Control | None = None
    turns: Turns | None = None
    supervisor: Supervisor | None = None
    input: Input | None = None


class _LiveEnv(Mapping[str, str]):
    """A read-only live view of the session environment for tools."""

    def __init__(self, env: _Environment) -> None:
        self._env = env

    def __getitem__(self, key: str) -> str:
        return self._env.full()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._env.full())

    def __len__(self) -> int:
        return len(self._env.full())
