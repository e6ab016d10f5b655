"""Path rules across tools and the run-time path verdict (DEC-PERM-PATH)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from agentx.messages.permission_decisions import admit_path, evaluate
from agentx.messages.permission_rules import (
    Mode,
    PermissionRules,
    governs,
    parse_rule,
    rule_problem,
)

CWD = PurePosixPath("/work/proj")
EXTRA = PurePosixPath("/data/shared")
READ_ONLY = {"Read": True, "Glob": True, "Grep": True, "Write": False, "Edit": False}


@pytest.mark.parametrize(
    ("rule_tool", "tool", "expected"),
    [
        ("Read", "Read", True),
        ("Read", "Glob", True),
        ("Read", "Grep", True),
        ("Read", "Write", False),
        ("Read", "Edit", False),
        ("Edit", "Edit", True),
        ("Edit", "Write", True),
        ("Edit", "Read", False),
        ("Edit", "Grep", False),
        ("Write", "Edit", False),
        ("Grep", "Read", False),
        ("Glob", "Grep", False),
    ],
)
def test_rule_scope(rule_tool: str, tool: str, expected: bool) -> None:
    assert governs(rule_tool, tool) is expected


@pytest.mark.parametrize("tool", ["Read", "Glob", "Grep", "Write", "Edit"])
@pytest.mark.parametrize(
    ("behavior_of", "rule", "path"),
    [
        ("deny", "Read(secrets/**)", "/work/proj/secrets/k"),
        ("deny", "Edit(secrets/**)", "/work/proj/secrets/k"),
        ("ask", "Read(secrets/**)", "/work/proj/secrets"),
        ("deny", "Read", "/work/proj/a"),
    ],
    ids=["read-deny", "edit-deny", "read-ask-dir", "bare-read-deny"],
)
def test_path_rules_govern_the_tools_they_scope(
    tool: str, behavior_of: str, rule: str, path: str
) -> None:
    rules = PermissionRules.parse(**{behavior_of: (rule,)})
    decision = evaluate(
        tool,
        {},
        read_only=READ_ONLY[tool],
        paths=(PurePosixPath(path),),
        rules=rules,
        mode="bypassPermissions",
        cwd=CWD,
    )
    governed = governs(rule.split("(", maxsplit=1)[0], tool)
    assert (decision.behavior == behavior_of) is governed


def test_deny_beats_allow_whatever_the_order_of_sources() -> None:
    """Policy, flag and session rules are concatenated; a deny anywhere wins."""
    rules = PermissionRules.parse(allow=("Grep", "Read(secrets/**)"), deny=("Read(secrets/**)",))
    rules = rules.added("allow", PermissionRules.parse(allow=("Read",)).allow)
    decision = evaluate(
        "Grep",
        {},
        read_only=True,
        paths=(CWD / "secrets" / "k",),
        rules=rules,
        mode="bypassPermissions",
        cwd=CWD,
    )
    assert decision.behavior == "deny"


def _admit(
    path: str,
    *,
    granted: tuple[str, ...] = (),
    granted_named: tuple[str, ...] = (),
    named: tuple[str, ...] = (),
    mode: Mode = "default",
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
) -> tuple[str, str | None]:
    decision = admit_path(
        "Grep",
        PurePosixPath(path),
        rules=PermissionRules.parse(allow=allow, deny=deny, ask=ask),
        mode=mode,
        cwd=CWD,
        add_dirs=(EXTRA,),
        granted=tuple(PurePosixPath(g) for g in granted),
        granted_named=tuple(PurePosixPath(g) for g in granted_named),
        named=tuple(PurePosixPath(n) for n in named),
    )
    return decision.behavior, decision.blocked_path


@pytest.mark.parametrize(
    ("path", "kwargs", "expected"),
    [
        ("/work/proj/a", {}, ("allow", None)),
        ("/data/shared/x", {}, ("allow", None)),
        ("/etc/passwd", {}, ("ask", "/etc/passwd")),
        ("/work/projX/a", {}, ("ask", "/work/projX/a")),
        ("/etc/passwd", {"granted": ("/etc/passwd",)}, ("allow", None)),
        ("/etc/x/y", {"granted": ("/etc/x",)}, ("allow", None)),
        ("/etc/xy", {"granted": ("/etc/x",)}, ("ask", "/etc/xy")),
        ("/etc/passwd", {"mode": "bypassPermissions"}, ("allow", None)),
        ("/etc/passwd", {"allow": ("Read(//etc/*)",)}, ("allow", None)),
        ("/etc/passwd", {"allow": ("Read(/etc/*)",)}, ("ask", "/etc/passwd")),
        ("/work/proj/etc/p", {"allow": ("Read(/etc/*)",), "ask": ("Read",)}, ("allow", None)),
        ("/etc/passwd", {"allow": ("Read",)}, ("ask", "/etc/passwd")),
        ("/etc/passwd", {"granted": ("/etc/passwd",), "deny": ("Read(/etc/**)",)}, ("deny", None)),
        ("/work/proj/s/k", {"ask": ("Read(s/**)",)}, ("ask", None)),
        ("/work/proj/s/k", {"ask": ("Read(s/**)",), "granted": ("/work/proj/s",)}, ("allow", None)),
        ("/work/proj/s/k", {"ask": ("Read(s/**)",), "granted": ("/work/proj",)}, ("ask", None)),
        ("/work/proj/s/k", {"ask": ("Read(s/**)",), "allow": ("Read",)}, ("allow", None)),
        ("/work/proj/s/k", {"deny": ("Read(s/**)",), "mode": "bypassPermissions"}, ("deny", None)),
        ("/work/proj/d/k", {"deny": ("Read(s/**)",), "named": ("/work/proj/s/k",)}, ("deny", None)),
        ("/work/proj/d/k", {"ask": ("Read(s/**)",), "named": ("/work/proj/s/k",)}, ("ask", None)),
        (
            "/work/proj/d/k",
            {
                "ask": ("Read(s/**)",),
                "named": ("/work/proj/s/k",),
                "granted_named": ("/work/proj/s",),
            },
            ("allow", None),
        ),
        ("/etc/k", {"named": ("/work/proj/k",)}, ("ask", "/etc/k")),
        ("/etc/k", {"allow": ("Read(k)",), "named": ("/work/proj/k",)}, ("ask", "/etc/k")),
    ],
    ids=[
        "cwd",
        "add-dir",
        "outside",
        "sibling-prefix",
        "granted-file",
        "under-granted-outside-root",
        "prefix-of-granted-is-not-under",
        "bypass",
        "allow-glob-names-it",
        "single-slash-allow-is-rooted-at-the-project",
        "single-slash-allow-inside-the-project",
        "bare-allow-does-not-cross-boundary",
        "deny-beats-grant",
        "ask-rule",
        "ask-settled-by-granted-root",
        "ask-not-settled-by-wider-root",
        "allow-beats-ask",
        "deny-in-bypass",
        "deny-on-the-spelling",
        "ask-on-the-spelling",
        "ask-settled-by-the-granted-spelling",
        "boundary-never-on-the-spelling",
        "allow-glob-never-names-the-spelling-outside",
    ],
)
def test_admit_path(path: str, kwargs: dict[str, object], expected: tuple[str, str | None]) -> None:
    assert _admit(path, **kwargs) == expected  # type: ignore[arg-type]


HOME = "/home/u"
USER_ROOT = "/home/u/.agentx"

#: Claude Code's path rule spellings (DEC-PERM-PATH): (rule, path, matched).
#: Rules come from the project source (``/`` is the cwd) unless the row says user.
SPELLINGS = [
    ("Read(~/.ssh/**)", "/home/u/.ssh/id_rsa", True),
    ("Read(~/.ssh/**)", "/work/proj/.ssh/id_rsa", False),
    ("Read(~/**)", "/home/u/a/b", True),
    ("Read(~/**)", "/etc/passwd", False),
    ("Read(~)", "/home/u/x", True),
    ("Read(~/.aws/credentials)", "/home/u/.aws/credentials", True),
    ("Read(//etc/**)", "/etc/passwd", True),
    ("Read(//etc/**)", "/work/proj/etc/passwd", False),
    ("Read(//etc/passwd)", "/etc/passwd", True),
    ("Read(//etc)", "/etc/ssh/sshd_config", True),
    ("Read(//)", "/anything/at/all", True),
    ("Read(secrets/)", "/work/proj/secrets/k", True),
    ("Read(secrets/)", "/work/proj/secrets/a/b/k", True),
    ("Read(secrets/)", "/work/proj/sub/secrets/k", True),
    ("Read(secrets)", "/work/proj/secrets/k", True),
    ("Read(secrets)", "/work/proj/secrets", True),
    ("Read(secrets)", "/work/proj/secretsx", False),
    ("Read(.env)", "/work/proj/.env", True),
    ("Read(.env)", "/work/proj/sub/.env", True),
    ("Read(.env)", "/work/proj/.env.local", False),
    ("Read(./.env)", "/work/proj/sub/.env", True),
    ("Read(.env.*)", "/work/proj/.env.local", True),
    ("Read(*.pem)", "/work/proj/a/b/k.pem", True),
    ("Read(*.pem)", "/elsewhere/k.pem", False),
    ("Read(src/**)", "/work/proj/src/a/b.py", True),
    ("Read(src/**)", "/work/proj/lib/src/a.py", False),
    ("Read(src/*.py)", "/work/proj/src/a/b.py", False),
    ("Read(src/**/*.py)", "/work/proj/src/a/b.py", True),
    ("Read(/docs/**)", "/work/proj/docs/a.md", True),
    ("Read(/docs/**)", "/work/proj/x/docs/a.md", False),
    ("Read(/docs)", "/work/proj/docs/a/b.md", True),
    # A deny written for the filesystem root also holds there.
    ("Read(/etc/**)", "/etc/passwd", True),
    ("Read(/.env)", "/work/proj/.env", True),
    ("Read(/.env)", "/work/proj/sub/.env", False),
    ("Edit(~/.bashrc)", "/home/u/.bashrc", True),
    ("Read(**)", "/work/proj/a", True),
    ("Read(*)", "/work/proj/a/b", True),
]


@pytest.mark.parametrize(("rule", "path", "matched"), SPELLINGS)
def test_claude_code_path_spellings_deny(rule: str, path: str, matched: bool) -> None:
    """Every Claude Code spelling is rooted as Claude Code roots it; a deny never fails open."""
    rules = PermissionRules.parse(deny=(rule,), root=str(CWD), home=HOME)
    tool = "Write" if rule.startswith("Edit") else "Read"
    decision = evaluate(
        tool,
        {},
        read_only=tool == "Read",
        paths=(PurePosixPath(path),),
        rules=rules,
        mode="bypassPermissions",
        cwd=CWD,
    )
    assert (decision.behavior == "deny") is matched, decision.reason


@pytest.mark.parametrize(
    ("rule", "path", "matched"),
    [
        ("Read(/notes/**)", "/home/u/.agentx/notes/a", True),
        ("Read(/notes/**)", "/work/proj/notes/a", False),
        ("Read(~/notes/**)", "/home/u/notes/a", True),
        ("Read(notes/**)", "/work/proj/notes/a", True),
    ],
)
def test_a_user_rule_is_rooted_at_the_user_settings_folder(
    rule: str, path: str, matched: bool
) -> None:
    """``/`` in user settings is the ``$AGENTX_HOME`` folder (an allow sees only that root)."""
    rules = PermissionRules.parse(allow=(rule,), root=USER_ROOT, home=HOME)
    decision = evaluate(
        "Read",
        {},
        read_only=True,
        paths=(PurePosixPath(path),),
        rules=rules,
        mode="default",
        cwd=CWD,
        add_dirs=(PurePosixPath("/home/u"),),
    )
    assert (decision.reason.startswith("allowed by rule")) is matched, decision.reason


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("Read(!secrets/**)", "negation"),
        ("Read(../x)", ".."),
        ("Read(a/../b)", ".."),
        ("Edit(~root/.ssh)", "~user"),
        ("Read(.env:*)", ":*"),
        ("WebFetch(example.com)", "domain:<host>"),
        ("WebFetch(domain:)", "domain:<host>"),
        ("SandboxNetworkAccess(example.com)", "domain:<host>"),
        ("Task(explore)", "take no specifier"),
        ("mcp__srv__tool(x)", "MCP"),
        ("Bash(:*)", "no command"),
        ("Bash(npm:* test)", ":* may only end"),
    ],
)
def test_rules_that_can_match_nothing_are_named(rule: str, problem: str) -> None:
    found = rule_problem(parse_rule(rule))
    assert found is not None and problem in found


@pytest.mark.parametrize(
    "rule",
    [
        "Read(~/.ssh/**)",
        "Read(//etc/**)",
        "Read(dir/)",
        "Read(dir)",
        "Read(/src/**)",
        "Bash(curl *)",
        "Bash(git * main)",
        "Bash(*)",
        "WebFetch(domain:example.com)",
        "Read",
        "mcp__srv",
        "NotAToolHere",
    ],
)
def test_rules_that_can_match_have_no_problem(rule: str) -> None:
    assert rule_problem(parse_rule(rule)) is None
