"""One path policy for Read, Write, Edit, Glob and Grep (DEC-PERM-PATH).

Real files and real symlinks: a session policy evaluates each call (the ask
carries ``blocked_path``), then the bound tool runs it the way the turn
engine does, checking every path it opens against the call's grant.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.permission_rules import Mode, PermissionRules
from agentx.permissions.policy import MAX_PENDING_GRANTS, BoundTool, SessionPolicy
from agentx.tools.base import Tool, ToolContext
from agentx.tools.files import EditTool, ReadTool, WriteTool
from agentx.tools.search import GlobTool, GrepTool
from agentx.turns.cancel import CancelScope

SECRET = "root:SECRET-VALUE"
TOOLS: dict[str, Tool] = {
    "Read": ReadTool(),
    "Write": WriteTool(),
    "Edit": EditTool(),
    "Glob": GlobTool(),
    "Grep": GrepTool(),
}


class Box:
    """A cwd, an outside folder holding a secret, and an ``--add-dir`` folder."""

    def __init__(self, base: Path) -> None:
        base = base.resolve()
        self.cwd = base / "work"
        self.outside = base / "outside"
        self.extra = base / "extra"
        for folder in (self.cwd, self.outside, self.extra, self.cwd / "sub"):
            folder.mkdir()
        self.secret = self.outside / "id_rsa"
        self.secret.write_text(f"{SECRET}\n")
        (self.extra / "e.txt").write_text("root:extra\n")
        (self.cwd / "sub" / "in.txt").write_text("root:inside\n")
        (self.cwd / "pw").symlink_to(self.secret)
        (self.cwd / "od").symlink_to(self.outside)
        (self.cwd / "near").symlink_to(self.cwd / "sub" / "in.txt")

    def policy(self, *, mode: Mode = "default", **rules: tuple[str, ...]) -> SessionPolicy:
        return SessionPolicy(
            rules=PermissionRules.parse(**rules), mode=mode, cwd=self.cwd, add_dirs=(self.extra,)
        )

    def bound(self, name: str, policy: SessionPolicy) -> BoundTool:
        ctx = ToolContext(cwd=self.cwd, add_dirs=(self.extra,), env={})
        return BoundTool(TOOLS[name], ctx, policy)


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return Box(tmp_path)


def _evaluate_and_run(
    box: Box, name: str, tool_input: dict[str, Any], policy: SessionPolicy
) -> tuple[Any, tuple[str, bool]]:
    """Evaluate like the engine, then run as if the ask (if any) was approved."""
    frozen = freeze(tool_input)
    assert isinstance(frozen, FrozenDict)
    tool = box.bound(name, policy)
    decision = policy.evaluate(tool, frozen)
    return decision, tool.execute(frozen, CancelScope(), tool_use_id="t1")


def _edit(path: str) -> dict[str, Any]:
    return {"file_path": path, "old_string": "root:", "new_string": "ROOT:"}


# One row per tool and case: the input, then the expected blocked_path ("" when
# the call is inside the boundary), with the secret path spelled as "{secret}".
BLOCKED_ROWS = [
    ("Read", {"file_path": "pw"}, "symlinked-file"),
    ("Read", {"file_path": "od/id_rsa"}, "symlinked-dir"),
    ("Read", {"file_path": "{secret}"}, "absolute"),
    ("Read", {"file_path": "sub/../../outside/id_rsa"}, "dotdot"),
    ("Write", {"file_path": "pw", "content": "x"}, "symlinked-file"),
    ("Write", {"file_path": "od/id_rsa", "content": "x"}, "symlinked-dir"),
    ("Write", {"file_path": "{secret}", "content": "x"}, "absolute"),
    ("Write", {"file_path": "../outside/id_rsa", "content": "x"}, "dotdot"),
    ("Edit", _edit("pw"), "symlinked-file"),
    ("Edit", _edit("od/id_rsa"), "symlinked-dir"),
    ("Edit", _edit("{secret}"), "absolute"),
    ("Edit", _edit("../outside/id_rsa"), "dotdot"),
    ("Glob", {"pattern": "*", "path": "od"}, "symlinked-dir"),
    ("Glob", {"pattern": "od/*"}, "symlinked-dir-in-pattern"),
    ("Glob", {"pattern": "*", "path": "{outside}"}, "absolute"),
    ("Glob", {"pattern": "*", "path": "sub/../../outside"}, "dotdot"),
    ("Grep", {"pattern": "root:", "path": "pw", "output_mode": "content"}, "symlinked-file"),
    ("Grep", {"pattern": "root:", "path": "od", "output_mode": "content"}, "symlinked-dir"),
    ("Grep", {"pattern": "root:", "path": "{secret}", "output_mode": "content"}, "absolute"),
    ("Grep", {"pattern": "root:", "path": "../outside", "output_mode": "content"}, "dotdot"),
]


def _fill(box: Box, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v.format(secret=box.secret, outside=box.outside) if isinstance(v, str) else v
        for k, v in tool_input.items()
    }


@pytest.mark.parametrize(
    ("name", "tool_input", "case"), BLOCKED_ROWS, ids=[f"{r[0]}-{r[2]}" for r in BLOCKED_ROWS]
)
def test_outside_path_asks_with_blocked_path(
    box: Box, name: str, tool_input: dict[str, Any], case: str
) -> None:
    """Every tool asks with the resolved outside path; approved, it runs on it."""
    decision, (content, is_error) = _evaluate_and_run(
        box, name, _fill(box, tool_input), box.policy()
    )
    assert decision.behavior == "ask"
    assert decision.blocked_path in (str(box.secret), str(box.outside))
    assert not is_error, content


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Read", {"file_path": "{secret}"}),
        ("Write", {"file_path": "{secret}", "content": "x"}),
        ("Edit", _edit("{secret}")),
        ("Glob", {"pattern": "*", "path": "{outside}"}),
        ("Grep", {"pattern": "root:", "path": "{outside}", "output_mode": "content"}),
    ],
    ids=["Read", "Write", "Edit", "Glob", "Grep"],
)
def test_a_call_never_evaluated_cannot_reach_outside(
    box: Box, name: str, tool_input: dict[str, Any]
) -> None:
    """Input the host replaced after the ask carries no grant: refused at run time."""
    frozen = freeze(_fill(box, tool_input))
    assert isinstance(frozen, FrozenDict)
    content, is_error = box.bound(name, box.policy()).execute(
        frozen, CancelScope(), tool_use_id="t1"
    )
    assert is_error and "outside the working directories" in content
    assert SECRET not in content
    assert box.secret.read_text() == f"{SECRET}\n"


@pytest.mark.parametrize(
    ("name", "tool_input", "behavior"),
    [
        ("Read", {"file_path": "{extra}/e.txt"}, "allow"),
        ("Write", {"file_path": "{extra}/new.txt", "content": "x"}, "ask"),
        ("Edit", _edit("{extra}/e.txt"), "ask"),
        ("Glob", {"pattern": "*.txt", "path": "{extra}"}, "allow"),
        ("Grep", {"pattern": "root:", "path": "{extra}", "output_mode": "content"}, "allow"),
    ],
    ids=["Read", "Write", "Edit", "Glob", "Grep"],
)
def test_add_dir_is_inside_the_boundary(
    box: Box, name: str, tool_input: dict[str, Any], behavior: str
) -> None:
    """--add-dir paths never carry blocked_path; the mode decides as inside the cwd."""
    filled = {k: v.replace("{extra}", str(box.extra)) for k, v in tool_input.items()}
    decision, (content, is_error) = _evaluate_and_run(box, name, filled, box.policy())
    assert (decision.behavior, decision.blocked_path) == (behavior, None)
    assert not is_error, content


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Glob", {"pattern": "**/*"}),
        ("Grep", {"pattern": "root:", "output_mode": "content"}),
        ("Grep", {"pattern": "root:"}),
        ("Grep", {"pattern": "root:", "output_mode": "count"}),
    ],
    ids=["Glob", "Grep-content", "Grep-files", "Grep-count"],
)
def test_walk_skips_links_that_leave_the_boundary_and_says_so(
    box: Box, name: str, tool_input: dict[str, Any]
) -> None:
    decision, (content, is_error) = _evaluate_and_run(box, name, tool_input, box.policy())
    assert decision.behavior == "allow" and not is_error
    assert SECRET not in content and "id_rsa" not in content
    assert "2 entries not searched: they resolve outside the working directories" in content
    assert f"({box.cwd / 'od'}, {box.cwd / 'pw'})" in content
    # A link that stays inside is followed; the real file is listed too.
    assert str(box.cwd / "near") in content and str(box.cwd / "sub" / "in.txt") in content


def test_approved_outside_search_root_still_skips_links_beyond_it(box: Box) -> None:
    """Grep over an approved outside folder cannot follow a link further out."""
    elsewhere = box.cwd.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "key").write_text("root:FURTHER\n")
    (box.outside / "hop").symlink_to(elsewhere / "key")
    tool_input = {"pattern": "root:", "path": str(box.outside), "output_mode": "content"}
    decision, (content, _) = _evaluate_and_run(box, "Grep", tool_input, box.policy())
    assert decision.blocked_path == str(box.outside)
    assert SECRET in content  # approved
    assert "FURTHER" not in content and str(box.outside / "hop") in content


def test_bypass_mode_follows_links_everywhere(box: Box) -> None:
    tool_input = {"pattern": "root:", "output_mode": "content"}
    decision, (content, _) = _evaluate_and_run(
        box, "Grep", tool_input, box.policy(mode="bypassPermissions")
    )
    assert decision.behavior == "allow"
    assert f"{box.cwd / 'pw'}:1:{SECRET}" in content


@pytest.mark.parametrize("name", ["Read", "Edit", "Write", "Grep"])
def test_symlink_swapped_after_the_check_is_refused(box: Box, name: str) -> None:
    """TOCTOU: evaluated while ``link`` pointed inside, run after it was swapped."""
    link = box.cwd / "link"
    link.symlink_to(box.cwd / "sub" / "in.txt")
    inputs: dict[str, dict[str, Any]] = {
        "Read": {"file_path": "link"},
        "Edit": _edit("link"),
        "Write": {"file_path": "link", "content": "x"},
        "Grep": {"pattern": "root:", "path": "link", "output_mode": "content"},
    }
    frozen = freeze(inputs[name])
    assert isinstance(frozen, FrozenDict)
    policy = box.policy(mode="acceptEdits")
    tool = box.bound(name, policy)
    assert policy.evaluate(tool, frozen).behavior == "allow"
    link.unlink()
    link.symlink_to(box.secret)
    content, is_error = tool.execute(frozen, CancelScope(), tool_use_id="t1")
    assert is_error and "not granted to this call" in content
    assert SECRET not in content
    assert box.secret.read_text() == f"{SECRET}\n"


def test_intermediate_directory_swapped_for_a_link_is_not_followed(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checked path is opened component by component with O_NOFOLLOW: a
    directory replaced by a symlink between check and open fails the open."""
    from agentx.tools import fsaccess

    (box.cwd / "d").mkdir()
    (box.cwd / "d" / "id_rsa").write_text("root:harmless\n")
    checked = fsaccess.admitted

    def swap_after_check(path: Path, access: Any, named: tuple[Path, ...]) -> Path:
        result = checked(path, access, named)
        os.rename(box.cwd / "d", box.cwd / "d.old")
        (box.cwd / "d").symlink_to(box.outside)
        return result

    monkeypatch.setattr("agentx.tools.fsaccess.admitted", swap_after_check)
    result = ReadTool().run(
        {"file_path": "d/id_rsa"}, ToolContext(cwd=box.cwd, env={}), CancelScope()
    )
    assert result.is_error and SECRET not in result.content


