"""Host: starts the actor system for one session and returns its exit status.

The CLI and the embedding API both run a :class:`Host` over a byte source and
a byte sink; the credential guard, the ordering and the EOF rules are the same
objects either way. Start order (DEC-CLI-3, WIRE-013): the guard's validator
is installed before the first write, ``system/init`` is the first record, and
only then does the stdin pump start.
"""

from __future__ import annotations

import threading
import uuid as uuid_module
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pykka
from loguru import logger

from agentx.actors.reader import ReaderActor, start_pump
from agentx.actors.supervisor import (
    ExitLatch,
    FatalInput,
    InputEOF,
    Operations,
    OutputFailed,
    RunnerDrained,
    SupervisorActor,
)
from agentx.actors.turn_runner import StateRecorder, Submit, TurnRunnerActor
from agentx.actors.writer import WriterActor, WriterSink
from agentx.messages.accounting import Pricing
from agentx.messages.decode import InboundRecord
from agentx.messages.dispatch import Profile
from agentx.messages.frozen import FrozenDict, FrozenJSON
from agentx.messages.guard import CredentialValidator, OutputGuard
from agentx.messages.inbound import (
    ControlRequest,
    InvalidControlRequest,
    InvalidEnvUpdate,
    InvalidUserRecord,
    KeepAlive,
    TextPart,
    UncorrelatableControl,
    UnknownRecord,
    UpdateEnvironmentVariables,
    UserRecord,
)
from agentx.providers.base import Block, ProviderClient, TextBlock
from agentx.session_info import SessionInfo, init_record, initialize_response
from agentx.turns import (
    EngineConfig,
    PermissionOutcome,
    PolicyDecision,
    ToolRunner,
    TurnEngine,
    TurnInput,
    input_error_result,
)


def new_uuid() -> str:
    return str(uuid_module.uuid4())


@dataclass(frozen=True, slots=True, kw_only=True)
class HostOptions:
    profile: Profile = "standalone"
    replay_user_messages: bool = False
    include_partial_messages: bool = False
    max_turns: int | None = None
    max_budget_usd: float | None = None
    system_prompt: str = ""
    effort: str | None = None
    pricing: Pricing | None = None
    credential_literals: frozenset[str] = field(default_factory=frozenset)


class _AllowNothingPolicy:
    def evaluate(self, tool: ToolRunner, tool_input: FrozenDict) -> PolicyDecision:
        return PolicyDecision(behavior="deny", reason="no tools are enabled")

    def suggestions(self, tool: ToolRunner, tool_input: FrozenDict) -> tuple[FrozenJSON, ...]:
        return ()


class _NoGate:
    def ask(self, **_: Any) -> Future[PermissionOutcome]:
        future: Future[PermissionOutcome] = Future()
        future.set_result(PermissionOutcome(behavior="deny"))
        return future


class Host:
    def __init__(
        self,
        *,
        info: SessionInfo,
        client: ProviderClient,
        options: HostOptions,
        read_chunk: Callable[[], bytes],
        write: Callable[[bytes], int | None],
        environ: dict[str, str],
    ) -> None:
        self._info = info
        self._client = client
        self._options = options
        self._read_chunk = read_chunk
        self._write = write
        self._environ = environ
        self._exit = ExitLatch()

    def run(self) -> int:
        try:
            return self._run()
        finally:
            pykka.ActorRegistry.stop_all(block=True, timeout=10)

    def _run(self) -> int:
        info, opts = self._info, self._options
        guard = OutputGuard(self._write, state_lock=threading.Lock(), write_lock=threading.RLock())
        guard.install_validator(CredentialValidator(opts.credential_literals))

        supervisor_box: list[pykka.ActorRef[SupervisorActor]] = []

        def tell_supervisor(message: object) -> None:
            supervisor_box[0].tell(message)

        writer_ref = WriterActor.start(
            guard=guard, on_failure=lambda kind: tell_supervisor(OutputFailed(kind))
        )
        sink = WriterSink(writer_ref)
        sink.emit((init_record(info, uuid=new_uuid()),))

        state = StateRecorder(sink, info.session_id, new_uuid)
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
            ),
            provider=self._client,
            tools=(),
            policy=_AllowNothingPolicy(),
            gate=_NoGate(),
            state=state,
            emit=sink,
            new_uuid=new_uuid,
        )
        runner_ref = TurnRunnerActor.start(
            engine=engine,
            state=state,
            emit=sink,
            session_id=info.session_id,
            new_uuid=new_uuid,
            pricing=opts.pricing,
            to_turn=_to_turn,
            check_refs=lambda record: None,
            abort_permissions=sink,
            on_drained=lambda: tell_supervisor(RunnerDrained()),
            replay_user_messages=opts.replay_user_messages,
        )
        init_payload = initialize_response(info)
        supervisor_ref = SupervisorActor.start(
            emit=sink,
            profile=opts.profile,
            runner=runner_ref,
            operations=Operations(
                initialize=lambda: init_payload,
                context_usage=FrozenDict,
                mcp_status=lambda: FrozenDict(mcpServers=()),
            ),
            exit_latch=self._exit,
        )
        supervisor_box.append(supervisor_ref)

        def route(record: InboundRecord) -> None:
            if isinstance(record, UserRecord):
                runner_ref.tell(Submit(record))
            elif isinstance(record, ControlRequest | InvalidControlRequest | UncorrelatableControl):
                supervisor_ref.tell(record)
            elif isinstance(record, InvalidUserRecord | InvalidEnvUpdate):
                sink.emit(
                    (
                        input_error_result(
                            record.reason,
                            pricing=opts.pricing,
                            session_id=info.session_id,
                            uuid=new_uuid(),
                        ),
                    )
                )
            elif isinstance(record, UpdateEnvironmentVariables):
                self._environ.update(record.variables)
            elif isinstance(record, UnknownRecord):
                logger.warning("line {}: unknown record type ignored", record.line)
            elif isinstance(record, KeepAlive):
                pass
            else:
                logger.warning("line {}: {} not handled", record.line, type(record).__name__)

        reader_ref = ReaderActor.start(
            route=route,
            on_eof=lambda: supervisor_ref.tell(InputEOF()),
            on_fatal=lambda line, reason: supervisor_ref.tell(FatalInput(line, reason)),
        )
        start_pump(self._read_chunk, reader_ref)
        code = self._exit.wait()
        assert code is not None
        runner_ref.stop(block=True, timeout=10)
        sink.drain(timeout=10)
        return code


def _to_turn(record: UserRecord) -> TurnInput:
    content: list[Block] = [
        TextBlock(text=part.text) for part in record.content if isinstance(part, TextPart)
    ]
    return TurnInput(uuid=record.uuid, content=tuple(content))
