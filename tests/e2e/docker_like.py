"""Run a command under a seccomp filter that refuses what Docker's default
profile refuses to an unprivileged container (the ``landlock`` fallback of
DEC-PERM-BASH-5): ``unshare``, ``clone`` with ``CLONE_NEWUSER`` (EPERM) and
``clone3`` (ENOSYS, so the C library falls back to ``clone``). With
``--no-landlock`` Landlock is refused too (ENOSYS), leaving no tier at all.

Usage: python docker_like.py [--no-landlock] -- ARGV...
"""

from __future__ import annotations

import ctypes
import os
import sys

from agentx.sandbox import exec_helper as bpf

SYS_UNSHARE = 272
SYS_CLONE = 56
SYS_CLONE3 = 435
CLONE_NEWUSER = 0x10000000
JSET_K = 0x45
ENOSYS = 38


def program(no_landlock: bool) -> list[bytes]:
    insn = bpf._insn
    eperm = bpf.RET_ERRNO | bpf.EPERM
    enosys = bpf.RET_ERRNO | ENOSYS
    prog = [
        insn(bpf.LD_W_ABS, 0, 0, bpf.SECCOMP_DATA_NR),
        insn(bpf.JEQ_K, 0, 1, SYS_UNSHARE),
        insn(bpf.RET_K, 0, 0, eperm),
        insn(bpf.JEQ_K, 0, 1, SYS_CLONE3),
        insn(bpf.RET_K, 0, 0, enosys),
    ]
    if no_landlock:
        for number in (
            bpf.SYS_LANDLOCK_CREATE_RULESET,
            bpf.SYS_LANDLOCK_ADD_RULE,
            bpf.SYS_LANDLOCK_RESTRICT_SELF,
        ):
            prog += [insn(bpf.JEQ_K, 0, 1, number), insn(bpf.RET_K, 0, 0, enosys)]
    prog += [
        insn(bpf.JEQ_K, 0, 3, SYS_CLONE),
        insn(bpf.LD_W_ABS, 0, 0, bpf.SECCOMP_DATA_ARG0),
        insn(JSET_K, 0, 1, CLONE_NEWUSER),
        insn(bpf.RET_K, 0, 0, eperm),
        insn(bpf.RET_K, 0, 0, bpf.RET_ALLOW),
    ]
    return prog


def main(argv: list[str]) -> None:
    no_landlock = argv[1] == "--no-landlock"
    rest = argv[2:] if no_landlock else argv[1:]
    assert rest[0] == "--", __doc__
    libc = bpf._libc()
    bpf.no_new_privs(libc)
    prog = program(no_landlock)
    code = b"".join(prog)
    buf = ctypes.create_string_buffer(code, len(code))
    fprog = bpf._SockFprog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    rc = libc.prctl(bpf.PR_SET_SECCOMP, bpf.SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    bpf._check(rc, "seccomp")
    os.execv(rest[1], rest[1:])


if __name__ == "__main__":
    main(sys.argv)
