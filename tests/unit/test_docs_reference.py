"""The reference pages cover what the code defines (DEC-CLI-4, DEC-AUTH-2, DEC-SET-2).

``docs/configuration.md`` must name every flag of ``agentx --help`` (the
FLAGS table both the parser and the help are built from), every command,
every auth.json member and every settings key; ``docs/protocol.md`` must give
every rule and decision ID the code cites an entry (a ``#### ID`` heading),
so a clone can resolve each citation. The lists come from the code, so a new
flag, member, key or citation fails here until its line is written.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from agentx.config import auth_schema, settings
from agentx.config.cli_flags import COMMANDS, FLAGS
from agentx.messages import sandbox_policy


def _repo_root() -> Path:
    here = Path(__file__).resolve()
    return next(p for p in here.parents if (p / "pyproject.toml").is_file())


ROOT = _repo_root()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
PROTOCOL = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def _rules_index() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rules_index", ROOT / "scripts/rules_index.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented(name: str) -> bool:
    """``name`` appears as code (in backquotes) on the configuration page."""
    return (
        re.search(r"`[^`\n]*(?<![\w-])" + re.escape(name) + r"(?![\w-])[^`\n]*`", CONFIGURATION)
        is not None
    )


@pytest.mark.parametrize("name", sorted({n for flag in FLAGS for n in flag.names}))
def test_every_flag_is_documented(name: str) -> None:
    assert _documented(name), f"docs/configuration.md does not document the flag {name}"


@pytest.mark.parametrize("command", sorted(c.split()[0] for c, _ in COMMANDS))
def test_every_command_is_documented(command: str) -> None:
    assert _documented(command), f"docs/configuration.md does not document {command}"


AUTH_MEMBERS = sorted(
    auth_schema.TOP_MEMBERS
    | auth_schema.PROVIDER_MEMBERS
    | frozenset(auth_schema._RATE_NAMES)
    | auth_schema._REASONING_MEMBERS
)


@pytest.mark.parametrize("member", AUTH_MEMBERS)
def test_every_auth_json_member_is_documented(member: str) -> None:
    row = re.compile(r"^\| `" + re.escape(member) + r"`", re.M)
    assert row.search(CONFIGURATION), f"docs/configuration.md has no row for auth.json {member!r}"


@pytest.mark.parametrize("key", [*settings.KNOWN_KEYS, *settings.PERMISSION_KEYS])
def test_every_settings_key_is_documented(key: str) -> None:
    assert _documented(key), f"docs/configuration.md does not document the settings key {key}"


SANDBOX_KEYS = sorted(
    {
        *sandbox_policy._BOOLS,
        *sandbox_policy._FS_LISTS,
        *sandbox_policy._NET_LISTS,
        *sandbox_policy._NET_BOOLS,
        *sandbox_policy._NET_PORTS,
    }
    | {"excludedCommands", "filesystem", "network", "bwrapPath", "ignoreViolations"}
)


@pytest.mark.parametrize("key", SANDBOX_KEYS)
def test_every_sandbox_key_is_documented(key: str) -> None:
    assert _documented(key), f"docs/configuration.md does not document sandbox.{key}"


def test_every_cited_id_has_its_entry_in_protocol_md() -> None:
    rules_index = _rules_index()
    cited = set(rules_index.citations(ROOT))
    missing = sorted(cited - rules_index.documented_ids(PROTOCOL))
    assert not missing, f"docs/protocol.md has no entry for: {', '.join(missing)}"


def test_rules_md_links_each_id_to_its_entry() -> None:
    rules_index = _rules_index()
    index = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule_id in rules_index.documented_ids(PROTOCOL) & set(rules_index.citations(ROOT)):
        assert f"(protocol.md#{rules_index.anchor(rule_id)})" in index, rule_id
