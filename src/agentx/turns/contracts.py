"""The contracts between the turn engine and its collaborators (DEC-TURN-1..4).

What :class:`~agentx.turns.engine.TurnEngine` needs from the tools, the permission
policy and gate, the session-state publisher and the progress watch, and the
per-session configuration it runs with; the actor layer and the domain code
implement these without importing the engine. :class:`PermissionAsk` is one
tool use's permission prompt as the engine hands it to the gate, and
:class:`EnginePorts` groups every callback the engine makes into the host.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, Protocol

from msgspec import Struct

from agentx.config.registry import DEFAULT_CONTEXT_WINDOW
from agentx.messages.accounting import Pricing
from agentx.messages.frozen import FrozenDict
from agentx.messages.permission_rules import DecisionSource, Mode
from agentx.messages.records import RecordSink
from agentx.providers.base import Block, ToolSpec
from agentx.turns.cancel import CancelScope

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agentx.messages.hooks.aggregate import EventOutcome


class CommandFailed(Exception):
    """A slash command could not do its work; the message is credential-free."""


class TurnInput(Struct, frozen=True, kw_only=True):
    """One admitted prompt, ready to run."""

    uuid: str | None
    content: tuple[Block, ...]
    prompt_uuid: str | None = None
    #: DEC-PROFILE-2: read the files the text mentions (``@path``) into the prompt.
    read_mentions: bool = False


class PermissionOutcome(Struct, frozen=True, kw_only=True):
    """The settled answer for one tool use (WIRE-PERM-041..044, DEC-HOOK-3)."""

    behavior: Literal["allow", "deny"]
    updated_input: FrozenDict | None = None
    #: WIRE-PERM-022 session updates from an allow (validated by the gate).
    updated_permissions: tuple[Any, ...] = ()
    message: str = "Permission denied"
    interrupt: bool = False
    #: Who settled it and by which rule or mode, for the transcript's ledger
    #: (:data:`agentx.messages.session_ledger.DECIDERS`, DEC-STORE-1).
    decided_by: str = "agentx"
    reason: str = ""


class PolicyDecision(Struct, frozen=True, kw_only=True):
    """What the permission rules say before anyone is asked (DEC-PERM-MODE)."""

    behavior: Literal["allow", "deny", "ask"]
    #: Which step of the policy decided (never inferred from ``reason``).
    source: DecisionSource
    reason: str = ""
    blocked_path: str | None = None


class ToolRunner(Protocol):
    """The part of a tool the loop needs (see :mod:`agentx.tools.base`)."""

    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> ToolSpec: ...

    def summarize(self, tool_input: Mapping[str, Any]) -> str: ...

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        """Run the tool call ``tool_use_id``; returns (bounded content, is_error).
        Never raises but Cancelled."""


class PermissionPolicy(Protocol):
    @property
    def mode(self) -> Mode:
        """The session's permission mode now (DEC-PERM-MODE; live in the sdk profile)."""

    def evaluate(self, tool: ToolRunner, tool_input: FrozenDict) -> PolicyDecision: ...

    def denied_before_run(self, tool: ToolRunner, tool_input: FrozenDict) -> str | None:
        """DEC-SET-1: why a deny rule refuses the input the tool is about to run
        with (whoever replaced it since :meth:`evaluate`); ``None`` runs it."""

    def suggestions(self, tool: ToolRunner, tool_input: FrozenDict) -> tuple[Any, ...]:
        """WIRE-PERM-022 PermissionUpdate values offered with the prompt."""

    def apply(self, updates: tuple[Any, ...]) -> None:
        """Apply an allow's ``updatedPermissions`` to the session (WIRE-PERM-022)."""


class PermissionAsk(Struct, frozen=True, kw_only=True):
    """One tool use's permission prompt: the ``can_use_tool`` fields
    (WIRE-PERM-001..003) and the asking turn's scope, which aborts the ask
    when the turn is cancelled (WIRE-011)."""

    tool_name: str
    tool_input: FrozenDict
    tool_use_id: str
    description: str
    suggestions: tuple[Any, ...]
    blocked_path: str | None
    cancel: CancelScope
    #: A subagent's ask: its ``(agent_id, agent_type)``, which its
    #: PermissionRequest hooks' input carries as every other event's does
    #: (DEC-HOOK-2, Claude Code's BaseHookInput); None for the session's own.
    agent: tuple[str, str] | None = None


class PermissionGate(Protocol):
    def ask(self, ask: PermissionAsk) -> Future[PermissionOutcome]:
        """Start the host ask (and the hook race); the future settles exactly once."""

    def ask_network(
        self, host: str, port: int, *, cancel: CancelScope
    ) -> Future[PermissionOutcome]:
        """WIRE-PERM-004: the synthetic SandboxNetworkAccess request."""


class HookPort(Protocol):
    """The session's hooks (DECISIONS section 3): fire one event, get what
    its hooks decided together (:mod:`agentx.hooks.session`)."""

    @property
    def start_source(self) -> str:
        """``SessionStart``'s source when the session begins: startup or resume."""

    def fire(
        self, event: str, fields: Mapping[str, Any], *, cancelled: Callable[[], bool] = ...
    ) -> EventOutcome: ...


