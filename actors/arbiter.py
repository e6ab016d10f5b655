"""PermissionArbiterActor: the race between the host's can_use_tool answer
and the permission hooks (spec "Permission race", WIRE-PERM-001..004).

One :class:`~agentx.messages.permission_race.PermissionRace` per tool use
decides; this shell carries out its effects: the host request through the
:class:`~agentx.actors.broker.ControlBroker` (registered before its envelope
drains, WIRE-006), each hook as a subprocess driven by a small thread that
reports progress and its outcome back to this actor's inbox, cancellation of
the loser, and the one settlement handed to the asking turn's future.

With no host to answer (``control_channel=False`` for text-mode ``-p``, or
once the broker refused a request because input ended) the core lets the
hooks alone decide (DEC-EOF-2); the settlement waits for every cancelled
hook's ``hook_response``, so hook events always precede the turn's later
records and the final ``idle``.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pykka
from msgspec import Struct, field

from agentx.actors.base import Actor, AskExpired
from agentx.actors.broker import ControlBroker
from agentx.actors.supervision import ExitLatch
from agentx.diagnostics import logger
from agentx.messages.control import Rejected, RejectReason, Resolved, Settlement
from agentx.messages.frozen import FrozenDict
from agentx.messages.records import RecordSink
from agentx.sessions.identity import SessionIdentity
from agentx.tools.process import ChildProcesses
from agentx.turns.contracts import PermissionAsk, PermissionOutcome

if TYPE_CHECKING:
    from concurrent.futures import Future

    # The hook machinery loads with the first PermissionRequest hook, never
    # for a session without hooks (DEC-CLI-3: what loads before initialize).
    from agentx.hooks.process import Finished, HookProcess
    from agentx.mcp.prompt_tool import McpPromptTool
    from agentx.messages.hooks.config import CallbackHook, HookSpec
    from agentx.messages.hooks.records import HookIdentity
    from agentx.messages.hooks.verdicts import Verdict

    # The race core loads with the first permission ask: a session that
    # asks none never imports it (DEC-CLI-3: what loads before initialize).
    from agentx.messages.permission_race import HookResult, PermissionRace, RaceEffect, Settle
    from agentx.messages.permission_wire import PermissionResult

#: How often a hook driver thread looks for new output.
HOOK_POLL_SECONDS = 0.05
#: How long shutdown waits for a killed hook to report its hook_response.
HOOK_STOP_JOIN_SECONDS = 5.0


class AskPermission(Struct, frozen=True, kw_only=True):
    #: The prompt; its scope is the asking turn's: an ask that arrives after
    #: its turn was cancelled is denied without a request (WIRE-011).
    ask: PermissionAsk
    hooks: tuple[HookSpec, ...]
    future: Future[PermissionOutcome]
    request: FrozenDict | None = None
    #: Shows a hook's ``systemMessage`` as the session shows every hook's
    #: (:meth:`agentx.hooks.session.SessionHooks.show`, DECISIONS section 3).
    show: Callable[[str, str], None] | None = None


class AbortAsk(Struct, frozen=True):
    """The asking turn was cancelled: abort this ask if it is still open."""

    tool_use_id: str


class HostSettled(Struct, frozen=True):
    tool_use_id: str
    settlement: Settlement


class HookFinished(Struct, frozen=True):
    tool_use_id: str
    result: HookResult


class _Callback(Struct, eq=False):
    """One PermissionRequest ``hook_callback`` request in flight (DEC-PROFILE-2)."""

    who: HookIdentity
    request_id: str | None = None
    timer: threading.Timer | None = None
    timed_out: bool = False
    settled: bool = False
    show: Callable[[str, str], None] | None = None


class CallbackSettled(Struct, frozen=True):
    tool_use_id: str
    call: _Callback
    settlement: Settlement


class _Race(Struct):
    core: PermissionRace
    ask: AskPermission
    request_id: str | None = None
    #: ``--permission-prompt-tool``: cancels the tool's call.
    cancel_prompt: Callable[[], None] | None = None
    hooks: list[HookProcess] = field(default_factory=list)
    callbacks: list[_Callback] = field(default_factory=list)


class PermissionArbiterActor(Actor):
    def __init__(
        self,
        *,
        broker: ControlBroker,
        emit: RecordSink,
        session: SessionIdentity,
        cwd: Path,
        session_env: Callable[[], Mapping[str, str]],
        base_env: Mapping[str, str],
        new_uuid: Callable[[], str],
        header_env: Mapping[str, str] | None = None,
        control_channel: bool = True,
        children: ChildProcesses | None = None,
        supervision: ExitLatch | None = None,
        permission_mode: Callable[[], str] = lambda: "default",
        transcript_path: Callable[[], str] = lambda: "",
        prompt_tool: McpPromptTool | None = None,
    ) -> None:
        """``control_channel`` False: no host can ever answer (text-mode
        ``-p``); the hooks alone decide (DEC-EOF-2). ``prompt_tool``: the
        ``--permission-prompt-tool`` MCP tool answers in the host's place
        (its leg is open whatever the input format)."""
        super().__init__(supervision=supervision)
        self._prompt_tool = prompt_tool
        control_channel = control_channel or prompt_tool is not None
        self._children = children or ChildProcesses()
        self._broker = broker
        #: The host's leg: closed for good once the broker refuses or rejects
        #: a request because input ended (DEC-EOF-1/2).
        self._host_open = control_channel
        #: Settled by shutdown, not decided: no hint line then (DEC-EOF-2).
        self._stopping = False
        self._emit = emit
        self._session = session
        self._cwd = cwd
        self._session_env = session_env
        self._base_env = dict(base_env)
        #: What http hooks' header values interpolate (DEC-AUTH-3).
        self._header_env = dict(header_env or {})
        self._uuid = new_uuid
        self._races: dict[str, _Race] = {}
        self._hook_ids = itertools.count(1)
        self._drivers: list[threading.Thread] = []
        self._permission_mode = permission_mode
        self._transcript_path = transcript_path

    @property
    def _session_id(self) -> str:
        """The current session id (``/clear`` renews it)."""
        return self._session.id

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, AskPermission):
            self._start(message)
        elif isinstance(message, AbortAsk):
            race = self._races.get(message.tool_use_id)
            if race is not None:
                self._apply(race, race.core.abort())
        elif isinstance(message, HostSettled):
            race = self._races.get(message.tool_use_id)
            if _host_gone(message.settlement):
                self._host_open = False
            if race is not None:
                self._apply(race, _host_effects(race.core, message.settlement))
        elif isinstance(message, HookFinished):
            race = self._races.get(message.tool_use_id)
            if race is not None:
                self._apply(race, race.core.hook_result(message.result))
        elif isinstance(message, CallbackSettled):
            self._callback_settled(message)
        else:
            raise TypeError(f"PermissionArbiterActor got {type(message).__name__}")
        return None

    def on_stop(self) -> None:
        self._stopping = True
        for race in list(self._races.values()):
            self._apply(race, race.core.shutdown())
            for call in race.callbacks:
                if call.timer is not None:
                    call.timer.cancel()
        # DEC-HOOK-4: every hook run reports its hook_response before exit.
        for thread in self._drivers:
            thread.join(HOOK_STOP_JOIN_SECONDS)

    def _start(self, ask: AskPermission) -> None:
        # DEC-CLI-3: the race core loads with the first ask, not at start.
        from agentx.messages.permission_race import INTERRUPTED_MESSAGE, PermissionRace  # noqa: PLC0415

        if ask.ask.cancel.is_set():
            # The turn was interrupted before this ask reached the arbiter: no
            # can_use_tool may follow the interrupt acknowledgement.
            ask.future.set_result(
                PermissionOutcome(
                    behavior="deny", message=INTERRUPTED_MESSAGE, decided_by="interrupt"
                )
            )
            return
        tool_use_id = ask.ask.tool_use_id
        core = PermissionRace(
            tool_use_id=tool_use_id, hooks=len(ask.hooks), host_open=self._host_open
        )
        race = _Race(core=core, ask=ask)
        self._races[tool_use_id] = race
        try:
            self._apply(race, race.core.start())
        except Exception as exc:  # WIRE-PERM-002: a failure to ask is a denial, never a hang
            if not isinstance(exc, AskExpired):  # an expiry was reported once already
                logger.exception("permission request could not start")
            self._races.pop(tool_use_id, None)
            if not ask.future.done():
                ask.future.set_result(
                    PermissionOutcome(behavior="deny", message="permission request failed")
                )

    def _apply(self, race: _Race, effects: tuple[RaceEffect, ...]) -> None:
        from agentx.messages.permission_race import (  # noqa: PLC0415 - loaded by the first ask (DEC-CLI-3)
            CancelHook,
            CancelHostRequest,
            Settle,
            StartHook,
            StartHostRequest,
            no_channel_hint,
        )

        for effect in effects:
            if isinstance(effect, StartHostRequest):
                self._start_host(race)
            elif isinstance(effect, StartHook):
                self._start_hooks(race)
            elif isinstance(effect, CancelHostRequest):
                if race.request_id is not None:
                    self._broker.abort(race.request_id)
                if race.cancel_prompt is not None:
                    race.cancel_prompt()
            elif isinstance(effect, CancelHook):
                for process in race.hooks:
                    process.kill()
                for call in race.callbacks:
                    if not call.settled and call.request_id is not None:
                        self._broker.abort(call.request_id)
            elif isinstance(effect, Settle):
                self._races.pop(race.ask.ask.tool_use_id, None)
                if effect.decided_by == "no_channel" and not self._stopping:
                    ask = race.ask.ask
                    logger.warning(no_channel_hint(ask.tool_name, ask.tool_use_id))
                race.ask.future.set_result(_outcome(effect))
            # PublishRequiresAction: the turn engine publishes session state.

    def _start_host(self, race: _Race) -> None:
        ask = race.ask.ask
        if self._prompt_tool is not None:
            ref = self.actor_ref
            tool_use_id = ask.tool_use_id

            def decided(result: PermissionResult) -> None:
                settlement = Resolved(request_id=tool_use_id, value=result)
                with contextlib.suppress(pykka.ActorDeadError):
                    ref.tell(HostSettled(tool_use_id, settlement))

            race.cancel_prompt = self._prompt_tool.start(ask, decided)
            return
        from agentx.messages.permission_wire import (  # noqa: PLC0415 - the first ask (DEC-CLI-3)
            PermissionResponseSchema,
            can_use_tool_request,
        )

        request = race.ask.request or can_use_tool_request(
            ask.tool_name,
            ask.tool_input,
            ask.tool_use_id,
            ask.description,
            suggestions=ask.suggestions,
            blocked_path=ask.blocked_path,
        )
        ref = self.actor_ref
        tool_use_id = ask.tool_use_id
        pending = self._broker.ask(
            request,
            PermissionResponseSchema(tool_use_id=tool_use_id),
            on_settle=lambda settlement: ref.tell(HostSettled(tool_use_id, settlement)),
        )
        race.request_id = pending.request_id

    def _start_hooks(self, race: _Race) -> None:
        """DEC-HOOK-2: each PermissionRequest command hook with the event's input."""
        from agentx.hooks.process import Finished, hook_env, start_process_hook  # noqa: PLC0415
        from agentx.messages.encode import fs_text  # noqa: PLC0415
        from agentx.messages.hooks.config import CallbackHook  # noqa: PLC0415
        from agentx.messages.hooks.events import Common, event_input  # noqa: PLC0415
        from agentx.messages.hooks.records import HookIdentity, hook_started  # noqa: PLC0415
        from agentx.messages.hooks.verdicts import failed  # noqa: PLC0415
        from agentx.messages.permission_race import HookFailed  # noqa: PLC0415 - DEC-CLI-3
        from agentx.messages.permission_wire import permission_update_to_wire  # noqa: PLC0415 - DEC-CLI-3

        ask = race.ask.ask
        fields: dict[str, Any] = {
            "tool_name": ask.tool_name,
            "tool_input": ask.tool_input,
            "tool_use_id": ask.tool_use_id,
        }
        if ask.suggestions:
            fields["permission_suggestions"] = tuple(
                permission_update_to_wire(update) for update in ask.suggestions
            )
        if ask.agent is not None:  # asked inside a subagent (DEC-HOOK-2)
            fields["agent_id"], fields["agent_type"] = ask.agent
        common = Common(
            session_id=self._session_id,
            transcript_path=self._transcript_path(),
            cwd=fs_text(str(self._cwd)),
            permission_mode=self._permission_mode(),
        )
        stdin = event_input("PermissionRequest", common, fields)
        env = hook_env(self._session_env(), self._base_env, project_dir=self._cwd)
        for hook in race.ask.hooks:
            who = HookIdentity(
                hook_id=f"hook_{next(self._hook_ids)}",
                hook_name=hook.name,
                hook_event="PermissionRequest",
            )
            self._emit((hook_started(who, session_id=self._session_id, uuid=self._uuid()),))
            if isinstance(hook, CallbackHook):
                self._start_callback(race, hook, stdin, who)
                continue
            try:
                process = start_process_hook(
                    hook,
                    stdin,
                    header_env=self._header_env,
                    cwd=self._cwd,
                    env=env,
                    children=self._children,
                )
            except OSError as exc:
                # DEC-HOOK-4: a hook that could not start still reports once.
                reason = f"hook did not start: {exc.strerror}"
                self._write_response(who, Finished(verdict=failed(reason)))
                self.actor_ref.tell(HookFinished(ask.tool_use_id, HookFailed(reason="error")))
                continue
            race.hooks.append(process)
            driver = threading.Thread(
                target=self._drive_hook,
                args=(process, ask.tool_use_id, who, race.ask.show),
                name=f"agentx-{who.hook_id}",
                daemon=True,
            )
            self._drivers = [t for t in self._drivers if t.is_alive()]
            self._drivers.append(driver)
            driver.start()

    def _start_callback(
        self, race: _Race, hook: CallbackHook, stdin: FrozenDict, who: HookIdentity
    ) -> None:
        """A PermissionRequest callback hook: a ``hook_callback`` request in
        the race, withdrawn at its deadline (DEC-PROFILE-2)."""
        from agentx.messages.hooks.callbacks import (  # noqa: PLC0415
            HookCallbackSchema,
            hook_callback_request,
        )

        tool_use_id = race.ask.ask.tool_use_id
        call = _Callback(who=who, show=race.ask.show)
        race.callbacks.append(call)
        ref = self.actor_ref
        pending = self._broker.ask(
            hook_callback_request(hook.callback_id, stdin, tool_use_id),
            HookCallbackSchema(event="PermissionRequest", tool_use_id=tool_use_id),
            on_settle=lambda settlement: ref.tell(CallbackSettled(tool_use_id, call, settlement)),
        )
        call.request_id = pending.request_id
        call.timer = threading.Timer(hook.timeout_s, self._expire, args=(call,))
        call.timer.daemon = True
        call.timer.start()

    def _expire(self, call: _Callback) -> None:
        """Timer thread: the callback's deadline passed; withdraw it."""
        call.timed_out = True
        if call.request_id is not None:
            self._broker.abort(call.request_id)

    def _callback_settled(self, message: CallbackSettled) -> None:
        from agentx.hooks.process import Finished  # noqa: PLC0415
        from agentx.messages.hooks.verdicts import CANCELLED, Verdict, failed  # noqa: PLC0415

        call, settlement = message.call, message.settlement
        call.settled = True
        if call.timer is not None:
            call.timer.cancel()
        verdict: Verdict
        if isinstance(settlement, Resolved) and isinstance(settlement.value, Verdict):
            verdict = settlement.value
        elif call.timed_out:
            verdict = failed("hook callback timed out", timed_out=True)
        elif isinstance(settlement, Rejected) and settlement.reason is RejectReason.ABORTED:
            verdict = CANCELLED
        else:
            verdict = failed(f"hook callback failed: {_why(settlement)}")
        self._write_response(call.who, Finished(verdict=verdict))
        if verdict.failure is not None:
            logger.warning(
                "PermissionRequest hook {!r} failed: {}", call.who.hook_name, verdict.failure
            )
        if call.show is not None and verdict.system_message:
            call.show("PermissionRequest", verdict.system_message)
        race = self._races.get(message.tool_use_id)
        if race is not None:
            self._apply(race, race.core.hook_result(_hook_result(verdict)))

    def _write_response(self, who: HookIdentity, finished: Finished) -> None:
        from agentx.messages.hooks.records import hook_response  # noqa: PLC0415

        self._emit(
            (
                hook_response(
                    who,
                    outcome=finished.outcome,
                    # suppressOutput keeps the hook's stdout out (DECISIONS section 3).
                    stdout="" if finished.verdict.suppress_output else finished.stdout,
                    stderr=finished.stderr,
                    exit_code=finished.exit_code,
                    session_id=self._session_id,
                    uuid=self._uuid(),
                ),
            )
        )

    def _drive_hook(
        self,
        process: HookProcess,
        tool_use_id: str,
        who: HookIdentity,
        show: Callable[[str, str], None] | None,
    ) -> None:
        """Hook driver thread: progress records as output arrives, then the
        ``hook_response`` (and the hook's ``systemMessage``, shown), then the
        result to the arbiter (in that order, so both are on the output FIFO
        before the race can settle)."""
        from agentx.messages.hooks.records import hook_progress  # noqa: PLC0415
        from agentx.messages.permission_race import HookFailed  # noqa: PLC0415 - DEC-CLI-3

        ref = self.actor_ref
        result: HookResult = HookFailed(reason="error")
        try:
            while process.finished is None:
                for output in process.read_output(HOOK_POLL_SECONDS):
                    self._emit(
                        (
                            hook_progress(
                                who,
                                stdout=output.stdout,
                                stderr=output.stderr,
                                session_id=self._session_id,
                                uuid=self._uuid(),
                            ),
                        )
                    )
            finished = process.finished
            self._write_response(who, finished)
            result = _hook_result(finished.verdict)
            if finished.verdict.failure is not None:
                logger.warning(
                    "PermissionRequest hook {!r} failed: {}",
                    who.hook_name,
                    finished.verdict.failure,
                )
            if show is not None and finished.verdict.system_message:
                show("PermissionRequest", finished.verdict.system_message)
        except pykka.ActorDeadError:
            # The writer stopped first (the session is ending): nothing more
            # can be written; the arbiter still hears how the hook ended.
            process.kill()
        finally:
            # A stopped arbiter already settled every race (on_stop).
            with contextlib.suppress(pykka.ActorDeadError):
                ref.tell(HookFinished(tool_use_id, result))


