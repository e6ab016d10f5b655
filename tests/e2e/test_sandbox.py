"""End-to-end: the Bash sandbox holds on the real kernel (DEC-PERM-BASH-5,
DEC-EXIT-1), as root and as an unprivileged user, in both tiers.

Each cell of the matrix is one real session running a list of Bash
commands; the test reads their results and then looks at the file system,
its own listeners and a sentinel process from outside. The ``landlock`` tier
is forced by running agentx under a Docker-like seccomp filter.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.agentx_process import DEFAULT_TIMEOUT, control, encode, parse_line, user
from tests.e2e.sandbox_harness import NOBODY, World, make_world, remove_world, run, start

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or os.geteuid() != 0,
    reason="needs bubblewrap (.ci/run installs it) and root, to run the unprivileged cells",
)

PY = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3"


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    made = make_world(NOBODY if getattr(request, "param", False) else 0)
    yield made
    remove_world(made)


def listeners() -> tuple[socket.socket, socket.socket]:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    tcp.setblocking(False)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    return tcp, udp


def nothing_arrived(tcp: socket.socket, udp: socket.socket) -> bool:
    try:
        tcp.accept()
    except BlockingIOError:
        pass
    else:
        return False
    try:
        udp.recv(16)
    except BlockingIOError:
        return True
    return False


@pytest.mark.parametrize("tier", ["namespaces", "landlock"])
@pytest.mark.parametrize("world", [False, True], ids=["root", "nobody"], indirect=True)
def test_the_boundary_holds(world: World, tier: str) -> None:
    as_nobody = world.uid == NOBODY
    out = world.outside
    (out / "existing").write_text("outside\n")
    (out / "existing").chmod(0o666)
    (world.workspace / "link").symlink_to(out / "target")
    git = world.workspace / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "config").write_text("[core]\n")
    suid = out / "suid-id"
    shutil.copy("/usr/bin/id", suid)
    os.chmod(suid, 0o4755 | stat.S_IRUSR)
    for name in ("denied-by-setting", "denied-by-rule"):
        (out / name).mkdir()
        (out / name / "key").write_text("secret\n")
    tcp, udp = listeners()
    sentinel = subprocess.Popen(
        ["sleep", "1000"],
        env={"SENTINEL_SECRET": "s3cr3t"},
        user=world.uid,
        group=world.uid,
    )
    commands = [
        f"echo x > {out}/f; echo rc=$?",  # 0 write outside
        "echo x > inside.txt && echo in-ok",  # 1 inside
        "echo x > /dev/null && echo devnull-ok",  # 2
        "echo x > link; echo rc=$?",  # 3 through a symlink out
        f"ln {out}/existing hardlink; echo rc=$?",  # 4
        f"exec 3<>/dev/tcp/127.0.0.1/{tcp.getsockname()[1]} && echo connected",  # 5
        f'{PY} -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'
        f".sendto(b'x', ('127.0.0.1', {udp.getsockname()[1]}))\"; echo rc=$?",  # 6
        f"{PY} -c \"import socket; a, b = socket.socketpair(); a.send(b'k');"
        " print('pair', b.recv(1))\"",  # 7
        "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",  # 8
        f"{suid} -u",  # 9
        "echo x > .git/hooks/pre-commit; echo x >> .git/config; echo done",  # 10
        f"kill -0 {sentinel.pid}; echo kill=$?",  # 11
        f"cat /proc/{sentinel.pid}/environ; echo environ=$?",  # 12
        "ls /proc | grep -c '^[0-9]'",  # 13
        f"cat {out}/denied-by-setting/key {out}/denied-by-rule/key {out}/existing",  # 14
    ]
    sandbox = {"enabled": True, "filesystem": {"denyRead": [f"/{out}/denied-by-setting"]}}
    permissions = {"deny": [f"Read(/{out}/denied-by-rule/**)"]}
    try:
        done = run(
            world,
            commands,
            as_nobody=as_nobody,
            tier=tier,
            sandbox=sandbox,
            permissions=permissions,
        )
    finally:
        sentinel.kill()
        sentinel.wait()
    results = done.results
    assert done.status == 0, done.stderr
    assert done.init["sandbox"] == {
        "enabled": True,
        "tier": tier,
        "network": "off",
        "reason": done.init["sandbox"]["reason"],
    }
    assert (done.init["sandbox"]["reason"] is None) == (tier == "namespaces")
    # Files: outside refused and absent, inside written, /dev/null open.
    assert "rc=1" in results[0] and not (out / "f").exists()
    assert "in-ok" in results[1] and (world.workspace / "inside.txt").exists()
    assert "devnull-ok" in results[2]
    assert "rc=1" in results[3] and not (out / "target").exists()
    assert "rc=1" in results[4] and not (world.workspace / "hardlink").exists()
    # Network: nothing reached the test's listeners; AF_UNIX still works.
    assert "connected" not in results[5]
    assert "rc=1" in results[6]
    assert nothing_arrived(tcp, udp)
    assert "pair b'k'" in results[7]
    # Privileges.
    assert "NoNewPrivs:\t1" in results[8] and "Seccomp:\t2" in results[8]
    assert results[9].strip() == str(world.uid)
    # Read denies: the setting's and the Read rule's; the rest stays readable.
    assert "secret" not in results[14] and "outside" in results[14]
    if tier == "namespaces":
        # Protected paths stay read-only; /proc shows the sandbox alone.
        assert not (git / "hooks" / "pre-commit").exists()
        assert (git / "config").read_text() == "[core]\n"
        assert "kill=1" in results[11]
        assert "s3cr3t" not in results[12]
        assert int(results[13].split()[0]) < 10
    else:
        # Landlock scopes signals; /proc/PID/environ is ptrace-guarded.
        assert "kill=1" in results[11]
        if as_nobody:
            assert "s3cr3t" not in results[12] and "environ=1" in results[12]


@pytest.mark.parametrize("fail", [True, False], ids=["failIfUnavailable", "degrade"])
def test_no_tier_refuses_or_reports_none(world: World, fail: bool) -> None:
    sandbox = {"enabled": True, "failIfUnavailable": fail}
    done = run(world, ["echo ran"], as_nobody=False, tier="none", sandbox=sandbox)
    assert done.status == 0, done.stderr
    assert done.init["sandbox"]["tier"] == "none"
    assert done.init["sandbox"]["network"] == "unrestricted"
    assert "Landlock is not available" in done.init["sandbox"]["reason"]
    assert done.stderr.count("WARNING: sandbox tier none") == 1
    if fail:
        assert "refused: the sandbox is unavailable" in done.results[0]
        assert "ran" not in done.results[0]
    else:
        assert done.results[0].strip() == "ran"


def test_a_network_allowlist_is_refused_at_start(world: World) -> None:
    sandbox = {"enabled": True, "network": {"allowedDomains": ["example.com"]}}
    done = run(world, ["echo ran"], as_nobody=False, tier="namespaces", sandbox=sandbox)
    assert done.status == 2
    assert done.records == []
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "allowedDomains" in lines[0]


def test_a_symlinked_git_is_protected_where_it_points(world: World) -> None:
    real = world.workspace / "realgit"
    (real / "hooks").mkdir(parents=True)
    (real / "config").write_text("[core]\n")
    (world.workspace / ".git").symlink_to("realgit")
    commands = [
        "echo x > .git/hooks/pre-commit; echo x >> .git/config; echo a",
        "echo x > realgit/hooks/pre-commit; echo x >> realgit/config; echo b",
        "echo x > other.txt && echo c",
    ]
    done = run(world, commands, as_nobody=False, tier="namespaces")
    assert done.status == 0, done.stderr
    assert not (real / "hooks" / "pre-commit").exists()
    assert (real / "config").read_text() == "[core]\n"
    assert (world.workspace / "other.txt").exists()


def marked(marker: str, *, exact: bool = False) -> list[int]:
    """Live processes whose command line holds ``marker`` (is exactly it, with
    ``exact``; arguments separated by spaces); a zombie is not live."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        text = cmdline.rstrip(b"\0").replace(b"\0", b" ")
        hit = text == marker.encode() if exact else marker.encode() in text
        if hit and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


