"""The session's permission policy and the tool adapter the turn engine drives.

:class:`SessionPolicy` holds the session's rules and mode (settings sources
merged, DEC-SET-1, plus WIRE-PERM-022 session updates) and asks the pure
:func:`agentx.messages.permission_decisions.evaluate` for each tool use
(DEC-PERM-MODE). :class:`BoundTool` binds a built-in tool to the session's
:class:`~agentx.tools.base.ToolContext`.

DEC-PERM-PATH: the resolved paths a call was evaluated with are its grant.
When the call runs, its tool checks every path it opens against the grant
and the session's rules (:meth:`SessionPolicy.access`), so a symlink
swapped between the permission check and the run, or a walk reaching
through a link, cannot take it past what was allowed. A call whose input
the host or a hook replaced runs with no grant: only what the boundary and
the rules admit on their own.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from msgspec.structs import replace

from agentx.messages.frozen import FrozenDict
from agentx.messages.permission_rules import Mode, PermissionRules, Rule, anchored
from agentx.providers.base import ToolSpec, Usage
from agentx.tools.base import CallAccess, Tool, ToolContext
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PolicyDecision, ToolRunner

if TYPE_CHECKING:
    from agentx.messages.permission_updates import PermissionUpdate

#: Evaluated calls whose grant is kept until they run; the oldest goes first.
MAX_PENDING_GRANTS: Final = 256


class BoundTool:
    """A built-in tool bound to the session's cwd, extra roots and environment."""

    __slots__ = ("_ctx", "_policy", "_tool")

    def __init__(self, tool: Tool, ctx: ToolContext, policy: SessionPolicy) -> None:
        self._tool = tool
        self._ctx = ctx
        self._policy = policy

    @property
    def name(self) -> str:
        return self._tool.name

    @property
    def spec(self) -> ToolSpec:
        return self._tool.spec

    @property
    def tool(self) -> Tool:
        return self._tool

    @property
    def aliases(self) -> tuple[str, ...]:
        """Earlier names of the tool that a ``tool_use`` may carry (DEC-TURN-3)."""
        aliases: tuple[str, ...] = getattr(self._tool, "aliases", ())
        return aliases

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        return self._tool.summarize(tool_input)

    def network_target(self, tool_input: Mapping[str, Any]) -> tuple[str, int] | None:
        """WIRE-PERM-004: the host and port a network tool will reach, if any."""
        target = getattr(self._tool, "network_target", None)
        return None if target is None else target(tool_input)

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        return self.execute_counted(tool_input, cancel, tool_use_id=tool_use_id, usage=None)

    def execute_counted(
        self,
        tool_input: FrozenDict,
        cancel: CancelScope,
        *,
        tool_use_id: str,
        usage: Callable[[Usage, str], None] | None,
    ) -> tuple[str, bool]:
        """:meth:`execute`, the tool's own model calls reporting their usage
        to ``usage`` (WIRE-012: it counts into the turn)."""
        access = self._policy.access(self._tool.name, tool_input, read_only=self._tool.read_only)
        ctx = replace(self._ctx, tool_use_id=tool_use_id, access=access, usage=usage)
        result = self._tool.run(tool_input, ctx, cancel)
        return result.content, result.is_error


