"""What the start-up fast paths import (WIRE-026; bench/startup_bench.py).

Each case runs :func:`agentx.cli.main` in a fresh interpreter, as the
``agentx`` entry point does, and reads ``sys.modules`` afterwards. Modules cut
from a path are listed here so they cannot creep back: ``dataclasses`` (and
the ``inspect``/``ast`` machinery under it), ``hashlib``/OpenSSL, the turn
accounting, and the whole runtime stack; with no auth.json to parse, ``json``
too. ``decimal`` is not on the list: the encoder's ujson imports it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = """
import sys
from agentx.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write(repr(sorted(sys.modules)))
sys.exit(status)
"""

#: Never imported to answer ``--list-providers``, with or without an auth.json.
DISCOVERY_NEVER = (
    "dataclasses",
    "inspect",
    "ast",
    "hashlib",
    "_hashlib",
    "agentx.messages.accounting",
    "agentx.messages.raw_json",
    "agentx.launch",
    "agentx.actors",
    "pykka",
    "loguru",
    "PIL",
    "pypdf",
    "httpx",
    "mcp",
    "genai_prices",
)
#: Not imported either when there is no auth.json (the built-in registry).
BUILTIN_NEVER = (*DISCOVERY_NEVER, "json")
#: ``--version`` imports the CLI module and nothing of its own beyond it.
VERSION_NEVER = ("typing", "json", "ujson", "agentx.messages", "agentx.config.discovery")

AUTH_JSON = {
    "version": 2,
    "providers": [
        {
            "id": "claude",
            "type": "anthropic",
            "model": "claude-x",
            "endpoint": "http://127.0.0.1:9/v1",
            "api_key": "sk-startup-test",
            "headers": {"X-Extra": "header-value"},
            "reasoning": {"efforts": ["low", "high"], "default": "low"},
            "pricing": {"input_per_mtok": 3, "output_per_mtok": 15},
            "default": True,
        },
        {"id": "offline", "type": "scripted", "model": "echo", "script": "turns.json"},
    ],
}


def run_main(home: Path, *args: str) -> tuple[bytes, set[str]]:
    """Run the entry point with ``args``; its stdout and every module it loaded."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        env=dict(os.environ) | {"AGENTX_HOME": str(home)},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, set(ast.literal_eval(done.stderr.decode("utf-8")))


def loaded_from(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that are, or sit under, a ``forbidden`` name."""
    return sorted(
        name
        for name in modules
        if any(name == cut or name.startswith(f"{cut}.") for cut in forbidden)
    )


@pytest.mark.parametrize(
    ("auth_json", "args", "forbidden"),
    [
        pytest.param(
            None,
            ("--list-providers", "--output-format", "json"),
            BUILTIN_NEVER,
            id="builtin-json",
        ),
        pytest.param(None, ("--list-providers",), BUILTIN_NEVER, id="builtin-text"),
        pytest.param(
            AUTH_JSON, ("--list-providers", "--output-format=json"), DISCOVERY_NEVER, id="auth-json"
        ),
        pytest.param(AUTH_JSON, ("--list-providers",), DISCOVERY_NEVER, id="auth-text"),
    ],
)
def test_discovery_imports_none_of_the_cut_modules(
    tmp_path: Path,
    auth_json: dict[str, object] | None,
    args: tuple[str, ...],
    forbidden: tuple[str, ...],
) -> None:
    if auth_json is not None:
        (tmp_path / "auth.json").write_text(json.dumps(auth_json), encoding="utf-8")
    stdout, modules = run_main(tmp_path, *args)
    expected_ids = ["local"] if auth_json is None else ["claude", "offline"]
    if "json" in " ".join(args):
        assert [p["id"] for p in json.loads(stdout)["providers"]] == expected_ids
    else:
        assert [line.split()[0] for line in stdout.decode().splitlines()[1:]] == expected_ids
    assert "agentx.config.registry" in modules  # the case really ran discovery
    assert loaded_from(modules, forbidden) == []


def test_version_imports_only_the_cli(tmp_path: Path) -> None:
    stdout, modules = run_main(tmp_path, "--version")
    assert stdout.startswith(b"agentx ")
    assert sorted(m for m in modules if m.startswith("agentx")) == ["agentx", "agentx.cli"]
    assert loaded_from(modules, VERSION_NEVER) == []


def test_the_cut_modules_are_real_module_names() -> None:
    """A misspelt entry would make the checks above pass vacuously."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {', '.join(BUILTIN_NEVER + VERSION_NEVER)}"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
