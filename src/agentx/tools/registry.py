"""The built-in tool set and the ``--tools`` selection (DEC-TURN-3, DEC-CLI-5).

The registry names each built-in tool by its name, the module that defines
it and its class, and imports nothing of them: a tool's module is imported,
and its class instantiated, the first time the tool is used (its input
summarized or run, or its spec offered when the tool builds it). The fixed
specs the model is offered come from :mod:`agentx.tools.specs`, which the
tool classes take theirs from. A session that never calls a tool never
loads one, and none loads before the ``initialize`` response (DEC-CLI-3,
start-up time). Adding a tool is one :class:`BuiltinTool` line in
:data:`BUILTIN` and its spec in :mod:`agentx.tools.specs` (CONTRIBUTING.md,
"Adding a tool").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from msgspec import Struct

from agentx.once import Once

if TYPE_CHECKING:
    from agentx.providers.base import CancelToken, ToolSpec
    from agentx.tools.base import Tool, ToolContext, ToolOutput


class BuiltinTool(Struct, frozen=True):
    """One built-in tool before its module is loaded: the name the model and
    ``system/init`` see, and where its class lives."""

    name: str
    module: str
    class_name: str
    #: Claude Code's earlier names of the tool: a ``tool_use`` by one runs it.
    aliases: tuple[str, ...] = ()


#: Every built-in tool, in the order ``system/init`` lists them and the model
#: is offered them.
BUILTIN: Final = (
    BuiltinTool("Bash", "agentx.tools.bash", "BashTool"),
    BuiltinTool("Glob", "agentx.tools.search", "GlobTool"),
    BuiltinTool("Grep", "agentx.tools.search", "GrepTool"),
    BuiltinTool("Read", "agentx.tools.files", "ReadTool"),
    BuiltinTool("Edit", "agentx.tools.files", "EditTool"),
    BuiltinTool("Write", "agentx.tools.files", "WriteTool"),
    BuiltinTool("NotebookEdit", "agentx.tools.notebook", "NotebookEditTool"),
    BuiltinTool("WebFetch", "agentx.tools.webfetch", "WebFetchTool"),
    BuiltinTool("TaskStop", "agentx.tools.taskstop", "TaskStopTool", ("KillShell", "KillBash")),
    BuiltinTool("AskUserQuestion", "agentx.tools.questions", "AskUserQuestionTool"),
)
BUILTIN_NAMES: Final = tuple(entry.name for entry in BUILTIN)


def _built(entry: BuiltinTool, kwargs: Mapping[str, Any]) -> Tool:
    """``entry``'s class, imported and instantiated with ``kwargs``."""
    tool: Tool = getattr(import_module(entry.module), entry.class_name)(**kwargs)
    if tool.name != entry.name:
        raise RuntimeError(
            f"{entry.module}.{entry.class_name} is named {tool.name!r},"
            f" the registry says {entry.name!r}"
        )
    return tool


class LazyTool:
    """A built-in tool (the :class:`~agentx.tools.base.Tool` interface) whose
    class is imported and instantiated on first use, once, whichever thread
    gets there first. ``name`` never loads it; every other attribute,
    including the optional ones a caller probes with ``getattr``
    (``named_paths``, ``network_target``), is the loaded tool's."""

    __slots__ = ("_entry", "_tool")

    def __init__(self, entry: BuiltinTool, **kwargs: Any) -> None:
        """``kwargs`` go to the class when it is built (a session's own tool)."""
        self._entry = entry
        self._tool = Once(lambda: _built(entry, kwargs))

    def __repr__(self) -> str:
        return f"LazyTool({self._entry.name!r})"

    @property
    def name(self) -> str:
        return self._entry.name

    @property
    def aliases(self) -> tuple[str, ...]:
        """Earlier names of the tool (known without loading it, DEC-TURN-3)."""
        return self._entry.aliases

    @property
    def loaded(self) -> bool:
        """Whether the tool's module has been imported for this tool."""
        return self._tool.peek() is not None

    def load(self) -> Tool:
        """The tool itself, imported and built on the first call."""
        return self._tool.get()

    @property
    def spec(self) -> ToolSpec:
        """The spec the model is offered: a fixed spec from
        :mod:`agentx.tools.specs`, without loading the tool (the first turn
        offers every tool and runs none, DEC-CLI-3); a spec the tool builds
        (``Skill``'s lists the session's skills) from the loaded tool."""
        tool = self._tool.peek()
        if tool is not None:
            return tool.spec
        from agentx.tools.specs import STATIC  # noqa: PLC0415 - DEC-CLI-3: at the first turn

        spec = STATIC.get(self._entry.name)
        return spec if spec is not None else self.load().spec

    @property
    def read_only(self) -> bool:
        return self.load().read_only

    def summarize(self, input: Mapping[str, Any]) -> str:
        return self.load().summarize(input)

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return self.load().paths(input, cwd)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        return self.load().run(input, ctx, cancel)

    def __getattr__(self, attribute: str) -> Any:
        # Only attributes this class lacks get here: the tool's optional ones.
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.load(), attribute)


