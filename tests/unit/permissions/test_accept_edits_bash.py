"""``acceptEdits`` and Bash file commands through the session policy
(DEC-PERM-MODE, DEC-PERM-PATH), on real files and real symlinks: a line is
allowed unasked only when every path it names is one the file tools could
edit; a rule, the boundary, a link out, a working directory itself asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentx.messages.frozen import freeze
from agentx.messages.permission_rules import Mode
from agentx.permissions.policy import BoundTool
from agentx.tools.base import ToolContext
from agentx.tools.bash import BashTool
from tests.unit.permissions.test_path_policy import Box


def decide(
    box: Box, line: str, *, mode: Mode = "acceptEdits", **rules: tuple[str, ...]
) -> tuple[str, str]:
    policy = box.policy(mode=mode, **rules)
    tool = BoundTool(BashTool(), ToolContext(cwd=box.cwd, add_dirs=(box.extra,), env={}), policy)
    decision = policy.evaluate(tool, freeze({"command": line}))
    return decision.behavior, decision.source


@pytest.mark.parametrize(
    ("line", "behavior"),
    [
        ("mkdir -p new/deep && touch new/deep/f", "allow"),
        ("rm -rf sub", "allow"),
        ("mv sub/in.txt sub/moved.txt", "allow"),
        ("cp -r sub copy", "allow"),
        ("sed -i s/root/r/ sub/in.txt", "allow"),
        ("touch near", "allow"),  # a link that stays inside
        ("touch ../extra/new", "allow"),  # an added directory
        ("rm -rf /", "ask"),
        ("rm -rf -- /", "ask"),
        ("mv sub ../../etc", "ask"),
        ("touch ../outside/x", "ask"),
        ("touch pw", "ask"),  # a link to a file outside
        ("touch od/x", "ask"),  # through a linked folder outside
        ("cp pw stolen", "ask"),  # copying in from outside
        ("rm -rf .", "ask"),  # a working directory itself
        ("rm -rf ../work", "ask"),
        ("rmdir ../extra", "ask"),
        ("mv . ../gone", "ask"),
        ("cp a $(evil)", "ask"),
        ("touch ~/.bashrc", "ask"),
        ("rm *.txt", "ask"),
        ("rm -- -rf", "allow"),  # a file named -rf, inside
        ("echo hi", "ask"),
    ],
)
def test_accept_edits_file_commands(tmp_path: Path, line: str, behavior: str) -> None:
    assert decide(Box(tmp_path), line)[0] == behavior


def test_auto_is_accept_edits(tmp_path: Path) -> None:
    box = Box(tmp_path)
    assert decide(box, "touch f", mode="auto") == ("allow", "mode")
    assert decide(box, "touch f", mode="default") == ("ask", "mode")
    assert decide(box, "touch f", mode="dontAsk")[0] == "deny"


@pytest.mark.parametrize(
    ("rules", "behavior", "source"),
    [
        ({"deny": ("Bash(rm:*)",)}, "deny", "rule"),
        ({"ask": ("Bash(rm:*)",)}, "ask", "rule"),
        ({"deny": ("Edit(sub/**)",)}, "ask", "mode"),  # the path is not one Edit may touch
        ({"ask": ("Edit(sub/**)",)}, "ask", "mode"),
        ({"deny": ("Read(sub/**)",)}, "ask", "mode"),
        ({"deny": ("Edit(other/**)",)}, "allow", "mode"),
    ],
)
def test_rules_come_first(
    tmp_path: Path, rules: dict[str, tuple[str, ...]], behavior: str, source: str
) -> None:
    assert decide(Box(tmp_path), "rm sub/in.txt", **rules) == (behavior, source)
