"""The host's first start step: the writer and ``system/init`` (DEC-CLI-3,
WIRE-013), and :class:`Session`, what every step shares.

This module is all a session imports of the actor system before its first
record is written: :class:`~agentx.actors.host.Host` imports the later steps
(:mod:`agentx.actors.host_steps`, :mod:`agentx.actors.host_turns`) only once
``system/init`` is with the writer, so an SDK's spawn-to-``system/init`` pays
for the writer alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pykka
from msgspec import Struct

from agentx.actors.stream_window import StreamWindow
from agentx.actors.supervision import ExitLatch, OutputFailed
from agentx.actors.writer import FrameBuffer, WriterActor, WriterSink
from agentx.messages import output_modes
from agentx.messages.frozen import FrozenDict
from agentx.messages.guard import CredentialValidator, OutputGuard
from agentx.sessions.info import SessionInfo, init_record
from agentx.sessions.setup import StoredTranscript

if TYPE_CHECKING:
    from agentx.actors.host import HostOptions, HostParts
    from agentx.messages.stream_guard import StreamGuard
    from agentx.providers.base import ProviderClient
    from agentx.sessions.event_log import InternalEventLog
    from agentx.tools.process import ChildProcesses


class Session(Struct, frozen=True, kw_only=True):
    """What every step shares: the session's fixed facts and its latch."""

    info: SessionInfo
    options: HostOptions
    parts: HostParts
    client: ProviderClient
    supervision: ExitLatch
    new_uuid: Callable[[], str]
    events: InternalEventLog
    #: The environment tools and hooks see (``update_environment_variables``).
    session_env: Callable[[], Mapping[str, str]]
    full_env: Callable[[], Mapping[str, str]]
    update_env: Callable[[Mapping[str, str]], None]
    live_env: Mapping[str, str]
    #: Every child process group of this session (DECISIONS section 8).
    children: ChildProcesses
    #: What http hooks' header values interpolate: agentx's environment and
    #: the settings' ``env`` at the start, the values the credential union
    #: was built from (DEC-AUTH-3, DECISIONS section 3).
    header_env: Mapping[str, str] = FrozenDict()
    #: Sees each ``result`` the writer selects (DEC-CLI-6: a one-shot exit status).
    on_result: Callable[[Mapping[str, Any]], None] | None = None


class Output(Struct, frozen=True):
    writer: pykka.ActorRef[WriterActor]
    sink: WriterSink
    #: The ``stream_event`` records in flight to stdout (DECISIONS section 8).
    window: StreamWindow


def start_output(s: Session, *, write: Callable[[bytes], int | None]) -> Output:
    """The writer; ``system/init`` is its first record (DEC-CLI-3, WIRE-013)."""
    transcript = s.parts.transcript
    frames = FrameBuffer(write, barrier=transcript.sync if transcript is not None else None)
    guard = OutputGuard(
        frames,
        state_lock=threading.Lock(),
        write_lock=threading.RLock(),
        encode=output_modes.encoder(s.options.output_format),
    )
    guard.install_validator(CredentialValidator(s.options.credential_literals))
    window = StreamWindow()
    writer = WriterActor.start(
        guard=guard,
        frames=frames,
        on_failure=lambda kind: s.supervision.report(OutputFailed(kind)),
        select=_select(s),
        stream=_stream_guard(s.options.credential_literals),
        supervision=s.supervision,
        window=window,
    )
    sink = WriterSink(writer, window)
    sink.emit((init_record(s.info, uuid=s.new_uuid()),))
    if isinstance(transcript, StoredTranscript):
        # DEC-STORE-1 ``--session-mirror``: the mirrored entries follow system/init.
        transcript.mirror_to(sink.emit)
    return Output(writer=writer, sink=sink, window=window)


def _stream_guard(literals: frozenset[str]) -> StreamGuard | None:
    """The writer's stream guard (DEC-AUTH-6), None for an empty credential
    union; its module loads only when there are credentials to follow
    (start-up, DEC-CLI-3: a session without any writes ordinary output)."""
    if not literals:
        return None
    from agentx.messages.stream_guard import stream_guard  # noqa: PLC0415 - start-up

    return stream_guard(literals)


def _select(s: Session) -> Callable[[Mapping[str, Any]], bool]:
    select = output_modes.selects(s.options.output_format)
    if s.on_result is None:
        return select
    return output_modes.observing_results(select, s.on_result)
