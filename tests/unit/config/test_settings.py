"""Settings sources, merge, strict decoding and hooks lookup (DEC-SET-1/2, DEC-HOOK-1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx.config.settings import Settings, SettingsError, load_settings
from agentx.messages.hooks.config import CommandHook
from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import PermissionRules


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    (cwd / ".agentx").mkdir(parents=True)
    home.mkdir()
    return home, cwd


def _write(path: Path, obj: Any) -> str:
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def _layout(dirs: tuple[Path, Path], **files: Any) -> dict[str, Path]:
    home, cwd = dirs
    paths = {
        "user": home / "settings.json",
        "project": cwd / ".agentx" / "settings.json",
        "local": cwd / ".agentx" / "settings.local.json",
        "flag": home.parent / "flag.json",
        "policy": home.parent / "policy.json",
    }
    for name, obj in files.items():
        _write(paths[name], obj)
    return paths


def _load(dirs: tuple[Path, Path], **kwargs: Any) -> Settings:
    home, cwd = dirs
    return load_settings(home=home, cwd=cwd, **kwargs)


MERGE_TABLE = [
    pytest.param(
        {"user": {"env": {"A": "1", "B": "1"}}, "project": {"env": {"B": "2"}}},
        {"env": {"A": "1", "B": "2"}},
        id="objects-merge-later-wins",
    ),
    pytest.param(
        {
            "user": {"permissions": {"allow": ["Read"], "defaultMode": "plan"}},
            "local": {"permissions": {"allow": ["Bash(ls)"], "defaultMode": "acceptEdits"}},
        },
        {"permissions": {"allow": ("Read", "Bash(ls)"), "defaultMode": "acceptEdits"}},
        id="rule-arrays-concatenate",
    ),
    pytest.param(
        {
            "user": {
                "hooks": {"PermissionRequest": [{"hooks": [{"type": "command", "command": "a"}]}]}
            },
            "project": {
                "hooks": {"PermissionRequest": [{"hooks": [{"type": "command", "command": "b"}]}]}
            },
        },
        {
            "hooks": {
                "PermissionRequest": (
                    {"hooks": ({"type": "command", "command": "a"},)},
                    {"hooks": ({"type": "command", "command": "b"},)},
                )
            }
        },
        id="hook-lists-concatenate",
    ),
    pytest.param(
        {
            "user": {"sandbox": {"excludedCommands": ["a"]}},
            "local": {"sandbox": {"excludedCommands": ["b"]}},
        },
        {"sandbox": {"excludedCommands": ("b",)}},
        id="other-arrays-replace",
    ),
    pytest.param(
        {"user": {"x": {"deep": 1}}, "project": {"x": 3}},
        {"x": 3},
        id="scalar-replaces-object",
    ),
    pytest.param({}, {}, id="no-files"),
]


@pytest.mark.parametrize(("files", "effective"), MERGE_TABLE)
def test_merge(dirs: tuple[Path, Path], files: dict[str, Any], effective: dict[str, Any]) -> None:
    _layout(dirs, **files)
    settings = _load(dirs)
    assert settings.effective == effective
    assert [s.name for s in settings.sources] == [
        n for n in ("user", "project", "local") if n in files
    ]


def test_source_order_and_raw_objects(dirs: tuple[Path, Path]) -> None:
    paths = _layout(
        dirs,
        user={"env": {"K": "user"}},
        project={"env": {"K": "project"}},
        local={"env": {"K": "local"}},
        flag={"env": {"K": "flag"}},
        policy={"env": {"K": "policy"}},
    )
    settings = _load(dirs, flag=str(paths["flag"]), policy_path=str(paths["policy"]))
    assert [(s.name, s.path) for s in settings.sources] == [
        (name, str(paths[name])) for name in ("user", "project", "local", "flag", "policy")
    ]
    assert [s.settings["env"]["K"] for s in settings.sources] == [
        "user",
        "project",
        "local",
        "flag",
        "policy",
    ]
    assert settings.env == {"K": "policy"}


def test_setting_sources_selects_files(dirs: tuple[Path, Path]) -> None:
    _layout(dirs, user={"env": {"U": "1"}}, project={"env": {"P": "1"}}, local={"env": {"L": "1"}})
    settings = _load(dirs, sources={"project"})
    assert [s.name for s in settings.sources] == ["project"]
    with pytest.raises(SettingsError, match="unknown source 'policy'"):
        _load(dirs, sources={"policy"})


def test_claude_code_files_load_just_below_agentx_files(dirs: tuple[Path, Path]) -> None:
    """DEC-SET-1: ``.claude/settings.json`` is a project source and
    ``.claude/settings.local.json`` a local one, each below the ``.agentx``
    file of its source; ``--setting-sources`` selects them alike."""
    _, cwd = dirs
    (cwd / ".claude").mkdir()
    claude_project = _write(cwd / ".claude" / "settings.json", {"env": {"A": "cp", "B": "cp"}})
    claude_local = _write(
        cwd / ".claude" / "settings.local.json", {"env": {"B": "cl", "C": "cl", "D": "cl"}}
    )
    paths = _layout(dirs, project={"env": {"B": "ap", "C": "ap"}}, local={"env": {"D": "al"}})
    settings = _load(dirs)
    assert [(s.name, s.path) for s in settings.sources] == [
        ("project", claude_project),
        ("project", str(paths["project"])),
        ("local", claude_local),
        ("local", str(paths["local"])),
    ]
    assert settings.env == {"A": "cp", "B": "cl", "C": "cl", "D": "al"}
    only_project = _load(dirs, sources={"project"})
    assert only_project.env == {"A": "cp", "B": "ap", "C": "ap"}


def test_inline_flag_and_tool_flags(dirs: tuple[Path, Path]) -> None:
    settings = _load(
        dirs,
        flag='{"permissions": {"allow": ["Read"]}}',
        allowed_tools=["Bash(git status:*)", "Edit"],
        disallowed_tools=["WebFetch"],
    )
    (flag,) = settings.sources
    assert (flag.name, flag.path) == ("flag", "flag")
    assert settings.effective["permissions"] == {
        "allow": ("Read", "Bash(git status:*)", "Edit"),
        "deny": ("WebFetch",),
    }
    assert [str(r) for r in settings.rules.deny] == ["WebFetch"]


def test_tool_flags_alone_make_a_flag_source(dirs: tuple[Path, Path]) -> None:
    settings = _load(dirs, allowed_tools=["Read"])
    assert [(s.name, s.path) for s in settings.sources] == [("flag", "flag")]
    assert _load(dirs).sources == ()


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions"], ids=str)
def test_policy_deny_cannot_be_overridden(dirs: tuple[Path, Path], mode: Any) -> None:
    paths = _layout(
        dirs,
        user={"permissions": {"allow": ["Bash"]}},
        local={"permissions": {"allow": ["Bash(curl:*)"], "deny": []}},
        policy={"permissions": {"deny": ["Bash(curl:*)"]}},
    )
    settings = _load(
        dirs,
        policy_path=str(paths["policy"]),
        flag='{"permissions": {"allow": ["Bash(curl:*)"]}}',
        allowed_tools=["Bash(curl:*)"],
    )
    settings = settings.apply_flag_settings({"permissions": {"allow": ["Bash"], "deny": []}})
    decision = evaluate(
        "Bash",
        {"command": "curl http://x"},
        read_only=False,
        paths=(),
        rules=settings.rules,
        mode=mode,
        cwd=dirs[1],
    )
    assert decision.behavior == "deny"
    assert settings.sources[-1].name == "policy"


MALFORMED = [
    pytest.param("{", "invalid JSON", id="truncated"),
    pytest.param('{"env": {"A": "secret-1", "A": "secret-2"}}', "duplicate member", id="dup"),
    pytest.param('{"a": NaN}', "non-finite number", id="nan"),
    pytest.param("[]", "must be a JSON object", id="array-top"),
    pytest.param('{"env": {"A": 1}}', "env must be an object of strings", id="env-type"),
    pytest.param('{"permissions": []}', "permissions must be an object", id="perm-type"),
    pytest.param(
        '{"permissions": {"allow": "Bash"}}',
        "permissions.allow must be an array",
        id="allow-string",
    ),
    pytest.param(
        '{"permissions": {"deny": ["Bash("]}}',
        "permissions.deny[0] must be a permission rule",
        id="bad-rule",
    ),
    pytest.param(
        '{"permissions": {"defaultMode": "yolo"}}', "defaultMode must be one of", id="bad-mode"
    ),
    pytest.param(
        '{"hooks": {"PermissionRequest": {}}}',
        "hooks.PermissionRequest must be an array",
        id="hooks-type",
    ),
    pytest.param(
        '{"hooks": {"PermissionRequest": [{"matcher": "(", "hooks": []}]}}',
        "matcher must be a regular expression",
        id="bad-matcher",
    ),
    pytest.param(
        '{"hooks": {"PreToolUsee": []}}',
        "hooks.PreToolUsee must be named after a hook event",
        id="misspelt-event",
    ),
    pytest.param(
        '{"hooks": {"PermissionRequest": [{"hooks": [{"type": "url"}]}]}}',
        'hooks.PermissionRequest[0].hooks[0].type "url" is not supported by agentx',
        id="hook-type",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "args": ["b"]}]}]}}',
        "hooks.Stop[0].hooks[0].args is not supported by agentx",
        id="hook-args",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a", "once": true}]}]}}',
        "hooks.Stop[0].hooks[0].once is not supported by agentx",
        id="hook-once",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x/", "if": "Bash"}]}]}}',
        "hooks.Stop[0].hooks[0].if is not supported by agentx",
        id="http-hook-if",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"kind": "command"}]}]}}',
        'an object with "type": "command" or "http"',
        id="hook-no-type",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "ftp://x/"}]}]}}',
        "hooks.Stop[0].hooks[0].url must be an http or https URL",
        id="http-hook-url",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x/", '
        '"headers": {"A": 1}}]}]}}',
        "hooks.Stop[0].hooks[0].headers must be an object of one-line strings",
        id="http-hook-headers",
    ),
    pytest.param(
        '{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://x/", '
        '"allowedEnvVars": "A"}]}]}}',
        "hooks.Stop[0].hooks[0].allowedEnvVars must be an array of strings",
        id="http-hook-allowed",
    ),
    pytest.param(
        '{"hooks": {"PermissionRequest": [{"hooks": [{"type": "command", '
        '"command": "x", "timeout": 0}]}]}}',
        "timeout must be a positive",
        id="timeout",
    ),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_file_names_file_not_content(
    dirs: tuple[Path, Path], text: str, message: str
) -> None:
    paths = _layout(dirs, project=text)
    with pytest.raises(SettingsError) as info:
        _load(dirs)
    assert str(info.value).startswith(f"{paths['project']}: ")
    assert message in str(info.value)
    assert "secret" not in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flag": "/nonexistent/flag.json"}, "settings file not found"),
        ({"policy_path": "/nonexistent/policy.json"}, "settings file not found"),
        ({"flag": '{"a": 1, "a": 2}'}, "--settings: ambiguous JSON"),
        ({"allowed_tools": ["Bash("]}, "--allowedTools must be a permission rule"),
        (
            {"disallowed_tools": ["WebFetch(x.com)"]},
            "--disallowedTools: the rule .* can never match",
        ),
        ({"disallowed_tools": [""]}, "--disallowedTools must be a permission rule"),
    ],
    ids=[
        "flag-missing",
        "policy-missing",
        "inline-dup",
        "allowed-bad",
        "no-match",
        "disallowed-bad",
    ],
)
def test_flag_and_policy_errors(
    dirs: tuple[Path, Path], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(SettingsError, match=message):
        _load(dirs, **kwargs)


def test_unreadable_and_non_utf8(dirs: tuple[Path, Path]) -> None:
    paths = _layout(dirs)
    paths["user"].mkdir()
    with pytest.raises(SettingsError, match="cannot read settings"):
        _load(dirs)
    paths["user"].rmdir()
    paths["user"].write_bytes(b'{"env": {"A": "\xff"}}')
    with pytest.raises(SettingsError, match="invalid UTF-8"):
        _load(dirs)


def test_hooks_for(dirs: tuple[Path, Path]) -> None:
    _layout(
        dirs,
        project={
            "hooks": {
                "PermissionRequest": [
                    {
                        "matcher": "Bash|Write",
                        "hooks": [{"type": "command", "command": "a", "timeout": 5}],
                    },
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": "b", "statusMessage": "b..."}],
                    },
                    {"hooks": [{"type": "command", "command": "all"}]},
                    {"matcher": "*", "hooks": [{"type": "command", "command": "star"}]},
                ]
            }
        },
    )
    settings = _load(dirs)
    assert settings.hooks_for("PermissionRequest", "Bash") == (
        CommandHook(command="a", timeout_s=5.0),
        CommandHook(command="b", timeout_s=60.0),
        CommandHook(command="all"),
        CommandHook(command="star"),
    )
    assert [h.command for h in settings.hooks_for("PermissionRequest", "BashX")] == ["all", "star"]
    assert settings.hooks_for("PostToolUse", "Bash") == ()


def _guard(command: str) -> dict[str, Any]:
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}


def test_a_later_source_adds_hooks_and_never_removes_one(dirs: tuple[Path, Path]) -> None:
    """DEC-HOOK-1 as Claude Code merges hooks: an empty local list, or a local
    list of its own, leaves the project's guard in place; the same command
    defined in two sources runs once."""
    _layout(
        dirs,
        user={"hooks": _guard("guard")},
        project={"hooks": _guard("guard")},
        local={"hooks": {"PreToolUse": []}},
    )
    assert [h.command for h in _load(dirs).hooks_for("PreToolUse", "Bash")] == ["guard"]
    _layout(dirs, local={"hooks": _guard("mine")})
    assert [h.command for h in _load(dirs).hooks_for("PreToolUse", "Bash")] == ["guard", "mine"]


DISABLE_TABLE = [
    pytest.param({"local": True}, ["policy-guard"], id="local-disables-all-but-policy"),
    pytest.param(
        {"user": True, "project": False}, ["user-guard", "policy-guard"], id="later-false-wins"
    ),
    pytest.param({"policy": True}, [], id="policy-disables-everything"),
    pytest.param({}, ["user-guard", "policy-guard"], id="not-set"),
]


@pytest.mark.parametrize(("disabled", "running"), DISABLE_TABLE)
def test_disable_all_hooks(
    dirs: tuple[Path, Path], disabled: dict[str, bool], running: list[str]
) -> None:
    """``disableAllHooks`` as Claude Code reads it: the policy source's hooks
    still run under another source's; the policy's own stops every hook."""
    files: dict[str, dict[str, Any]] = {
        "user": {"hooks": _guard("user-guard")},
        "project": {},
        "local": {},
    }
    for name, value in disabled.items():
        files.setdefault(name, {})["disableAllHooks"] = value
    policy = {"hooks": _guard("policy-guard"), **files.pop("policy", {})}
    paths = _layout(dirs, policy=policy, **files)
    settings = _load(dirs, policy_path=str(paths["policy"]))
    assert [h.command for h in settings.hooks_for("PreToolUse", "Bash")] == running


def test_disable_all_hooks_must_be_a_boolean(dirs: tuple[Path, Path]) -> None:
    _layout(dirs, project={"disableAllHooks": "true"})
    with pytest.raises(SettingsError, match="disableAllHooks must be a boolean"):
        _load(dirs)


def test_rules_and_mode_accessors(dirs: tuple[Path, Path]) -> None:
    _layout(dirs, user={"permissions": {"allow": ["Read"], "ask": ["Bash"], "defaultMode": "plan"}})
    settings = _load(dirs)
    assert settings.rules == PermissionRules.parse(allow=["Read"], ask=["Bash"])
    assert settings.default_mode == "plan"
    assert _load(dirs, sources=()).default_mode is None


def test_apply_flag_settings_validates_and_keeps_policy_last(dirs: tuple[Path, Path]) -> None:
    paths = _layout(dirs, policy={"env": {"P": "1"}})
    settings = _load(dirs, policy_path=str(paths["policy"]))
    updated = settings.apply_flag_settings({"env": {"F": "1"}})
    assert [s.name for s in updated.sources] == ["flag", "policy"]
    assert updated.env == {"F": "1", "P": "1"}
    with pytest.raises(SettingsError, match="env must be"):
        updated.apply_flag_settings({"env": []})
    with pytest.raises(TypeError):
        updated.effective["env"] = {}  # type: ignore[index]


@pytest.mark.parametrize("source", ["user", "project", "local", "flag", "policy"])
@pytest.mark.parametrize(
    "rule", ["WebFetch(evil.example)", "Read(../secrets/**)", "Read(!x)", "Task(x)", "Bash(:*)"]
)
def test_a_rule_that_can_never_match_is_refused_naming_it_and_its_source(
    dirs: tuple[Path, Path], source: str, rule: str
) -> None:
    """DEC-SET-2: never a silent no-op; one line with the source and the rule."""
    paths = _layout(dirs, **{source: {"permissions": {"deny": [rule]}}})
    kwargs: dict[str, Any] = {}
    if source == "flag":
        kwargs["flag"] = str(paths["flag"])
    if source == "policy":
        kwargs["policy_path"] = str(paths["policy"])
    with pytest.raises(SettingsError) as info:
        _load(dirs, **kwargs)
    message = str(info.value)
    assert message.startswith(f"{paths[source]}: permissions.deny[0]: the rule {rule!r}")
    assert "can never match" in message
    assert "\n" not in message


def test_path_rules_are_rooted_per_source(dirs: tuple[Path, Path]) -> None:
    """``/x`` is the user settings folder in user settings and the project elsewhere;
    ``~/`` is the home directory (DEC-PERM-PATH)."""
    home, cwd = dirs
    _layout(
        dirs,
        user={"permissions": {"deny": ["Read(/u/**)", "Read(~/.ssh/**)"]}},
        project={"permissions": {"deny": ["Read(/p/**)", "Read(//etc/**)"]}},
    )
    rules = _load(dirs).rules
    anchors = {str(rule): rule.anchor for rule in rules.deny}
    assert anchors == {
        "Read(/u/**)": str(home),
        "Read(~/.ssh/**)": str(Path.home()),
        "Read(/p/**)": str(cwd),
        "Read(//etc/**)": None,
    }
