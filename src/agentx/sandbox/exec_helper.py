"""The exec helper: confine this process, then exec the command (stdlib only).

agentx runs it by path as ``python -I -S exec_helper.py OPTIONS -- ARGV...``
(isolated mode, no site packages: nothing from the workspace or the
environment is imported), inside bubblewrap in the ``namespaces`` tier and
alone in the ``landlock`` tier. It never uses ``preexec_fn``-style hooks: it
is its own process, between agentx's ``fork`` and the shell's ``exec``.

In order, each step failing closed (one line on stderr, exit 126, nothing
exec'd):

1. ``prctl(PR_SET_NO_NEW_PRIVS)``: no setuid or file capability ever adds a
   privilege again (also what lets an unprivileged process load a filter).
2. Landlock (best-effort by ABI): reads allowed under ``/`` except the denied
   paths (punched out: Landlock only ever allows, so the rules go on every
   sibling along the way instead), writes only beneath the writable roots
   and a few devices; with ABI 2 links across rule boundaries are refused
   (``REFER``), ABI 3 truncation, ABI 4 every TCP bind and connect when the
   network is off, ABI 5 device ioctls, ABI 6 signals to and abstract
   sockets of processes outside the sandbox. ``POLICY["landlock"]`` is
   ``"required"`` (the ``landlock`` tier) or ``"best-effort"``.

The policy comes as options, no JSON (importing ``json`` would cost the
helper a third of its start): ``--write PATH`` per writable root,
``--deny-read PATH`` per denied path, ``--network on|off`` and
``--landlock required|best-effort``.
3. seccomp: a hand-built BPF program (:func:`seccomp_program`): a foreign
   architecture or an x32 call kills the process; ``ptrace``,
   ``process_vm_*``, ``io_uring_*``, kernel-module, mount, keyring, ``bpf``,
   ``perf_event_open``, ``userfaultfd`` and file-handle calls fail with
   EPERM; with the network off ``socket``/``socketpair`` of any family but
   ``AF_UNIX`` fail with EPERM (UDP and raw sockets too, which Landlock
   alone lets through).
4. ``execve`` of ARGV with the environment as given.

``--probe`` instead applies the same steps to a trivial policy and prints
the Landlock ABI it found, for agentx's one probe per session.

Why not libseccomp's bindings: the helper runs with ``-I -S`` and must not
import anything installed (a workspace or venv is writable by the very
commands it confines); ``pyseccomp`` is a ctypes wrapper that still needs
``libseccomp.so`` and a site directory. The filter is 60 instructions,
checked by the tests against the real kernel.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from typing import Any

# --- prctl and syscalls (x86_64) ------------------------------------------------
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1

# --- Landlock access rights -------------------------------------------------------
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13
FS_TRUNCATE = 1 << 14
FS_IOCTL_DEV = 1 << 15
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

#: The rights each ABI knows (a right the kernel does not know is refused).
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
FS_LATEST = (1 << 16) - 1
READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
#: What a file (not a directory) rule may carry.
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
WRITE = FS_LATEST & ~READ
DEVICE_RIGHTS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV
#: Devices a command may always open for writing.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")

# --- seccomp ---------------------------------------------------------------------
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
RET_KILL_PROCESS = 0x80000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
EPERM = 1
AF_UNIX = 1
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
RET_K = 0x06
SECCOMP_DATA_NR = 0
SECCOMP_DATA_ARCH = 4
SECCOMP_DATA_ARG0 = 16
SYS_SOCKET = 41
SYS_SOCKETPAIR = 53
#: Calls refused with EPERM (x86_64 numbers).
DENIED_SYSCALLS = {
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "reboot": 169,
    "swapon": 167,
    "swapoff": 168,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "bpf": 321,
    "perf_event_open": 298,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "userfaultfd": 323,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
}

EXIT_REFUSED = 126


class Refused(Exception):
    """A confinement step failed: nothing is exec'd."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise Refused(f"{what}: {os.strerror(err)}")
    return result


def no_new_privs(libc: ctypes.CDLL) -> None:
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


# --- Landlock ---------------------------------------------------------------------


def landlock_abi(libc: ctypes.CDLL) -> int:
    """The kernel's Landlock ABI version; 0 where Landlock is absent or off."""
    abi = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(int(abi), 0)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def read_rules(denied: list[str]) -> list[str]:
    """The paths that get read rights: ``/`` with every denied path punched out
    (a rule allows its whole hierarchy, so a directory holding a denied path
    gets no rule and each of its other entries gets one)."""
    rules: list[str] = []

    def grant(path: str) -> None:
        if any(_inside(d, path) for d in denied):
            if path in denied:
                return
            try:
                names = sorted(os.listdir(path))
            except OSError:
                return
            for name in names:
                grant(os.path.join(path, name))
            return
        real = os.path.realpath(path)
        if any(_inside(real, d) or _inside(d, real) for d in denied):
            return  # a symlink into (or above) a denied path: no rule through it
        rules.append(path)

    grant("/")
    return rules


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # absent (a device this system lacks): nothing to allow
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            access &= FILE_RIGHTS
        if not access:
            return
        attr = struct.pack("=Qi", access, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        _check(
            libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, buf, 0),
            f"landlock rule for {path}",
        )
    finally:
        os.close(fd)