def test_fifo_in_the_walk_does_not_hang_grep(box: Box) -> None:
    os.mkfifo(box.cwd / "pipe")
    result = GrepTool().run(
        {"pattern": "root:", "path": "."}, ToolContext(cwd=box.cwd, env={}), CancelScope()
    )
    assert not result.is_error and "pipe" not in result.content
    read = ReadTool().run({"file_path": "pipe"}, ToolContext(cwd=box.cwd, env={}), CancelScope())
    assert read.is_error and "not a regular file" in read.content


def test_link_loops_are_walked_once(box: Box) -> None:
    (box.cwd / "sub" / "up").symlink_to(box.cwd)
    (box.extra / "back").symlink_to(box.extra)
    (box.cwd / "x").symlink_to(box.extra)
    result = GlobTool().run(
        {"pattern": "**/*.txt"},
        ToolContext(cwd=box.cwd, add_dirs=(box.extra,), env={}),
        CancelScope(),
    )
    rows = result.content.splitlines()
    assert sorted(r for r in rows if not r.startswith("[")) == [
        str(box.cwd / "sub" / "in.txt"),
        str(box.cwd / "x" / "e.txt"),
    ]


@pytest.mark.parametrize(
    ("name", "raw", "shown"),
    [
        ("newline", "a\nb.txt", "a\\nb.txt"),
        ("dash", "-rf", "-rf"),
        ("not-utf8", os.fsdecode(b"\xff.txt"), "\\xff.txt"),
        ("bidi", "a\u202eb.txt", "a\\u202eb.txt"),
    ],
    ids=["newline", "leading-dash", "not-utf8", "bidi"],
)
def test_odd_names_are_shown_escaped(box: Box, name: str, raw: str, shown: str) -> None:
    (box.cwd / raw).write_text("root:odd\n")
    ctx = ToolContext(cwd=box.cwd, env={})
    grep = GrepTool().run({"pattern": "root:odd", "output_mode": "content"}, ctx, CancelScope())
    assert grep.content.splitlines()[0] == f"{box.cwd / shown}:1:root:odd"
    read = ReadTool().run({"file_path": raw}, ctx, CancelScope())
    assert read.content == "     1\troot:odd"
    read.content.encode("utf-8")


