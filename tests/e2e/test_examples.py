"""The README's SDK examples (examples/sdk_query.py, examples/sdk_query.mjs):
each runs one prompt through the stock SDK against the real agentx on the
offline provider, and each stops with a sentence, never starting another host,
when agentx is not on PATH (DEC-COMPAT-4, section 12 of DECISIONS)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.agentx_process import agentx_command

ROOT = Path(__file__).resolve().parents[2]
SDK_DIR = Path(__file__).with_name("ts_sdk") / "node_modules"
MISSING = "agentx is not on PATH"
DEADLINE = 120.0


def _env(home: Path, with_agentx: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    folders = ["/usr/bin", "/bin"]
    if with_agentx:
        command = agentx_command()
        assert len(command) == 1, "the SDK spawns one executable: install the console script"
        folders.insert(0, str(Path(command[0]).parent))
    env["PATH"] = os.pathsep.join(folders)
    env["AGENTX_HOME"] = str(home)
    env["CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK"] = "1"
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=DEADLINE, check=False
    )


def test_python_example_answers_through_agentx(tmp_path: Path, home: Path) -> None:
    done = _run(
        [sys.executable, str(ROOT / "examples" / "sdk_query.py"), "ping from the example"],
        tmp_path,
        _env(home, with_agentx=True),
    )
    assert done.returncode == 0, done.stderr
    assert "ping from the example" in done.stdout


def test_python_example_refuses_without_agentx(tmp_path: Path, home: Path) -> None:
    done = _run(
        [sys.executable, str(ROOT / "examples" / "sdk_query.py"), "x"],
        tmp_path,
        _env(home, with_agentx=False),
    )
    assert done.returncode == 1
    assert done.stderr.startswith(MISSING)
    assert done.stdout == ""


def _node_example(tmp_path: Path) -> tuple[str, Path]:
    node = shutil.which("node")
    if node is None or not SDK_DIR.exists():
        pytest.skip("node or the pinned TypeScript SDK (tests/e2e/ts_sdk, .ci/run) is missing")
    folder = tmp_path / "ts"
    folder.mkdir()
    (folder / "node_modules").symlink_to(SDK_DIR)
    shutil.copy(ROOT / "examples" / "sdk_query.mjs", folder / "sdk_query.mjs")
    return node, folder


def test_typescript_example_answers_through_agentx(tmp_path: Path, home: Path) -> None:
    node, folder = _node_example(tmp_path)
    done = _run([node, "sdk_query.mjs", "ping from node"], folder, _env(home, with_agentx=True))
    assert done.returncode == 0, done.stderr
    assert "ping from node" in done.stdout


def test_typescript_example_refuses_without_agentx(tmp_path: Path, home: Path) -> None:
    node, folder = _node_example(tmp_path)
    done = _run([node, "sdk_query.mjs", "x"], folder, _env(home, with_agentx=False))
    assert done.returncode == 1
    assert done.stderr.startswith(MISSING)
    assert done.stdout == ""
