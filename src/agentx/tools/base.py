"""The built-in tool interface (DEC-TURN-3) and its shared input and output helpers.

A tool validates its own input: bad input comes back as an ``is_error``
:class:`ToolOutput` naming the problem, never as an exception (only
:class:`~agentx.providers.base.Cancelled` escapes ``run``). Output is capped
so that the ``user`` record carrying it stays far below the 1 MiB line limit
of Claude Code's SDK clients (DEC-COMPAT-3).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from msgspec import Struct, field

from agentx.messages.permission_rules import Decision, Mode, PermissionRules
from agentx.providers.base import Cancelled, CancelToken, ToolSpec, Usage
from agentx.tools.process import ChildProcesses

if TYPE_CHECKING:
    from agentx.sandbox.shell import Sandbox
    from agentx.turns.background import BackgroundLauncher

#: Cap on a tool result's content, measured as JSON-escaped UTF-8 (DEC-COMPAT-3).
MAX_OUTPUT_BYTES: Final = 256 * 1024


class PathAccess(Protocol):
    """DEC-PERM-PATH: what one tool call may open while it runs."""

    def check(self, path: Path, named: tuple[Path, ...] = ()) -> Decision:
        """The verdict for a resolved path (``allow``, ``deny`` or ``ask``);
        ``named`` are its spellings before symlinks were followed."""


class FileCheckpoints(Protocol):
    """DEC-PROFILE-2: the session's file checkpoints, as the one write path
    (:func:`agentx.tools.fsaccess.replace_in`) sees them."""

    def changing(self, dir_fd: int, name: str, path: Path) -> AbstractContextManager[None]:
        """Held while ``name`` in ``dir_fd`` (the resolved ``path``) is
        replaced; keeps its prior state first. Raises ``OSError`` when that
        state cannot be recorded: the change must not happen then."""


class CallAccess(Struct, frozen=True, kw_only=True):
    """The session's rules, mode and boundary plus the paths granted to one call."""

    tool_name: str
    rules: PermissionRules
    mode: Mode
    cwd: Path
    add_dirs: tuple[Path, ...] = ()
    granted: tuple[Path, ...] = ()
    granted_named: tuple[Path, ...] = ()

    def check(self, path: Path, named: tuple[Path, ...] = ()) -> Decision:
        from agentx.messages.permission_decisions import admit_path  # noqa: PLC0415 - the first tool call (DEC-CLI-3)

        return admit_path(
            self.tool_name,
            path,
            rules=self.rules,
            mode=self.mode,
            cwd=self.cwd,
            add_dirs=self.add_dirs,
            granted=self.granted,
            granted_named=self.granted_named,
            named=named,
        )


class ToolContext(Struct, frozen=True, kw_only=True):
    """Where a tool runs: the session cwd, the ``--add-dir`` roots and the environment.

    ``tool_use_id`` names the call being run; ``background`` starts finite
    background work (``Bash`` ``run_in_background``, DEC-TURN-3) and is None
    where the session offers none. ``access`` is the call's path policy
    (DEC-PERM-PATH); without one a file tool may open only what resolves
    inside the cwd and the ``--add-dir`` roots. ``children`` is the session's
    registry of child process groups (a context of its own when none is given).
    """

    cwd: Path
    add_dirs: tuple[Path, ...] = ()
    env: Mapping[str, str]
    tool_use_id: str | None = None
    background: BackgroundLauncher | None = None
    access: PathAccess | None = None
    children: ChildProcesses = field(default_factory=ChildProcesses)
    #: DEC-PERM-BASH-5: the session's Bash sandbox (None: commands run unconfined).
    sandbox: Sandbox | None = None
    #: DEC-PROFILE-2: the session's file checkpoints (None: not kept).
    checkpoints: FileCheckpoints | None = None
    #: WIRE-012: where a tool's own model call (``WebSearch``'s sub-request)
    #: reports its usage and the model that served it, to count into the turn.
    usage: Callable[[Usage, str], None] | None = None


#: The file tools that write: with the sandbox on they write only where Bash may.
WRITING_TOOLS: Final = frozenset({"Write", "Edit", "NotebookEdit"})


class SandboxedWrites(Struct, frozen=True):
    """DEC-PERM-BASH-5: the sandbox's write decision in front of the call's
    own, so Write/Edit and a sandboxed Bash never disagree on a path."""

    inner: PathAccess
    sandbox: Sandbox

    def check(self, path: Path, named: tuple[Path, ...] = ()) -> Decision:
        if not self.sandbox.may_write(path):
            return Decision(
                behavior="deny",
                source="sandbox",
                reason="the sandbox keeps this path read-only for every tool",
            )
        return self.inner.check(path, named)


def path_access(ctx: ToolContext, tool_name: str) -> PathAccess:
    """The call's path policy, or the bare boundary when none was bound; for
    a writing tool behind the sandbox's write decision when it is on."""
    access = _call_access(ctx, tool_name)
    if ctx.sandbox is not None and tool_name in WRITING_TOOLS:
        return SandboxedWrites(access, ctx.sandbox)
    return access


def _call_access(ctx: ToolContext, tool_name: str) -> PathAccess:
    if ctx.access is not None:
        return ctx.access
    return CallAccess(
        tool_name=tool_name,
        rules=PermissionRules(),
        mode="default",
        cwd=ctx.cwd.resolve(),
        add_dirs=tuple(d.resolve() for d in ctx.add_dirs),
    )


class ToolOutput(Struct, frozen=True, kw_only=True):
    """The ``tool_result`` content; built through :func:`output` so it is capped."""

    content: str
    is_error: bool = False