# --- Read(...) rules govern Glob and Grep, Edit(...) rules govern Write ---------


def test_read_deny_rule_hides_files_from_a_grep_over_the_parent(box: Box) -> None:
    (box.cwd / "secrets").mkdir()
    (box.cwd / "secrets" / "k.txt").write_text("root:DENIED\n")
    policy = box.policy(deny=("Read(secrets/**)",))
    for name, tool_input in [
        ("Grep", {"pattern": "root:", "output_mode": "content"}),
        ("Glob", {"pattern": "**/*.txt"}),
    ]:
        decision, (content, _) = _evaluate_and_run(box, name, tool_input, policy)
        assert decision.behavior == "allow"
        assert "DENIED" not in content and "k.txt" not in content
        assert "1 entry not searched: denied by permission rules" in content
    decision, _ = _evaluate_and_run(box, "Grep", {"pattern": "x", "path": "secrets"}, policy)
    assert decision.behavior == "deny"


def test_read_ask_rule_skips_in_a_walk_and_is_settled_by_an_approved_root(box: Box) -> None:
    (box.cwd / "secrets").mkdir()
    (box.cwd / "secrets" / "k.txt").write_text("root:ASKED\n")
    policy = box.policy(ask=("Read(secrets/**)",))
    decision, (content, _) = _evaluate_and_run(box, "Grep", {"pattern": "root:"}, policy)
    assert decision.behavior == "allow" and "ASKED" not in content
    assert "a permission rule asks before they are read" in content
    tool_input = {"pattern": "root:", "path": "secrets", "output_mode": "content"}
    decision, (content, _) = _evaluate_and_run(box, "Grep", tool_input, policy)
    assert decision.behavior == "ask" and "root:ASKED" in content