class WorkLauncher(Protocol):
    """Runs background work that is not a process on a thread of the actor
    layer (a background subagent, DEC-TURN-3; ``stop_task`` reaches it)."""

    def start_work(
        self,
        *,
        task_id: str,
        description: str,
        tool_use_id: str | None,
        task_type: str,
        timeout: float,
        work: Callable[[CancelScope], bool],
    ) -> None:
        """Start ``work(scope)``; raises ``OSError`` when the session is ending."""

    def stop(self, task_id: str) -> str | None:
        """``stop_task``: None when accepted, else why not."""


#: Wraps one tool run; the actor layer's implementation emits ``tool_progress``
#: while a tool runs longer than a second (it owns the timer thread).
ProgressWatch = Callable[[str, str], AbstractContextManager[None]]


def no_progress(tool_use_id: str, tool_name: str) -> AbstractContextManager[None]:
    return nullcontext()


class StatePublisher(Protocol):
    def permission_opened(self) -> None: ...

    def permission_closed(self) -> None: ...


def _no_model(requested: str) -> str | None:
    return None


def _no_files() -> tuple[Any, ...]:
    return ()


def _no_path() -> str:
    return ""


class AgentSetup(Struct, frozen=True, kw_only=True):
    """DEC-TURN-3: what the ``Agent`` tool is built from at the first turn
    (:mod:`agentx.agents.runner`; its modules load then, never at start)."""

    #: ``--agents`` definitions, checked at start (``AgentDefinition`` values).
    flag_agents: tuple[Any, ...] = ()
    #: Reads the agent files of the selected setting sources (one WARN line
    #: per file that cannot be used).
    load_files: Callable[[], tuple[Any, ...]] = _no_files
    #: The environment block every subagent's system prompt ends with.
    environment: str = ""
    #: A definition's model id or alias -> the id the selected provider
    #: serves for it, or None (DEC-CLI-5, within the provider).
    resolve_model: Callable[[str], str | None] = _no_model
    #: ``--append-subagent-system-prompt``: after every subagent's system prompt.
    append_prompt: str | None = None
    #: SubagentStop's ``agent_transcript_path``: where the sidechain is stored.
    transcript_path: Callable[[], str] = _no_path


class EngineConfig(Struct, frozen=True, kw_only=True):
    session_id: str
    model: str
    pricing: Pricing | None
    system_prompt: str = ""
    effort: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    include_partial_messages: bool = False
    #: The profile's window (tokens): get_context_usage's maximum and the
    #: base of automatic compaction (DEC-AUTH-2).
    context_window: int = DEFAULT_CONTEXT_WINDOW
    #: DEC-CLI-5 ``--fallback-model``: asked after an overloaded call.
    fallback_model: str | None = None
    #: Write ``system/api_retry`` and ``system/model_fallback`` (not in the
    #: standalone profile, spec "System and lifecycle events").
    retry_records: bool = False
    #: DEC-CLI-5 ``--json-schema``: every turn ends with a valid StructuredOutput call.
    json_schema: FrozenDict | None = None
    #: DEC-SET-1: the memory files' block, added to the process's first prompt.
    memory: str | None = None
    #: DEC-CLI-5: the dynamic block, when it moved into the first prompt.
    first_context: str | None = None
    #: DEC-TURN-3: the ``Agent`` tool, when offered.
    agents: AgentSetup | None = None


def _random_uuid() -> str:
    return str(uuid.uuid4())


class EnginePorts(Struct, frozen=True, kw_only=True):
    """Every call the engine makes out of the domain: the permission gate,
    the session-state publisher, the record sink, the id and time sources,
    the tool-progress watch and the live MCP tools and their media."""

    gate: PermissionGate
    state: StatePublisher
    emit: RecordSink
    #: Record uuids (and the new session id of ``/clear``).
    new_uuid: Callable[[], str]
    clock: Callable[[], float] = time.monotonic
    #: Seconds since the epoch, for the ledger's start and end times.
    wall_clock: Callable[[], float] = time.time
    progress: ProgressWatch = no_progress
    #: Transcript ids of history messages (their own source: record ids stay as they were).
    message_ids: Callable[[], str] = _random_uuid
    #: DEC-SET-2: MCP tools join as their servers connect and leave with them.
    live_tools: Callable[[], Sequence[ToolRunner]] | None = None
    #: DEC-SET-2: holds a model request while MCP servers make their first
    #: connection (bounded; returns at once on cancel).
    live_tools_ready: Callable[[CancelScope], None] | None = None
    #: DECISIONS section 8: holds the next ``stream_event`` while too many
    #: wait for stdout (bounded; returns at once on cancel).
    stream_room: Callable[[CancelScope], None] | None = None
    #: WIRE-022: images of a tool's result, for the provider only.
    tool_media: Callable[[str], tuple[Block, ...]] | None = None
    #: DECISIONS section 3: the session's hooks; None when none can be defined.
    hooks: HookPort | None = None
    #: DEC-PROFILE-2 (``sdk`` ``set_model``): the model the next request runs,
    #: asked before each one; None keeps the configured model.
    live_model: Callable[[], str] | None = None
    #: DEC-TURN-3: where background subagents run (None: they run in the foreground).
    tasks: WorkLauncher | None = None
    #: DEC-PROFILE-2 file checkpoints: a user message's turn begins (its uuid,
    #: as the replayed ``user`` record names it); None when none are kept.
    begin_message: Callable[[str], None] | None = None
