"""The host's glue between actors, each a named piece instead of a closure.

:class:`LiveSettings` is the settings a session runs with (DEC-SET-1,
DEC-PROFILE-1 ``get_settings``/``apply_flag_settings``); :class:`PromptMaterials`
turns an admitted ``user`` record into a turn's input through the upload
manager (WIRE-020, MOD-083..085); :class:`Router` carries each decoded record
to the owner :func:`~agentx.messages.routing.route_of` names;
:class:`UploadTimer` ticks the upload manager.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

import pykka

from agentx.actors.base import ASK_SECONDS, AskExpired, answer_within
from agentx.actors.broker import ControlBroker
from agentx.actors.supervision import ExitLatch
from agentx.actors.supervisor import SupervisorActor
from agentx.actors.turn_runner import Seed, Submit, TurnRunnerActor
from agentx.actors.upload_manager import Tick, UploadManagerActor
from agentx.actors.writer import WriterSink
from agentx.config.settings import Settings, SettingsError
from agentx.diagnostics import logger
from agentx.messages import outbound
from agentx.messages.accounting import Pricing
from agentx.messages.decode import InboundRecord
from agentx.messages.dispatch import ControlRecord, Drop, Reply, dispatch
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound import InvalidEnvUpdate, PriorContextRecord, UpdateEnvironmentVariables
from agentx.messages.inbound_control import (
    ControlRequest,
    ControlResponse,
    InvalidControlResponse,
)
from agentx.messages.inbound_user import AttachmentRef, InvalidUserRecord, TextPart, UserRecord
from agentx.messages.permission_rules import Mode
from agentx.messages.profiles import Profile
from agentx.messages.records import Records
from agentx.messages.routing import Route, RouteName, route_of
from agentx.permissions.policy import SessionPolicy
from agentx.providers.base import Block, MediaBlock, TextBlock
from agentx.sessions.identity import SessionIdentity
from agentx.turns.contracts import TurnInput
from agentx.turns.results import input_error_result

if TYPE_CHECKING:
    from agentx.actors.initialize_wait import InitializeWait
    from agentx.messages.hooks.config import HookSpec
    from agentx.messages.inbound_import import AttachmentImport

#: Upload lifecycles are checked for their 120 s timeout this often.
UPLOAD_TICK_SECONDS = 1.0


class LiveSettings:
    """The merged settings of the session; the flag layer may change live."""

    def __init__(
        self,
        settings: Settings,
        *,
        policy: SessionPolicy,
        model: str,
        effort: str | None,
        resolve_model: Callable[[str], str | None],
    ) -> None:
        self._lock = threading.Lock()
        self._settings = settings
        self._policy = policy
        self._applied = FrozenDict(model=model, effort=effort)
        self._served_model = model
        #: An id or alias -> the id the selected provider serves, or None.
        self._resolve_model = resolve_model
        self._live_model = model

    def hooks_for(self, tool: str) -> tuple[HookSpec, ...]:
        """DEC-HOOK-1: the PermissionRequest command hooks for ``tool``."""
        with self._lock:
            current = self._settings
        return current.hooks_for("PermissionRequest", tool)

    def hooks(self) -> FrozenDict:
        """DEC-HOOK-1: the merged settings ``hooks`` (live: the flag layer may change)."""
        with self._lock:
            return self._settings.hooks

    def get_settings(self) -> FrozenDict:
        """``get_settings``: the effective merge, the ordered raw sources and
        the runtime-applied model and effort."""
        with self._lock:
            current = self._settings
        return FrozenDict(
            effective=current.effective,
            sources=tuple(
                FrozenDict(source=s.name, path=s.path, settings=s.settings) for s in current.sources
            ),
            applied=self._applied,
        )

    def set_permission_mode(self, mode: str) -> str | None:
        """DEC-PROFILE-2 (``sdk`` profile): the live permission mode (the
        dispatch core checked that ``mode`` is one)."""
        from agentx.messages.permission_updates import SetMode  # noqa: PLC0415 - DEC-CLI-3

        self._policy.apply((SetMode(mode=cast(Mode, mode)),))
        return None

    def set_model(self, model: str | None) -> str | None:
        """DEC-PROFILE-2 (``sdk`` profile): the next model request runs
        ``model`` (an id or alias the selected provider serves; None: the
        model the session started with). Never a provider or deployment
        switch (WIRE-025): a model the provider does not serve is a
        correlated error that names neither the model (a mistyped value can
        hold a key) nor the provider's route."""
        chosen = self._served_model if model is None else self._resolve_model(model)
        if chosen is None:
            return (
                "the requested model is not served by the selected provider; "
                "another provider needs a new process: restart with --provider <id>"
            )
        with self._lock:
            self._live_model = chosen
            self._applied = FrozenDict(model=chosen, effort=self._applied.get("effort"))
        return None

    def live_model(self) -> str:
        """The model the next request runs (the engine asks before each one)."""
        with self._lock:
            return self._live_model

    def apply_flag_settings(self, values: Mapping[str, Any]) -> str | None:
        """Merge ``values`` into the flag layer; permissions apply at once."""
        with self._lock:
            try:
                updated = self._settings.apply_flag_settings(values)
            except SettingsError as exc:
                return str(exc)
            self._settings = updated
        self._policy.replace_rules(updated.rules)
        return None