@pytest.mark.parametrize(
    ("deny", "path"), [("{outside}/**", "pw"), ("sub/**", "near")], ids=["outside", "inside"]
)
def test_read_deny_matches_where_a_link_resolves_and_beats_allow(
    box: Box, deny: str, path: str
) -> None:
    """Rules see the resolved path: a link cannot dodge a deny on its target,
    and deny wins over allow rules of any source."""
    rule = f"Read({deny.format(outside=box.outside)})"
    policy = box.policy(deny=(rule,), allow=("Grep", "Read", f"Read({box.outside}/**)"))
    decision, _ = _evaluate_and_run(box, "Grep", {"pattern": "root:", "path": path}, policy)
    assert decision.behavior == "deny"


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Read", {"file_path": "secrets/k.txt"}),
        ("Write", {"file_path": "secrets/new.txt", "content": "x"}),
        ("Edit", _edit("secrets/k.txt")),
        ("Glob", {"pattern": "secrets/*"}),
        ("Glob", {"pattern": "*", "path": "secrets"}),
        ("Grep", {"pattern": "root:", "path": "secrets"}),
    ],
    ids=["Read", "Write", "Edit", "Glob-pattern", "Glob-path", "Grep"],
)
def test_a_rule_naming_a_link_holds_for_what_it_points_at(
    box: Box, name: str, tool_input: dict[str, Any]
) -> None:
    """Deny and ask rules match the path as spelled and as resolved: a link
    named by a rule cannot be used to reach its target around the rule."""
    (box.cwd / "data").mkdir()
    (box.cwd / "data" / "k.txt").write_text("root:LINKED\n")
    (box.cwd / "secrets").symlink_to(box.cwd / "data")
    rule = "Edit(secrets/**)" if name in ("Write", "Edit") else "Read(secrets/**)"
    denied, (content, _) = _evaluate_and_run(box, name, tool_input, box.policy(deny=(rule,)))
    assert denied.behavior == "deny" and "LINKED" not in content
    asked, _ = _evaluate_and_run(box, name, tool_input, box.policy(mode="acceptEdits", ask=(rule,)))
    assert (asked.behavior, asked.blocked_path) == ("ask", None)