def landlock(libc: ctypes.CDLL, policy: dict[str, Any], abi: int) -> bool:
    """Restrict this process (see the module docstring); False when not applied."""
    if abi < 1:
        if policy.get("landlock") == "required":
            raise Refused("landlock: not available in this kernel")
        return False
    fs = FS_BY_ABI.get(abi, FS_LATEST)
    net = (NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 and not policy["network"] else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _check(libc.syscall(SYS_LANDLOCK_CREATE_RULESET, buf, len(attr), 0), "landlock")
    try:
        for path in read_rules(policy["read_denied"]):
            _add_rule(libc, ruleset, path, READ & fs)
        for path in policy["writable"]:
            _add_rule(libc, ruleset, path, WRITE & fs)
        for path in DEVICES:
            _add_rule(libc, ruleset, path, DEVICE_RIGHTS & fs)
        _check(libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock restrict")
    finally:
        os.close(ruleset)
    return True


# --- seccomp ----------------------------------------------------------------------


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(network: bool) -> list[bytes]:
    """The filter as a list of BPF instructions (see the module docstring)."""
    errno_eperm = RET_ERRNO | EPERM
    prog = [
        _insn(LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH),
        _insn(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(RET_K, 0, 0, RET_KILL_PROCESS),
        _insn(LD_W_ABS, 0, 0, SECCOMP_DATA_NR),
        _insn(JGE_K, 0, 1, X32_SYSCALL_BIT),
        _insn(RET_K, 0, 0, RET_KILL_PROCESS),
    ]
    for number in sorted(DENIED_SYSCALLS.values()):
        prog += [_insn(JEQ_K, 0, 1, number), _insn(RET_K, 0, 0, errno_eperm)]
    if not network:
        for number in (SYS_SOCKET, SYS_SOCKETPAIR):
            prog += [
                _insn(JEQ_K, 0, 4, number),
                _insn(LD_W_ABS, 0, 0, SECCOMP_DATA_ARG0),
                _insn(JEQ_K, 0, 1, AF_UNIX),
                _insn(RET_K, 0, 0, RET_ALLOW),
                _insn(RET_K, 0, 0, errno_eperm),
            ]
    prog.append(_insn(RET_K, 0, 0, RET_ALLOW))
    return prog


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp(libc: ctypes.CDLL, network: bool) -> None:
    if os.uname().machine != "x86_64":
        raise Refused(f"seccomp: no filter for {os.uname().machine}")
    prog = seccomp_program(network)
    code = b"".join(prog)
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    _check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")


# --- main -------------------------------------------------------------------------


def confine(policy: dict[str, Any]) -> int:
    """Every step in order; the Landlock ABI in force (0: none)."""
    libc = _libc()
    no_new_privs(libc)
    abi = landlock_abi(libc)
    applied = landlock(libc, policy, abi)
    seccomp(libc, policy["network"])
    return abi if applied else 0


PROBE_POLICY: dict[str, Any] = {
    "writable": [],
    "read_denied": [],
    "network": False,
    "landlock": "best-effort",
}


OPTIONS = {"--write": "writable", "--deny-read": "read_denied"}


def parse(args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The policy and the command from ``OPTIONS -- ARGV...``."""
    policy: dict[str, Any] = {
        "writable": [],
        "read_denied": [],
        "network": False,
        "landlock": "best-effort",
    }
    rest = list(args)
    while rest and rest[0] != "--":
        if len(rest) < 2:
            raise Refused(f"{rest[0]} needs a value")
        option, value = rest[0], rest[1]
        rest = rest[2:]
        if option in OPTIONS:
            policy[OPTIONS[option]].append(value)
        elif option == "--network" and value in ("on", "off"):
            policy["network"] = value == "on"
        elif option == "--landlock" and value in ("required", "best-effort"):
            policy["landlock"] = value
        else:
            raise Refused(f"unknown option {option} {value}")
    if len(rest) < 2:
        raise Refused("usage: exec_helper.py OPTIONS -- ARGV...")
    return policy, rest[1:]


def main(argv: list[str]) -> int:
    command = ["?"]
    try:
        if argv[1:] == ["--probe"]:
            # This helper's own stdout, a pipe the probe reads: never
            # agentx's, which only the writer actor writes (WIRE-003).
            sys.stdout.write(f"{confine(PROBE_POLICY)}\n")
            return 0
        policy, command = parse(argv[1:])
        confine(policy)
        os.execv(command[0], command)
    except Refused as exc:
        sys.stderr.write(f"agentx sandbox: {exc}\n")
    except OSError as exc:
        sys.stderr.write(f"agentx sandbox: cannot run {command[0]}: {exc.strerror}\n")
    return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