def _host_effects(core: PermissionRace, settlement: Settlement) -> tuple[RaceEffect, ...]:
    from agentx.messages.permission_wire import PermissionAllow, PermissionDeny  # noqa: PLC0415 - DEC-CLI-3

    if isinstance(settlement, Resolved):
        value = settlement.value
        if isinstance(value, PermissionAllow | PermissionDeny):
            return core.host_answer(value)
        return core.host_error()
    assert isinstance(settlement, Rejected)
    if settlement.reason is RejectReason.ABORTED:
        return core.abort()
    if _host_gone(settlement):
        return core.host_closed()
    return core.host_error()


def _why(settlement: Settlement) -> str:
    if isinstance(settlement, Rejected):
        return f"{settlement.reason}: {settlement.message}"
    return "an answer that is not a verdict"


def _host_gone(settlement: Settlement) -> bool:
    """The broker refused or rejected the request because input ended or
    it is stopping: the host can no longer answer (DEC-EOF-1/2)."""
    return isinstance(settlement, Rejected) and settlement.reason in (
        RejectReason.STREAM_CLOSED,
        RejectReason.SHUTDOWN,
    )


def _hook_result(verdict: Verdict) -> HookResult:
    """A PermissionRequest verdict as the race's hook result (DEC-HOOK-3):
    a failure denies in the race (WIRE-PERM-002); ``continue: false``
    denies and interrupts the turn."""
    from agentx.messages.permission_race import HookFailed, HookPassThrough  # noqa: PLC0415 - DEC-CLI-3
    from agentx.messages.permission_wire import PermissionDeny  # noqa: PLC0415 - DEC-CLI-3

    if verdict.failure is not None:
        return HookFailed(reason="timeout" if verdict.timed_out else "error")
    if verdict.cancelled:
        return HookFailed(reason="error")
    if verdict.stop:
        return PermissionDeny(message=verdict.stop_reason or "stopped by hook", interrupt=True)
    if verdict.request is not None:
        return verdict.request
    return HookPassThrough()


def _outcome(settle: Settle) -> PermissionOutcome:
    from agentx.messages.permission_wire import PermissionAllow  # noqa: PLC0415 - DEC-CLI-3

    result = settle.result
    if isinstance(result, PermissionAllow):
        return PermissionOutcome(
            behavior="allow",
            updated_input=result.updated_input,
            updated_permissions=result.updated_permissions,
            decided_by=settle.decided_by,
        )
    return PermissionOutcome(
        behavior="deny",
        message=result.message,
        interrupt=result.interrupt,
        decided_by=settle.decided_by,
    )