def test_a_walk_matches_rules_against_the_path_it_came_through(box: Box) -> None:
    """A rule naming a link outside the walked tree's own names still hides
    what the walk reaches through it."""
    (box.extra / "vault").mkdir()
    (box.extra / "vault" / "k.txt").write_text("root:VAULT\n")
    (box.cwd / "v").symlink_to(box.extra / "vault")
    policy = box.policy(deny=("Read(v/**)",))
    _, (content, _) = _evaluate_and_run(
        box, "Grep", {"pattern": "root:", "output_mode": "content"}, policy
    )
    assert "VAULT" not in content and "denied by permission rules" in content


def test_an_approved_ask_through_a_link_settles_the_walk_below_it(box: Box) -> None:
    (box.cwd / "data").mkdir()
    (box.cwd / "data" / "k.txt").write_text("root:LINKED\n")
    (box.cwd / "secrets").symlink_to(box.cwd / "data")
    tool_input = {"pattern": "root:", "path": "secrets", "output_mode": "content"}
    policy = box.policy(ask=("Read(secrets/**)",))
    decision, (content, _) = _evaluate_and_run(box, "Grep", tool_input, policy)
    assert decision.behavior == "ask" and "root:LINKED" in content


def test_edit_rule_governs_write(box: Box) -> None:
    policy = box.policy(deny=("Edit(sub/**)",))
    decision, _ = _evaluate_and_run(
        box, "Write", {"file_path": "sub/new.txt", "content": "x"}, policy
    )
    assert decision.behavior == "deny"
    assert not (box.cwd / "sub" / "new.txt").exists()


@pytest.mark.parametrize("evaluated", [MAX_PENDING_GRANTS, MAX_PENDING_GRANTS + 1])
def test_pending_grants_are_bounded_at_the_limit_and_one_past(box: Box, evaluated: int) -> None:
    """Calls evaluated but never run do not grow the grant table without end;
    past the limit the oldest grant goes, so its call runs without one."""
    policy = box.policy()
    tool = box.bound("Read", policy)
    inputs = [freeze({"file_path": str(box.secret), "offset": i + 1}) for i in range(evaluated)]
    for frozen in inputs:
        assert isinstance(frozen, FrozenDict)
        policy.evaluate(tool, frozen)
    first, last = inputs[0], inputs[-1]
    assert isinstance(first, FrozenDict) and isinstance(last, FrozenDict)
    kept = evaluated <= MAX_PENDING_GRANTS
    assert policy.access("Read", first).granted == ((box.secret,) if kept else ())
    assert policy.access("Read", last).granted == (box.secret,)
    assert policy.access("Read", last).granted == ()  # a grant is used once
