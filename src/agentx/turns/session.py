"""What the pieces of one session's turn engine share.

:class:`TurnSession` holds the configuration, the provider, the ports, the
conversation history, the session identity, the tool table and the session's
spend; the model call, the tool calls, the compaction and the local commands
each read and update the session through it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from msgspec import Struct, field

from agentx.messages.context_usage import context_usage, estimate_tokens
from agentx.messages.frozen import FrozenDict
from agentx.providers.base import ProviderClient, ToolSpec, Usage
from agentx.sessions.history import History
from agentx.sessions.identity import SessionIdentity
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import EngineConfig, EnginePorts, ToolRunner
from agentx.turns.results import SessionSpend, TurnState, token_usage, turn_result


class ToolTable:
    """The tools of one model call: the built-ins, the live MCP tools, then
    the engine's own (``Agent``, answered by name and by its aliases).

    Built on first use, not when the engine starts: a built-in tool's module
    loads when its spec is first offered (:mod:`agentx.tools.registry`,
    DEC-CLI-3), so none loads before the ``initialize`` response.
    """

    def __init__(
        self,
        tools: Sequence[ToolRunner],
        live_tools: Callable[[], Sequence[ToolRunner]] | None,
        live_ready: Callable[[CancelScope], None] | None = None,
    ) -> None:
        self._static_tools = tuple(tools)
        self._live_tools = live_tools
        self._live_ready = live_ready
        self._specs: tuple[ToolSpec, ...] = ()
        self._live: tuple[ToolRunner, ...] = ()
        #: Specs the engine answers itself (``StructuredOutput``), offered last.
        self._extra: tuple[ToolSpec, ...] = ()
        #: Runners the engine provides (DEC-TURN-3: the ``Agent`` tool).
        self._own: tuple[ToolRunner, ...] = ()
        self._named: dict[str, ToolRunner] = {}
        self._chars = 0
        self._built = False

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is offered, in order."""
        self._build_once()
        return self._specs

    @property
    def named(self) -> dict[str, ToolRunner]:
        self._build_once()
        return self._named

    @property
    def chars(self) -> int:
        """Characters of the tool specs, for the context estimate."""
        self._build_once()
        return self._chars

    @property
    def static_tools(self) -> tuple[ToolRunner, ...]:
        """The built-in tools (a subagent's table starts from them)."""
        return self._static_tools

    @property
    def live_tools(self) -> Callable[[], Sequence[ToolRunner]] | None:
        """Where the live MCP tools come from."""
        return self._live_tools

    def set_own(self, runners: tuple[ToolRunner, ...]) -> None:
        """The engine's own runners, offered after the tools; each is also
        answered by the names in its ``aliases``; the next use rebuilds."""
        self._own = runners
        self._built = False

    def set_extra(self, specs: tuple[ToolSpec, ...]) -> None:
        """The specs offered after the tools; the next use rebuilds the table."""
        self._extra = specs
        self._built = False

    def _build_once(self) -> None:
        if not self._built:
            self.refresh()

    def refresh(self, scope: CancelScope | None = None) -> None:
        """Rebuilt only when the live set changed (tools are shared objects, so
        identity decides): most calls reuse the last call's table and specs.
        With the model call's ``scope``, first wait (bounded) for the MCP
        servers' first connections (DEC-SET-2)."""
        if scope is not None and self._live_ready is not None:
            self._live_ready(scope)
        live = tuple(self._live_tools()) if self._live_tools is not None else ()
        previous = self._live
        if self._built and len(live) == len(previous) and all(map(operator.is_, live, previous)):
            return
        self._live = live
        tools = (*self._static_tools, *live, *self._own)
        # DEC-TURN-3: a tool's earlier names (Claude Code's aliases) reach it too.
        aliases = {alias: tool for tool in tools for alias in getattr(tool, "aliases", ())}
        self._named = {**aliases, **{tool.name: tool for tool in tools}}
        self._specs = (*(tool.spec for tool in tools), *self._extra)
        self._chars = sum(
            len(str(spec.input_schema)) + len(spec.description) for spec in self._specs
        )
        self._built = True


class LivePrompt:
    """The session's system prompt: the start's, until the ``sdk`` profile's
    ``initialize`` sets the client's (DEC-PROFILE-2, before any turn runs).
    ``first_context`` is the dynamic block the first user message carries
    when the dynamic sections are excluded; ``plan_instructions`` replace the
    plan mode workflow (``planModeInstructions``)."""

    def __init__(self, system: str, first_context: str | None) -> None:
        self.system = system
        self.first_context = first_context
        self.plan_instructions: str | None = None


class TurnSession(Struct, frozen=True, kw_only=True):
    config: EngineConfig
    prompt: LivePrompt
    provider: ProviderClient
    ports: EnginePorts
    history: History
    identity: SessionIdentity
    tools: ToolTable
    spend: SessionSpend
    #: Hook context for the next prompt's request (``SessionStart``, DECISIONS section 3).
    pending_context: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.identity.id

    def opening(self) -> list[str]:
        """What a conversation's first prompt carries besides its text: the
        dynamic block moved out of the system prompt, then the memory files
        (DEC-SET-1); ``/clear`` starts a conversation that gets them again."""
        return [text for text in (self.prompt.first_context, self.config.memory) if text]

    def context_estimate(self) -> tuple[int, int, int]:
        """Token estimates for the system prompt, the tools and the messages
        (the history keeps its character count current: no rescan per call)."""
        return (
            estimate_tokens(len(self.prompt.system)),
            estimate_tokens(self.tools.chars),
            estimate_tokens(self.history.text_chars),
        )

    def context_usage(self) -> FrozenDict:
        """``get_context_usage`` and ``/context``: one estimate of the context."""
        system, tools, messages = self.context_estimate()
        return context_usage(
            system_tokens=system,
            tools_tokens=tools,
            messages_tokens=messages,
            max_tokens=self.config.context_window,
            model=self.config.model,
        )

    def account(
        self, st: TurnState, opened: float, usage: Usage | None, *, model: str | None = None
    ) -> None:
        """A model call's time and usage, for the turn's result and ``/cost``;
        ``model`` is the one that served it (the session's by default)."""
        elapsed = self.ports.clock() - opened
        st.api_seconds += elapsed
        self.spend.api_seconds += elapsed
        # WIRE-012: a request without reported usage makes the cost unknown.
        tokens = None if usage is None else token_usage(usage)
        served = model or self.config.model
        st.accounting.add(served, tokens)
        self.spend.accounting.add(served, tokens)

    def result(self, st: TurnState, *, prompt_uuid: str | None) -> FrozenDict:
        """The turn's one result (DEC-TURN-1)."""
        return turn_result(
            st,
            now=self.ports.clock(),
            session_id=self.session_id,
            uuid=self.ports.new_uuid(),
            prompt_uuid=prompt_uuid,
        )