class Uploads:
    """The typed handle on the upload manager. Its asks are safe from any
    actor: the upload manager never calls back into an asker; each is
    bounded by :data:`ASK_SECONDS` (media admission of a large commit may
    run ahead of it in the inbox)."""

    def __init__(self, ref: pykka.ActorRef[UploadManagerActor]) -> None:
        self.ref = ref
        self._proxy = ref.proxy()
        self._first: Callable[[], None] | None = None

    def on_first_operation(self, first: Callable[[], None]) -> None:
        """``first`` runs before the first ``attachment_import`` is told."""
        self._first = first

    def handle(self, op: AttachmentImport) -> None:
        """One ``attachment_import`` operation, told (WIRE-018). Called on
        the reader's thread only."""
        first, self._first = self._first, None
        if first is not None:
            first()
        self.ref.tell(op)

    def tick(self) -> bool:
        """Expire lifecycles; False once the manager has stopped."""
        try:
            self.ref.tell(Tick())
        except pykka.ActorDeadError:
            return False
        return True

    def on_eof(self) -> None:
        """Input closed: returns once every open lifecycle was aborted."""
        self._proxy.on_eof().get(timeout=ASK_SECONDS)

    def admit_refs(self, prompt_uuid: str | None, refs: tuple[AttachmentRef, ...]) -> str | None:
        reason: str | None = self._proxy.admit_refs(prompt_uuid, refs).get(timeout=ASK_SECONDS)
        return reason

    def read_blob(self, storage_id: str) -> bytes:
        data: bytes = self._proxy.read_blob(storage_id).get(timeout=ASK_SECONDS)
        return data


class PromptMaterials:
    """What the runner needs of the upload manager for one prompt; with
    ``mentions`` (the ``sdk`` profile, DEC-PROFILE-2) a prompt not marked
    ``client_composed`` has the files it mentions read."""

    def __init__(self, uploads: Uploads, *, mentions: bool = False) -> None:
        self._uploads = uploads
        self._mentions = mentions

    def check_refs(self, record: UserRecord) -> str | None:
        """WIRE-020, decided by the upload core (capability included); a
        record with neither references nor a uuid has nothing to correlate."""
        refs = tuple(p for p in record.content if isinstance(p, AttachmentRef))
        if not refs and record.uuid is None:
            return None
        return self._uploads.admit_refs(record.uuid, refs)

    def to_turn(self, record: UserRecord) -> TurnInput:
        content: list[Block] = []
        prompt_uuid = None
        for part in record.content:
            if isinstance(part, TextPart):
                content.append(TextBlock(text=part.text))
                continue
            prompt_uuid = record.uuid
            content.append(
                MediaBlock(
                    kind=part.kind,
                    mime_type=part.mime_type,
                    name=part.name,
                    data=self._uploads.read_blob(part.storage_id),
                    sha256=part.sha256,
                    size_bytes=part.size_bytes,
                )
            )
        return TurnInput(
            uuid=record.uuid,
            content=tuple(content),
            prompt_uuid=prompt_uuid,
            read_mentions=self._mentions and not record.client_composed,
        )