@pytest.mark.parametrize("tier", ["namespaces", "landlock"])
@pytest.mark.parametrize("ending", ["eof", "sigterm"])
@pytest.mark.parametrize("world", [False, True], ids=["root", "nobody"], indirect=True)
def test_background_bash_in_the_sandbox_is_gone_at_the_end(
    world: World, tier: str, ending: str
) -> None:
    fifo = world.workspace / "started"
    os.mkfifo(fifo)
    marker = str(1_000_000 + secrets.randbelow(8_000_000))  # this run's own
    # "up" only once both have exec'd sleep: their command lines are exactly
    # `sleep MARKER`. Until then a forked child is bash (its command line,
    # this very text, holds the marker too) or setsid (`setsid sleep
    # MARKER`), so finding the marker in it proves nothing. "gone" if one
    # ended before.
    command = (
        "is_sleep() { { read -rd '' w0 && read -rd '' w1 && ! read -rd '' w2; }"
        f' < /proc/$1/cmdline && [ "$w0 $w1" = "sleep {marker}" ]; }} 2>/dev/null; '
        f"setsid sleep {marker} & a=$!; sleep {marker} & b=$!; "
        "until is_sleep $a && is_sleep $b; do [ -d /proc/$a ] && [ -d /proc/$b ] || break; done; "
        "if is_sleep $a && is_sleep $b; then echo up; else echo gone; fi > started; wait"
    )
    proc = start(
        world,
        [command],
        as_nobody=world.uid == NOBODY,
        tier=tier,
        sandbox={"enabled": True},
        background=True,
        # At EOF the session waits for its finite background work: its
        # timeout ends it (the setsid'd sleep has left its group).
        timeout_ms=3000 if ending == "eof" else 600_000,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(encode(user("start it")))
        proc.stdin.flush()
        with fifo.open() as pipe:
            assert pipe.readline() == "up\n"
        assert len(marked(f"sleep {marker}", exact=True)) == 2
        if tier == "namespaces":
            assert marked(str(world.root))  # bwrap, by its binds
        if ending == "eof":
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        status = proc.wait(DEFAULT_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert status == (0 if ending == "eof" else 143)
    assert marked(f"sleep {marker}", exact=True) == []
    assert marked(str(world.root)) == []  # no bwrap left


@pytest.mark.parametrize("allow", [True, False], ids=["allowed", "allowUnsandboxedCommands-false"])
def test_excluded_commands_and_the_unsandboxed_request(world: World, allow: bool) -> None:
    out = world.outside
    commands: list[str | dict[str, object]] = [
        f"touch {out}/by-excluded",
        f"touch {out}/by-excluded-in-a-pipeline | cat",  # cat is not excluded
        {"command": f"echo x > {out}/by-request", "dangerouslyDisableSandbox": True},
        f"echo x > {out}/plain; echo rc=$?",
    ]
    sandbox = {"enabled": True, "excludedCommands": ["touch"], "allowUnsandboxedCommands": allow}
    done = run(world, commands, as_nobody=False, tier="namespaces", sandbox=sandbox)
    assert done.status == 0, done.stderr
    assert (out / "by-excluded").exists()
    assert not (out / "by-excluded-in-a-pipeline").exists()
    assert (out / "by-request").exists() is allow
    assert not (out / "plain").exists()


@pytest.mark.parametrize("auto", [True, False], ids=["autoAllow", "asks"])
def test_auto_allow_runs_a_confined_command_without_a_prompt(world: World, auto: bool) -> None:
    """In ``default`` mode with no host answering (input closed), a Bash use
    is denied unless the sandbox confines it under autoAllowBashIfSandboxed;
    a deny rule, an excluded command and an unsandboxed request still are."""
    commands: list[str | dict[str, object]] = [
        "echo confined-ran",
        "curl --version",  # denied by rule
        "touch excluded-ran",  # excluded: not confined, so asked
        {"command": "echo unsandboxed-ran", "dangerouslyDisableSandbox": True},
    ]
    sandbox = {"enabled": True, "autoAllowBashIfSandboxed": auto, "excludedCommands": ["touch"]}
    done = run(
        world,
        commands,
        as_nobody=False,
        tier="namespaces",
        sandbox=sandbox,
        permissions={"deny": ["Bash(curl:*)"]},
        mode="default",
    )
    assert done.status == 0, done.stderr
    assert ("confined-ran" in done.results[0]) is auto
    assert "curl" not in done.results[1] or "denied" in done.results[1].lower()
    assert not (world.workspace / "excluded-ran").exists()
    assert "unsandboxed-ran" not in done.results[3]


def test_the_initialize_response_reports_the_sandbox(world: World) -> None:
    proc = start(world, [], as_nobody=False, tier="landlock", sandbox={"enabled": True})
    try:
        out, err = proc.communicate(encode(control("i1", "initialize")), timeout=DEFAULT_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    records = [parse_line(line) for line in out.splitlines(keepends=True)]
    response = next(r for r in records if r.get("type") == "control_response")
    sandbox = response["response"]["response"]["sandbox"]
    assert sandbox["tier"] == "landlock" and sandbox["network"] == "off"
    assert sandbox["enabled"] is True and "bubblewrap failed" in sandbox["reason"]
    assert err.decode().count("WARNING: sandbox tier landlock") == 1