#: One shared handle per built-in tool: a tool loads once per process.
BUILTIN_TOOLS: Final = tuple(LazyTool(entry) for entry in BUILTIN)


#: The ``Agent`` tool's names (the engine's own tool, not a built-in here;
#: :data:`agentx.messages.agents.tools.AGENT_TOOL_NAMES`, kept off the start path).
AGENT_TOOL_NAMES: Final = frozenset({"Agent", "Task"})


def offers_agent(names: Sequence[str] | None) -> bool:
    """DEC-CLI-5: whether ``--tools`` keeps the ``Agent`` tool: by default,
    with ``default``, or when it names ``Agent`` (or ``Task``)."""
    if names is None or tuple(names) == ("default",):
        return True
    return any(name in AGENT_TOOL_NAMES for name in names)


def without_agent(names: Sequence[str] | None) -> Sequence[str] | None:
    """``--tools`` without the ``Agent`` names, for :func:`builtin_tools`."""
    return None if names is None else [name for name in names if name not in AGENT_TOOL_NAMES]


#: DEC-TURN-3: the ``Skill`` tool, one per session (it knows where the
#: session's skills are): :func:`skill_tool` builds its handle.
SKILL: Final = BuiltinTool("Skill", "agentx.tools.skill", "SkillTool")


def offers_skill(names: Sequence[str] | None) -> bool:
    """DEC-CLI-5: whether ``--tools`` keeps the ``Skill`` tool: by default,
    with ``default``, or when it names it."""
    return names is None or tuple(names) == ("default",) or SKILL.name in names


def skill_tool(cwd: Path, user_home: Path, sources: Sequence[str]) -> LazyTool:
    """The session's ``Skill`` tool; nothing is imported or read here."""
    return LazyTool(SKILL, cwd=cwd, user_home=user_home, sources=tuple(sources))


#: DEC-TURN-3: the ``WebSearch`` tool, one per session where the provider is
#: Anthropic-typed (it searches through the session's own client, DEC-AUTH-2):
#: :func:`web_search_tool` builds its handle.
WEB_SEARCH: Final = BuiltinTool("WebSearch", "agentx.tools.websearch", "WebSearchTool")
#: DEC-AUTH-2: the provider types whose API offers a native web search tool.
WEB_SEARCH_PROVIDERS: Final = frozenset({"anthropic"})


def offers_web_search(names: Sequence[str] | None, provider_type: str) -> bool:
    """DEC-CLI-5, DEC-TURN-3: whether ``WebSearch`` is offered: the provider
    has a native search tool and ``--tools`` keeps it (by default, with
    ``default``, or when it names it)."""
    if provider_type not in WEB_SEARCH_PROVIDERS:
        return False
    return names is None or tuple(names) == ("default",) or WEB_SEARCH.name in names


def web_search_tool(client: object) -> LazyTool:
    """The session's ``WebSearch`` tool over its provider client; nothing is
    imported here."""
    return LazyTool(WEB_SEARCH, client=client)


class UnknownToolError(ValueError):
    """A ``--tools`` name that is no built-in tool (a usage error, exit 2)."""


def builtin_tools(names: Sequence[str] | None = None) -> tuple[LazyTool, ...]:
    """The tools offered to the model: all by default, else those named (DEC-CLI-5).

    An empty ``names`` offers none; ``["default"]`` (Claude Code's spelling,
    which the Python Agent SDK passes for its tools preset) offers all. The
    result keeps the built-in order and has no duplicates; an unknown name
    raises :class:`UnknownToolError`. Nothing is imported here.
    """
    if names is None or tuple(names) == ("default",):
        return BUILTIN_TOOLS
    unknown = sorted(set(names) - {*BUILTIN_NAMES, SKILL.name, WEB_SEARCH.name})
    if unknown:
        raise UnknownToolError(
            f"unknown tool {unknown[0]!r} (built-in tools: {', '.join(BUILTIN_NAMES)})"
        )
    wanted = set(names)
    return tuple(tool for tool in BUILTIN_TOOLS if tool.name in wanted)