class ToolInputError(ValueError):
    """Raised by the input helpers; :func:`invalid_input` turns it into a result."""


class Tool(Protocol):
    """One built-in tool (DEC-TURN-3)."""

    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> ToolSpec:
        """The name, description and JSON Schema offered to the model."""

    @property
    def read_only(self) -> bool:
        """True when the tool never changes files or runs programs (DEC-PERM-MODE)."""

    def summarize(self, input: Mapping[str, Any]) -> str:
        """A safe one-line description for the permission prompt (WIRE-PERM-003).

        May raise on bad input; callers then fall back to the tool name.
        """

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        """The resolved paths the call touches, for the permission boundary (DEC-TURN-3).

        A file tool also offers ``named_paths(input, cwd)``: the same paths as
        spelled (:func:`lexical`), for deny and ask rules (DEC-PERM-PATH).
        """

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        """Do the work; raise only :class:`Cancelled`."""


def encoded_size(text: str) -> int:
    """Bytes ``text`` takes inside an outbound JSON string (UTF-8, escapes counted)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


def output(
    content: str, *, is_error: bool = False, limit: int = MAX_OUTPUT_BYTES, dropped: int = 0
) -> ToolOutput:
    """Build a :class:`ToolOutput`, truncating content past ``limit`` with a note.

    Content of exactly ``limit`` encoded bytes is kept whole; longer content
    keeps the longest prefix that fits together with the note. ``dropped``
    counts bytes the caller already left out (a capped capture): when it is
    positive the note is always added.
    """
    size = encoded_size(content)
    if size <= limit and not dropped:
        return ToolOutput(content=content, is_error=is_error)
    total = size + dropped
    note = f"\n[output truncated: {total} bytes in total, {limit} bytes shown at most]"
    budget = limit - encoded_size(note)
    low, high = 0, min(len(content), budget)
    while low < high:  # the longest prefix whose encoding fits the budget
        mid = (low + high + 1) // 2
        if encoded_size(content[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    return ToolOutput(content=content[:low] + note, is_error=is_error)


def error(message: str) -> ToolOutput:
    return output(message, is_error=True)


def check_cancel(cancel: CancelToken) -> None:
    if cancel.is_set():
        raise Cancelled


# --- input helpers (closed schemas) -----------------------------------------


def check_members(input: Mapping[str, Any], spec: ToolSpec) -> None:
    """Reject members the tool's schema does not declare, and missing required ones."""
    schema = spec.input_schema
    declared = set(schema["properties"])
    for member in input:
        if member not in declared:
            raise ToolInputError(f"unexpected parameter {member!r}")
    for member in schema.get("required", ()):
        if member not in input:
            raise ToolInputError(f"missing required parameter {member!r}")


def get_str(input: Mapping[str, Any], name: str, *, default: str | None = None) -> str:
    value = input.get(name, default)
    if not isinstance(value, str):
        raise ToolInputError(f"parameter {name!r} must be a string")
    return value


def get_optional_str(input: Mapping[str, Any], name: str) -> str | None:
    value = input.get(name)
    if value is not None and not isinstance(value, str):
        raise ToolInputError(f"parameter {name!r} must be a string")
    return value


def get_int(
    input: Mapping[str, Any], name: str, *, default: int, minimum: int, maximum: int | None = None
) -> int:
    value = input.get(name, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolInputError(f"parameter {name!r} must be an integer")
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else f" and at most {maximum}"
        raise ToolInputError(f"parameter {name!r} must be at least {minimum}{upper}")
    return value


def get_bool(input: Mapping[str, Any], name: str) -> bool:
    value = input.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolInputError(f"parameter {name!r} must be a boolean")
    return value


def resolve(raw: str, cwd: Path) -> Path:
    """Resolve a tool's path argument against the session cwd (DEC-TURN-3).

    Symlinks are followed, so a link inside the cwd that points out of it is
    seen as the outside path it is.
    """
    if not raw or "\0" in raw:
        raise ToolInputError("path must be a non-empty string without NUL")
    try:
        return (cwd / Path(raw).expanduser()).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolInputError(f"cannot resolve path: {exc}") from None


def lexical(raw: str, cwd: Path) -> Path:
    """A path argument as the call spells it: absolute and normalized, no
    symlink followed (what deny and ask rules also match, DEC-PERM-PATH)."""
    if not raw or "\0" in raw:
        raise ToolInputError("path must be a non-empty string without NUL")
    return Path(os.path.normpath(cwd / Path(raw).expanduser()))


def display(path: Path | str) -> str:
    """A path as shown to the model: undecodable bytes and control characters escaped.

    A name with a newline cannot forge a ``path:line:text`` row, and one with
    bytes that are not UTF-8 cannot break the record's encoding.
    """
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def invalid_input(tool: str, exc: ToolInputError) -> ToolOutput:
    return error(f"{tool}: invalid input: {exc}")


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def path_key(self) -> str: ...


class OnePathTool:
    """A file tool of one path, the input member :attr:`path_key` (Read,
    Write, Edit, NotebookEdit): its prompt summary, its resolved path for the
    boundary and its spelling for deny and ask rules (DEC-PERM-PATH)."""

    path_key: ClassVar[str] = "file_path"

    def summarize(self: _Named, input: Mapping[str, Any]) -> str:
        return f"{self.name} {get_str(input, self.path_key)}"

    def paths(self: _Named, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (resolve(get_str(input, self.path_key), cwd),)

    def named_paths(self: _Named, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (lexical(get_str(input, self.path_key), cwd),)
