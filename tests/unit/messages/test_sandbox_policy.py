"""The sandbox settings and policy core (DEC-PERM-BASH-5), as tables."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.frozen import freeze
from agentx.messages.sandbox_policy import (
    SandboxPolicy,
    SandboxSettings,
    SandboxSettingsError,
    absolute,
    derive_policy,
    parse_sandbox,
    refusal,
    rule_path_prefix,
    runs_unsandboxed,
    writable,
)


def parsed(block: Any) -> SandboxSettings:
    return parse_sandbox(freeze(block))


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (None, SandboxSettings()),
        ({}, SandboxSettings()),
        ({"enabled": True}, SandboxSettings(enabled=True)),
        (
            {
                "enabled": True,
                "failIfUnavailable": True,
                "autoAllowBashIfSandboxed": True,
                "allowUnsandboxedCommands": False,
                "excludedCommands": ["docker"],
                "filesystem": {"allowWrite": ["~/.kube"], "denyRead": ["~/.ssh"]},
                "network": {"allowedDomains": ["a.com"], "allowLocalBinding": True},
                "ignoreViolations": {"*": ["/etc/hosts"]},
                "enableWeakerNestedSandbox": False,
                "bwrapPath": "/opt/bwrap",
            },
            SandboxSettings(
                enabled=True,
                fail_if_unavailable=True,
                auto_allow=True,
                allow_unsandboxed=False,
                excluded_commands=("docker",),
                allow_write=("~/.kube",),
                deny_read=("~/.ssh",),
                allowed_domains=("a.com",),
                bwrap_path="/opt/bwrap",
            ),
        ),
        ({"network": {"httpProxyPort": 8080}}, SandboxSettings(proxy_ports=("httpProxyPort",))),
    ],
)
def test_parse(block: Any, expected: SandboxSettings) -> None:
    assert parsed(block) == expected


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ([], "sandbox. must be an object"),
        ({"enabled": "yes"}, "sandbox.enabled"),
        ({"failIfUnavailable": 1}, "sandbox.failIfUnavailable"),
        ({"excludedCommands": "git"}, "sandbox.excludedCommands"),
        ({"excludedCommands": [1]}, "sandbox.excludedCommands"),
        ({"filesystem": []}, "sandbox.filesystem"),
        ({"filesystem": {"allowWrite": "/x"}}, "sandbox.filesystem.allowWrite"),
        ({"network": {"allowedDomains": [None]}}, "sandbox.network.allowedDomains"),
        ({"network": {"allowLocalBinding": "no"}}, "sandbox.network.allowLocalBinding"),
        ({"network": {"httpProxyPort": 0}}, "sandbox.network.httpProxyPort"),
        ({"network": {"httpProxyPort": 65536}}, "sandbox.network.httpProxyPort"),
        ({"network": {"socksProxyPort": True}}, "sandbox.network.socksProxyPort"),
        ({"ignoreViolations": {"*": "x"}}, "sandbox.ignoreViolations.*"),
        ({"bwrapPath": ""}, "sandbox.bwrapPath"),
    ],
)
def test_a_wrong_type_names_the_key(block: Any, key: str) -> None:
    with pytest.raises(SandboxSettingsError, match=key.replace(".", r"\.").replace("*", r"\*")):
        parsed(block)


def test_ports_at_the_limits() -> None:
    assert parsed({"network": {"socksProxyPort": 1}}).proxy_ports == ("socksProxyPort",)
    assert parsed({"network": {"socksProxyPort": 65535}}).proxy_ports == ("socksProxyPort",)


@pytest.mark.parametrize(
    ("block", "refused"),
    [
        ({"enabled": False, "network": {"allowedDomains": ["a.com"]}}, None),
        ({"enabled": True}, None),
        ({"enabled": True, "network": {"allowedDomains": []}}, None),
        ({"enabled": True, "network": {"allowedDomains": ["a.com"]}}, "allowedDomains"),
        ({"enabled": True, "network": {"httpProxyPort": 3128}}, "httpProxyPort"),
    ],
)
def test_refusal(block: Any, refused: str | None) -> None:
    reason = refusal(parsed(block))
    assert (reason is None) == (refused is None)
    if refused is not None:
        assert reason is not None and refused in reason


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("//etc/x", "/etc/x"),
        ("///etc//x/", "/etc/x"),
        ("~/.ssh", "/home/u/.ssh"),
        ("~", "/home/u"),
        ("/build", "/w/build"),
        ("build", "/w/build"),
        ("./a/../b", "/w/b"),
    ],
)
def test_absolute(path: str, expected: str) -> None:
    assert absolute(path, cwd="/w", home="/home/u") == expected


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        ("~/.ssh/**", "~/.ssh"),
        ("~/.ssh", "~/.ssh"),
        ("//etc/shadow", "//etc/shadow"),
        ("secrets/*.env", "secrets"),
        ("./.env", "./.env"),
        ("dir/", "dir"),
        ("**/.env", None),
        ("*.key", None),
        ("~/**", None),
        ("/", None),
    ],
)
def test_rule_path_prefix(pattern: str, prefix: str | None) -> None:
    assert rule_path_prefix(pattern) == prefix


def test_derive_policy() -> None:
    settings = parsed(
        {
            "enabled": True,
            "filesystem": {
                "allowWrite": ["~/.kube", "//opt/out"],
                "denyWrite": ["docs"],
                "denyRead": ["~/.ssh"],
            },
        }
    )
    policy = derive_policy(
        settings,
        cwd="/w",
        add_dirs=("/extra",),
        tmp_dir="/tmp/s",
        home="/home/u",
        read_deny_paths=("~/.aws", "//w/secret", "/rel"),
        settings_files=("/w/.agentx/settings.json", "/home/u/.agentx/settings.json"),
    )
    assert policy.writable == ("/w", "/extra", "/tmp/s", "/home/u/.kube", "/opt/out")
    assert policy.read_denied == ("/home/u/.ssh", "/home/u/.aws", "/w/secret", "/w/rel")
    assert policy.protected[:3] == ("/w/.git/hooks", "/w/.git/config", "/w/.agentx")
    assert "/tmp/s/.git/hooks" not in policy.protected
    assert "/home/u/.agentx/settings.json" in policy.protected
    assert policy.protected[-1] == "/w/docs"
    assert policy.network is False


POLICY = SandboxPolicy(
    writable=("/w", "/tmp/s"), read_denied=(), protected=("/w/.git/hooks", "/w/.agentx")
)


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("/w", True),
        ("/w/a.txt", True),
        ("/w/.git/config.bak", True),
        ("/w/.git/hooks", False),
        ("/w/.git/hooks/pre-commit", False),
        ("/w/.git/hooksx", True),
        ("/w/.agentx/settings.json", False),
        ("/wx/a", False),
        ("/tmp/s/x", True),
        ("/tmp/other", False),
        ("/", False),
    ],
)
def test_writable(path: str, ok: bool) -> None:
    assert writable(POLICY, path) is ok


EXCLUDING = SandboxSettings(enabled=True, excluded_commands=("git", "docker:*", "ls *", "a b"))


@pytest.mark.parametrize(
    ("command", "unsandboxed"),
    [
        ("git status", True),
        ("/usr/bin/git log", True),
        ("git status && ls -l", True),
        ("docker ps | git x", True),
        ("git status; curl x", False),  # one program is not excluded
        ("sudo git x", False),  # every wrapper layer counts
        ("bash -c 'git x'", False),  # so does the shell of a -c body
        ("eval git", False),  # opaque: sandboxed
        ("$X status", False),
        ("a b", False),  # an entry of another shape excludes nothing
        ("", False),
    ],
)
def test_excluded_commands(command: str, unsandboxed: bool) -> None:
    assert runs_unsandboxed(EXCLUDING, command, disable_requested=False) is unsandboxed


@pytest.mark.parametrize(
    ("allow", "requested", "unsandboxed"),
    [(True, True, True), (True, False, False), (False, True, False), (False, False, False)],
)
def test_the_unsandboxed_request(allow: bool, requested: bool, unsandboxed: bool) -> None:
    settings = SandboxSettings(enabled=True, allow_unsandboxed=allow)
    assert runs_unsandboxed(settings, "curl x", disable_requested=requested) is unsandboxed
