"""One policy for Bash and the file tools (DEC-PERM-BASH-5): for generated
paths (inside, outside, through symlinks, protected) the Write tool admits a
path exactly when a sandboxed ``touch`` of it succeeds, on the real kernel."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentx.messages.permission_rules import PermissionRules
from agentx.messages.sandbox_policy import SandboxSettings, derive_policy
from agentx.sandbox.probe import cached_probe, find_bwrap
from agentx.sandbox.shell import Sandbox, session_tmp_dir
from agentx.tools.base import CallAccess, ToolContext
from agentx.tools.files import WriteTool
from agentx.tools.process import ChildProcesses, GroupProcess
from agentx.turns.cancel import CancelScope
from tests.e2e.sandbox_harness import make_world, remove_world

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="needs bubblewrap (.ci/run installs it)"
)

BASES = (
    "workspace",
    "workspace/sub",
    "workspace/in_link",
    "workspace/out_link",
    "workspace/.git",
    "workspace/.git/hooks",
    "workspace/.git/config",
    "workspace/.agentx",
    "workspace/gitlink",
    "outside",
    "outside/sub",
    "home",
    "TMP",
)
_names = itertools.count()


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[Path, Sandbox, ChildProcesses]]:
    world = make_world(0)
    ws = world.workspace
    (ws / "sub").mkdir()
    (world.outside / "sub").mkdir()
    (ws / "in_link").symlink_to(ws / "sub")
    (ws / "out_link").symlink_to(world.outside)
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".agentx").mkdir()
    (ws / "gitlink").symlink_to(ws / ".git" / "hooks")
    tmp_dir = session_tmp_dir()
    policy = derive_policy(
        SandboxSettings(enabled=True),
        cwd=str(ws),
        add_dirs=(),
        tmp_dir=str(tmp_dir),
        home=str(world.home),
        read_deny_paths=(),
        settings_files=(),
    )
    probe = cached_probe(world.home, find_bwrap(None, policy.writable))
    assert probe.tier == "namespaces", probe.reason
    sandbox = Sandbox(SandboxSettings(enabled=True), policy, probe, tmp_dir)
    children = ChildProcesses()
    yield world.root, sandbox, children
    children.terminate_all()
    sandbox.close()
    remove_world(world)


def touched(sandbox: Sandbox, children: ChildProcesses, cwd: Path, path: Path) -> bool:
    argv, env = sandbox.command(f"touch '{path}'", {"PATH": os.environ["PATH"]})
    proc = GroupProcess(argv, cwd=cwd, env=env, children=children, merge_stderr=True)
    while not proc.done:
        proc.pump(5.0)
    return proc.returncode == 0


def written(sandbox: Sandbox, cwd: Path, path: Path) -> bool:
    ctx = ToolContext(
        cwd=cwd,
        env={},
        sandbox=sandbox,
        access=CallAccess(
            tool_name="Write", rules=PermissionRules(), mode="bypassPermissions", cwd=cwd
        ),
    )
    result = WriteTool().run({"file_path": str(path), "content": "x"}, ctx, CancelScope())
    return not result.is_error


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(base=st.sampled_from(BASES), leaf=st.sampled_from(["f", "pre-commit", "config"]))
def test_write_admits_exactly_what_a_sandboxed_touch_may_create(
    setup: tuple[Path, Sandbox, ChildProcesses], base: str, leaf: str
) -> None:
    root, sandbox, children = setup
    folder = sandbox.tmp_dir if base == "TMP" else root / base
    path = folder / f"{leaf}-{next(_names)}"
    cwd = root / "workspace"
    by_bash = touched(sandbox, children, cwd, path)
    if by_bash:
        path.unlink()
    by_write = written(sandbox, cwd, path)
    if by_write:
        path.unlink()
    assert by_write == by_bash, f"{path}: Write {by_write}, sandboxed touch {by_bash}"
