"""Which tier this machine gives the sandbox, probed once and remembered
(DEC-PERM-BASH-5, DECISIONS section 8).

The tiers, best first: ``namespaces`` (bubblewrap: its own user, PID, IPC,
UTS and network namespaces, then the exec helper inside), ``landlock`` (the
exec helper alone, where user namespaces are refused: Docker's default
seccomp profile, AppArmor's unprivileged-userns restriction, a nested
sandbox) and ``none``. A tier counts only once a real confined run of the
exec helper's ``--probe`` succeeded through it.

The verdict depends on the kernel, the user, the bubblewrap binary, the
helper, the interpreter and the filters and sysctls that refuse namespaces,
so it is kept in ``$AGENTX_HOME/sandbox-probe`` under a fingerprint of
those (as the media runtime check keeps its own): a start-up whose
fingerprint matches reads the verdict from a few ``stat`` and ``read``
calls; any difference probes again (two short child processes).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

from msgspec import Struct

from agentx.messages.sandbox_policy import Tier

RECORD_NAME: Final = "sandbox-probe"
HELPER: Final = Path(__file__).with_name("exec_helper.py")
#: A probe run that takes longer than this counts as failed.
PROBE_TIMEOUT_S: Final = 10.0
#: What a process under a namespace-refusing filter or policy shows.
_SIGNALS: Final = (
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)


class Probe(Struct, frozen=True, kw_only=True):
    tier: Tier
    #: Why the tier is not ``namespaces`` (None when it is).
    reason: str | None
    bwrap: str | None


def helper_argv() -> list[str]:
    """The exec helper run by path, isolated and without site packages: on
    agentx's own interpreter, else (one this user cannot execute) on the
    ``python3`` of PATH; the helper needs nothing but the standard library."""
    python = sys.executable
    if not os.access(python, os.X_OK):
        python = shutil.which("python3") or python
    return [python, "-I", "-S", str(HELPER)]


def private_tmp() -> list[str]:
    """bubblewrap's private ``/tmp``, with read-only binds back for whatever
    the exec helper needs from below it: the interpreter (a virtual
    environment may live in ``/tmp``), its standard library and the helper
    itself. Without them an agentx installed under ``/tmp`` could not start
    its helper in the namespaces tier."""
    needed = {
        os.path.realpath(path)
        for path in (
            sys.prefix,
            sys.base_prefix,
            os.path.dirname(sys.executable),
            os.path.dirname(os.path.realpath(sys.executable)),
            str(HELPER.parent),
        )
    }
    under = sorted(p for p in needed if p.startswith("/tmp/") and os.path.isdir(p))
    binds = ["--tmpfs", "/tmp"]
    for path in under:
        binds += ["--ro-bind", path, path]
    return binds


def find_bwrap(configured: str | None, workspace: tuple[str, ...]) -> str | None:
    """``sandbox.bwrapPath``, else ``bwrap`` on PATH; never one inside a
    writable root (a sandboxed command could replace it for the next one)."""
    found = configured if configured is not None else shutil.which("bwrap")
    if found is None:
        return None
    real = os.path.realpath(found)
    if any(real == root or real.startswith(root.rstrip("/") + "/") for root in workspace):
        return None
    return real if os.access(real, os.X_OK) else None


def bwrap_probe_argv(bwrap: str) -> list[str]:
    return [
        bwrap,
        *NAMESPACE_FLAGS,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *private_tmp(),
        "--",
        *helper_argv(),
        "--probe",
    ]


#: bubblewrap's own namespaces and process rules, the same for the probe and every command.
NAMESPACE_FLAGS: Final = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)


def _run(argv: list[str]) -> tuple[bool, str]:
    """Run one probe; (passed, the first line of what it said)."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    said = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
    first = said[0] if said else f"exit status {done.returncode}"
    if done.returncode != 0:
        return False, first
    return done.stdout.strip() not in (b"", b"0"), "Landlock is not available"


def probe(bwrap: str | None) -> Probe:
    """Try the tiers in order (see the module docstring)."""
    reasons = []
    if bwrap is None:
        reasons.append("bubblewrap (bwrap) not found")
    else:
        passed, said = _run(bwrap_probe_argv(bwrap))
        if passed:
            return Probe(tier="namespaces", reason=None, bwrap=bwrap)
        reasons.append(f"bubblewrap failed: {said}")
    passed, said = _run([*helper_argv(), "--probe"])
    if passed:
        return Probe(tier="landlock", reason="; ".join(reasons), bwrap=None)
    reasons.append(f"the exec helper failed: {said}")
    return Probe(tier="none", reason="; ".join(reasons), bwrap=None)


def _stat_line(path: str | None) -> str:
    if path is None:
        return "-"
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}:absent"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read(4096)
    except OSError:
        return "-"


def fingerprint(bwrap: str | None) -> str:
    """Everything the verdict depends on (see the module docstring)."""
    status = _read("/proc/self/status")
    filters = [line for line in status.splitlines() if line.startswith("Seccomp")]
    uname = os.uname()
    parts = [
        uname.release,
        uname.version,
        uname.machine,
        f"{os.getuid()}:{os.getgid()}",
        sys.executable,
        sys.version,
        _stat_line(bwrap),
        _stat_line(str(HELPER)),
        " ".join(private_tmp()),
        *filters,
        *(_read(path).strip() for path in _SIGNALS),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def cached_probe(home: Path, bwrap: str | None) -> Probe:
    """The remembered verdict for this fingerprint, else a fresh probe (kept)."""
    record = home / RECORD_NAME
    seal = fingerprint(bwrap)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        kept = json.loads(record.read_text(encoding="utf-8"))
        if kept["seal"] == seal and kept["tier"] in ("namespaces", "landlock", "none"):
            return Probe(tier=kept["tier"], reason=kept["reason"], bwrap=kept["bwrap"])
    found = probe(bwrap)
    data = {"seal": seal, "tier": found.tier, "reason": found.reason, "bwrap": found.bwrap}
    with contextlib.suppress(OSError):
        temp = record.with_name(f".{RECORD_NAME}.{os.getpid()}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temp, record)
    return found