class Router:
    """The reader's ``route``: each record to the owner the routing core names.

    Control requests that need no other party are answered here, on the
    reader's thread (no supervisor hop; the serial order holds, WIRE-003): every fixed answer
    of :func:`~agentx.messages.dispatch.dispatch` (unsupported subtypes, field
    errors, the restart errors), the correlated error of an invalid request,
    and the ``inline`` operations, each a read of state fixed for the
    session. The serial dispatcher's order holds: a request is answered here
    only when every request handed to the supervisor before it has been
    handled, so its answer entered the writer's FIFO first (spec "Control
    operations", WIRE-003); otherwise it goes to the supervisor too.

    The records of one batch are carried in order. The records the router
    itself writes (answers, input-error results, replay echoes) leave as one
    ``emit`` before the next record goes to another party and at the end of
    the batch, so a run of control requests costs one writer message.

    In the ``sdk`` profile (DEC-PROFILE-2) a prompt waits until the
    supervisor has handled every request handed to it before (an
    ``initialize``'s fields, a ``set_permission_mode``, are in force before
    the next turn starts); once the supervisor says the session ends (a
    refused ``initialize``), nothing more is carried.
    """

    def __init__(
        self,
        *,
        runner: pykka.ActorRef[TurnRunnerActor],
        supervisor: pykka.ActorRef[SupervisorActor],
        broker: ControlBroker,
        uploads: Uploads,
        sink: WriterSink,
        update_environment: Callable[[Mapping[str, str]], None],
        identity: SessionIdentity,
        new_uuid: Callable[[], str],
        pricing: Pricing | None,
        replay: bool,
        profile: Profile,
        inline: Mapping[str, Callable[[], FrozenDict]],
        supervision: ExitLatch | None = None,
        await_initialize: InitializeWait | None = None,
    ) -> None:
        self._runner = runner
        self._supervisor = supervisor
        self._broker = broker
        self._uploads = uploads
        self._sink = sink
        self._update_environment = update_environment
        self._identity = identity
        self._uuid = new_uuid
        self._pricing = pricing
        self._replay = replay
        self._profile = profile
        self._inline = inline
        #: The supervisor's reply to the last request handed to it.
        self._dispatching: pykka.Future[Any] | None = None
        self._supervision = supervision
        #: DEC-PROFILE-2: set once the supervisor ended the session.
        self._halted = False
        #: ``--await-initialize``: prompts held until the first ``initialize``.
        self._await = await_initialize

    def __call__(self, records: tuple[InboundRecord, ...]) -> None:
        pending: list[Mapping[str, Any]] = []
        queue = deque(records)
        while queue:
            record = queue.popleft()
            if self._ended():
                break
            route = route_of(record)
            if route is Route.CONTROL_REQUEST:
                idle = self._dispatcher_idle()
                if self._ended():
                    break
                answer = self._answer(record) if idle else None
                if answer is not None:
                    pending.extend(answer)
                    queue.extendleft(reversed(self._released(record)))
                    continue
            elif route is Route.INPUT_ERROR:
                pending.append(self._input_error(record))
                continue
            elif route is Route.KEEP_ALIVE:
                continue
            if pending:
                self._sink.emit(tuple(pending))
                pending.clear()
            if route in _HELD_IN_SDK:
                if self._await is not None and self._await.hold(record):
                    continue
                if not self._controls_settled():
                    break
            self._carry(route, record)
            if route is Route.CONTROL_REQUEST:
                queue.extendleft(reversed(self._released(record)))
        if pending:
            self._sink.emit(tuple(pending))

    def _released(self, record: InboundRecord) -> tuple[InboundRecord, ...]:
        """``--await-initialize``: the prompts held until ``record``, the
        first ``initialize``, to be carried right behind it."""
        if (
            self._await is None
            or not isinstance(record, ControlRequest)
            or record.subtype != "initialize"
        ):
            return ()
        return self._await.release()

    def _ended(self) -> bool:
        """DEC-PROFILE-2: the supervisor ended the session, or the wait for
        ``initialize`` did; nothing more is carried."""
        return self._halted or (self._await is not None and self._await.ended)

    def _controls_settled(self) -> bool:
        """DEC-PROFILE-2: in the ``sdk`` profile, wait (bounded) for the
        supervisor's earlier requests; False once it ended the session."""
        if self._profile != "sdk" or self._dispatching is None:
            return not self._halted
        try:
            goes_on = answer_within(
                self._dispatching,
                ASK_SECONDS,
                where=SupervisorActor.__name__,
                supervision=self._supervision,
            )
        except AskExpired:
            goes_on = False  # reported: the session ends with 4
        except Exception:
            goes_on = False  # the supervisor reported its own failure (status 4)
        self._dispatching = None
        if goes_on is False:
            self._halted = True
        return not self._halted

    def _dispatcher_idle(self) -> bool:
        """True when the supervisor has handled every request handed to it."""
        if self._dispatching is None:
            return True
        try:
            goes_on = self._dispatching.get(timeout=0)
        except pykka.Timeout:
            return False
        except Exception:
            goes_on = None  # the supervisor reported its own failure (an ending, status 4)
        self._dispatching = None
        if goes_on is False:
            self._halted = True  # DEC-PROFILE-2: a refused initialize ended the session
        return True

    def _answer(self, record: InboundRecord) -> Records | None:
        """What this thread writes for a control record (the dispatch core
        decides, as for the supervisor), or None when only the supervisor
        can answer it."""
        action = dispatch(cast(ControlRecord, record), profile=self._profile)
        if isinstance(action, Reply):
            if action.warning is not None:
                logger.warning("{}", action.warning)
            return (action.record,)
        if isinstance(action, Drop):
            logger.warning("{}", action.diagnostic)
            return ()
        operation = self._inline.get(action.subtype)
        if operation is None or action.fields:
            # DEC-PROFILE-2: fields to apply (an sdk-profile initialize) need the supervisor.
            return None
        return (outbound.control_response_success(action.request_id, operation()),)

    def _input_error(self, record: InboundRecord) -> FrozenDict:
        reason = cast(InvalidUserRecord, record).reason
        return input_error_result(
            reason, pricing=self._pricing, session_id=self._identity.id, uuid=self._uuid()
        )

    def _carry(self, route: RouteName, record: InboundRecord) -> None:
        """Hand ``record`` to the party that owns it."""
        match route:
            case Route.TURN:
                self._runner.tell(Submit(cast(UserRecord, record)))
            case Route.PRIOR_CONTEXT:
                # Replayed context only: loaded with the first such record (DEC-CLI-3).
                from agentx.sessions.prior_context import prior_message  # noqa: PLC0415

                prior = prior_message(cast(UserRecord | PriorContextRecord, record))
                if prior is not None:
                    self._runner.tell(Seed(prior))
            case Route.CONTROL_RESPONSE:
                response = cast(ControlResponse | InvalidControlResponse, record)
                if self._replay and isinstance(response, ControlResponse):
                    self._sink.emit((response.raw,))
                self._broker.on_response(response)
            case Route.UPLOAD:
                self._uploads.handle(cast("AttachmentImport", record))
            case Route.CONTROL_REQUEST:
                self._dispatching = self._supervisor.ask(record, block=False)
            case Route.ENVIRONMENT:
                self._update_environment(cast(UpdateEnvironmentVariables, record).variables)
            case Route.INVALID_ENVIRONMENT:
                reason = cast(InvalidEnvUpdate, record).reason
                logger.warning("line {}: {}; record ignored (DEC-ENV-1)", record.line, reason)
            case Route.UNKNOWN:
                logger.warning("line {}: unknown record type ignored (WIRE-002)", record.line)


#: DEC-PROFILE-2: the records an ``sdk``-profile router holds until the
#: supervisor has handled the requests before them.
_HELD_IN_SDK = frozenset({Route.TURN, Route.PRIOR_CONTEXT})


class UploadTimer:
    """Ticks the upload manager so lifecycles expire 120 s past their begin.

    Its thread starts with the first ``attachment_import`` operation (no
    lifecycle is open before one): a session without uploads starts none
    (start-up, DEC-CLI-3). :meth:`stop` ends it whether it started or not."""

    def __init__(self, uploads: Uploads) -> None:
        self._uploads = uploads
        self._stop = threading.Event()
        uploads.on_first_operation(self._start)

    def _start(self) -> None:
        if not self._stop.is_set():
            threading.Thread(target=self._run, name="agentx-upload-timer", daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(UPLOAD_TICK_SECONDS):
            if not self._uploads.tick():
                return

    def stop(self) -> None:
        self._stop.set()
