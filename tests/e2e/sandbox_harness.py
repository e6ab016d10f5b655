"""Run the real ``agentx`` with the Bash sandbox on, as root or as an
unprivileged user, in a chosen tier (DEC-PERM-BASH-5).

The ``landlock`` tier is forced as Docker forces it: agentx runs under
``docker_like.py``'s seccomp filter, which refuses user namespaces; with
``no_landlock`` Landlock is refused too. Every folder the session uses lives
in a world-traversable base outside ``/tmp`` (pytest's folder is private to
root, and a namespaced command gets a ``/tmp`` of its own), owned by the
user agentx runs as.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.agentx_process import (
    DEFAULT_TIMEOUT,
    DUPLEX,
    agentx_command,
    encode,
    parse_line,
    user,
    write_auth,
    write_script,
)

NOBODY = 65534
DOCKER_LIKE = Path(__file__).with_name("docker_like.py")
#: Where the worlds live: outside /tmp, which a namespaced command replaces.
BASE = Path("/var/tmp")


@dataclass
class World:
    """A workspace, an outside folder and an AgentX home, owned by ``uid``."""

    root: Path
    uid: int

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def chown(self) -> None:
        for path in (self.root, *self.root.rglob("*")):
            os.lchown(path, self.uid, self.uid)


def make_world(uid: int) -> World:
    root = Path(tempfile.mkdtemp(prefix="agentx-sbx-", dir=BASE))
    root.chmod(0o755)
    world = World(root=root, uid=uid)
    for path in (world.workspace, world.outside, world.home):
        path.mkdir()
    world.outside.chmod(0o777)  # so only the sandbox stops a write there
    return world


def remove_world(world: World) -> None:
    shutil.rmtree(world.root, ignore_errors=True)


@dataclass
class Run:
    """What one session showed: its ``system/init``, each Bash result in
    order, its exit status and its stderr."""

    init: dict[str, Any]
    results: list[str]
    status: int
    stderr: str
    records: list[dict[str, Any]] = field(default_factory=list)


def command_prefix(*, as_nobody: bool, tier: str) -> list[str]:
    prefix: list[str] = []
    if tier in ("landlock", "none"):
        flags = ["--no-landlock"] if tier == "none" else []
        prefix += [sys.executable, str(DOCKER_LIKE), *flags, "--"]
    if as_nobody:
        setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
        prefix += [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    return prefix


def env_for(world: World) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTX_")}
    env["AGENTX_HOME"] = str(world.home)
    env["HOME"] = str(world.home)
    return env


def start(
    world: World,
    commands: list[str | dict[str, Any]],
    *,
    as_nobody: bool,
    tier: str,
    sandbox: dict[str, Any],
    background: bool = False,
    timeout_ms: int = 120_000,
    permissions: dict[str, Any] | None = None,
    mode: str = "bypassPermissions",
) -> subprocess.Popen[bytes]:
    """Start a session whose one turn runs ``commands`` as Bash tool uses."""
    steps = [
        {
            "tool_use": {
                "name": "Bash",
                "input": {
                    "run_in_background": background,
                    "timeout": timeout_ms,
                    **({"command": c} if isinstance(c, str) else c),
                },
            }
        }
        for c in commands
    ]
    script = write_script(world.home / "script.json", [{"steps": steps}, {"steps": []}])
    write_auth(world.home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    world.chown()
    settings = json.dumps({"sandbox": sandbox, "permissions": permissions or {}})
    argv = [
        *command_prefix(as_nobody=as_nobody, tier=tier),
        *agentx_command(),
        *DUPLEX,
        "--permission-mode",
        mode,
        "--settings",
        settings,
    ]
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(world),
        cwd=world.workspace,
    )


def run(
    world: World,
    commands: list[str | dict[str, Any]],
    *,
    as_nobody: bool,
    tier: str,
    sandbox: dict[str, Any] | None = None,
    permissions: dict[str, Any] | None = None,
    mode: str = "bypassPermissions",
) -> Run:
    """One whole session: a prompt, the commands, EOF."""
    proc = start(
        world,
        commands,
        as_nobody=as_nobody,
        tier=tier,
        sandbox=sandbox if sandbox is not None else {"enabled": True},
        permissions=permissions,
        mode=mode,
    )
    try:
        out, err = proc.communicate(encode(user("run them")), timeout=DEFAULT_TIMEOUT * 3)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = [parse_line(line) for line in out.splitlines(keepends=True)]
    return Run(
        init=next((r for r in records if r.get("subtype") == "init"), {}),
        results=list(tool_results(records)),
        status=proc.returncode,
        stderr=err.decode("utf-8", "replace"),
        records=records,
    )


def tool_results(records: list[dict[str, Any]]) -> Iterator[str]:
    """Each tool result's text, in the order of the tool uses."""
    order: list[str] = []
    texts: dict[str, str] = {}
    for record in records:
        content = (record.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") == "tool_use":
                order.append(block["id"])
            elif block.get("type") == "tool_result":
                value = block.get("content")
                if isinstance(value, list):
                    value = "".join(part.get("text", "") for part in value)
                texts[block["tool_use_id"]] = str(value)
    for tool_use_id in order:
        yield texts.get(tool_use_id, "<no result>")