class SessionPolicy:
    """Rules and mode for one session; updated by allow answers (WIRE-PERM-022).

    The turn engine evaluates on its worker thread while an
    ``apply_flag_settings`` may replace the rules from the dispatcher, so the
    state is swapped under a lock as a whole.
    """

    def __init__(
        self,
        *,
        rules: PermissionRules,
        mode: Mode,
        cwd: Path,
        add_dirs: tuple[Path, ...],
        read_dirs: Callable[[], tuple[Path, ...]] | None = None,
        auto_allows_bash: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        #: DEC-PERM-BASH-5: whether a Bash input runs confined under
        #: ``autoAllowBashIfSandboxed`` (None: the sandbox is off).
        self._auto_allows_bash = auto_allows_bash
        self._lock = threading.Lock()
        self._rules = rules
        self._mode: Mode = mode
        self._cwd = cwd.resolve()
        self._add_dirs = tuple(d.resolve() for d in add_dirs)
        #: DEC-TURN-3: folders a read-only tool may read as if inside the
        #: boundary (the session's background task output), never written;
        #: found on first use (a temp folder's name loads tempfile).
        self._find_read_dirs = read_dirs
        self._read_dirs: tuple[Path, ...] | None = None
        #: DEC-PERM-PATH grants: (tool, input, resolved paths, named paths) -> runs due.
        self._grants: Counter[tuple[str, FrozenDict, tuple[Path, ...], tuple[Path, ...]]] = (
            Counter()
        )

    @property
    def mode(self) -> Mode:
        with self._lock:
            return self._mode

    def replace_rules(self, rules: PermissionRules) -> None:
        """Live settings (``apply_flag_settings``): new source rules, session mode kept."""
        with self._lock:
            self._rules = rules

    def _paths(self, tool: ToolRunner, tool_input: FrozenDict) -> tuple[Any, Any]:
        """The resolved and the typed paths a call touches (DEC-PERM-PATH)."""
        inner = tool.tool if isinstance(tool, BoundTool) else None
        named_of = getattr(inner, "named_paths", None)
        try:
            paths = inner.paths(tool_input, self._cwd) if inner is not None else ()
            named = named_of(tool_input, self._cwd) if named_of is not None else ()
        except Exception:  # an unparsable path is the tool's own input error later
            return (), ()
        return paths, named

    def denied_before_run(self, tool: ToolRunner, tool_input: FrozenDict) -> str | None:
        """DEC-SET-1: every deny rule on the input the call runs with, whoever
        supplied it; the reason when one denies."""
        from agentx.messages.permission_decisions import deny_before_run  # noqa: PLC0415 - the first tool call (DEC-CLI-3)

        with self._lock:
            rules = self._rules
        paths, named = self._paths(tool, tool_input)
        decision = deny_before_run(
            tool.name, tool_input, rules=rules, cwd=self._cwd, paths=paths, named=named
        )
        return None if decision is None else decision.reason

    def evaluate(self, tool: ToolRunner, tool_input: FrozenDict) -> PolicyDecision:
        # DEC-CLI-3: the decision core loads with the first tool call, not at start.
        from agentx.messages.permission_decisions import evaluate  # noqa: PLC0415

        with self._lock:
            rules, mode = self._rules, self._mode
        inner = tool.tool if isinstance(tool, BoundTool) else None
        paths, named = self._paths(tool, tool_input)
        # DEC-PERM-MODE: an engine tool says itself (``Agent``: its
        # subagent's own tool uses are each evaluated; ``ToolSearch`` only
        # reads the session's tool list).
        read_only = (
            inner.read_only if inner is not None else getattr(tool, "read_only", False) is True
        )
        decision = evaluate(
            tool.name,
            tool_input,
            read_only=read_only,
            paths=paths,
            rules=rules,
            mode=mode,
            cwd=self._cwd,
            add_dirs=self._roots(read_only=read_only),
            named=named,
            bash_sandboxed=tool.name == "Bash"
            and self._auto_allows_bash is not None
            and self._auto_allows_bash(tool_input),
            bash_edits=tool.name == "Bash"
            and mode in ("acceptEdits", "auto")
            and self._edits_inside(tool_input, rules),
        )
        if paths and decision.behavior != "deny":
            with self._lock:
                if len(self._grants) >= MAX_PENDING_GRANTS:
                    del self._grants[next(iter(self._grants))]
                self._grants[(tool.name, tool_input, paths, named)] += 1
        return PolicyDecision(
            behavior=decision.behavior,
            source=decision.source,
            reason=decision.reason,
            blocked_path=decision.blocked_path,
        )

    def _edits_inside(self, tool_input: FrozenDict, rules: PermissionRules) -> bool:
        """DEC-PERM-MODE ``acceptEdits``: the line is file commands only and
        the file tools would be allowed to edit (and read) every path it
        names, after symlinks (DEC-PERM-PATH); a working directory itself is
        never removed or moved."""
        command = tool_input.get("command")
        if not isinstance(command, str):
            return False
        from agentx.messages.bash.accept_edits import edit_operands  # noqa: PLC0415
        from agentx.messages.permission_decisions import evaluate  # noqa: PLC0415

        operands = edit_operands(command)
        if not operands:
            return False
        roots = (self._cwd, *self._add_dirs)
        for operand in operands:
            if "\0" in operand.path or not operand.path:
                return False
            joined = os.path.join(self._cwd, operand.path)
            resolved = Path(os.path.realpath(joined))
            named = Path(os.path.normpath(joined))
            if operand.removes and (resolved in roots or named in roots):
                return False
            for tool_name, read_only in (("Edit", False), ("Read", True)):
                decision = evaluate(
                    tool_name,
                    {"file_path": operand.path},
                    read_only=read_only,
                    paths=(resolved,),
                    rules=rules,
                    mode="acceptEdits",
                    cwd=self._cwd,
                    add_dirs=self._add_dirs,
                    named=(named,),
                )
                if decision.behavior != "allow":
                    return False
        return True

    def _roots(self, *, read_only: bool) -> tuple[Path, ...]:
        """The ``--add-dir`` roots, and for a read-only tool the read-only
        folders too (DEC-TURN-3: the model reads its background task's
        output file as Claude Code's does, unasked)."""
        if not read_only or self._find_read_dirs is None:
            return self._add_dirs
        if self._read_dirs is None:
            self._read_dirs = tuple(d.resolve() for d in self._find_read_dirs())
        return (*self._add_dirs, *self._read_dirs)

    def access(
        self, tool_name: str, tool_input: FrozenDict, *, read_only: bool = False
    ) -> CallAccess:
        """The path policy one call runs with: its grant, if it was evaluated
        with this very input, plus the session's current rules and mode."""
        with self._lock:
            granted: tuple[Path, ...] = ()
            granted_named: tuple[Path, ...] = ()
            for key in self._grants:
                if key[0] == tool_name and key[1] == tool_input:
                    granted, granted_named = key[2], key[3]
                    self._grants[key] -= 1
                    if self._grants[key] <= 0:
                        del self._grants[key]
                    break
            return CallAccess(
                tool_name=tool_name,
                rules=self._rules,
                mode=self._mode,
                cwd=self._cwd,
                add_dirs=self._roots(read_only=read_only),
                granted=granted,
                granted_named=granted_named,
            )

    def suggestions(self, tool: ToolRunner, tool_input: FrozenDict) -> tuple[PermissionUpdate, ...]:
        """WIRE-PERM-022: offer to allow this tool for the rest of the session."""
        # DEC-CLI-3: the update types load with the first ask or live update.
        from agentx.messages.permission_updates import AddRules  # noqa: PLC0415

        return (AddRules(behavior="allow", rules=(Rule(tool_name=tool.name),)),)

    def apply(self, updates: tuple[Any, ...]) -> None:
        with self._lock:
            for update in updates:
                self._apply_one(update)

    def _apply_one(self, update: PermissionUpdate) -> None:
        from agentx.messages.permission_updates import SetMode  # noqa: PLC0415 - DEC-CLI-3

        if isinstance(update, SetMode):
            self._mode = update.mode
        else:
            # DEC-PERM-PATH: a session rule's ``/`` is the cwd, ``~/`` the home directory.
            try:
                home: str | None = str(Path.home())
            except RuntimeError:
                home = None
            rules = tuple(anchored(r, root=str(self._cwd), home=home) for r in update.rules)
            self._rules = self._rules.added(update.behavior, rules)
