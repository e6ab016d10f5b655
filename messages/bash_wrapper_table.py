"""The wrappers a Bash permission rule sees through, and how each reads its
arguments (DEC-PERM-BASH-4).

Each entry is the option grammar of the wrapper as its manual gives it
(util-linux, coreutils, sudo, systemd, GNU parallel, procps...). An option not
listed makes the line opaque (DEC-PERM-BASH-5): the matcher never guesses
where the wrapped program starts. ``stops`` lists only options after which the
wrapper certainly runs nothing.

:data:`SHELL_WHEN_EMPTY`: wrappers that start an interactive shell, reading
its commands from the input, when no program is given (``chroot DIR``,
``sudo -s``, ``nsenter -t 1 -a``): opaque.
"""

from __future__ import annotations

from typing import Final

from agentx.messages.bash_words import Opaque, Word
from agentx.messages.bash_wrappers import (
    LeadingOperand,
    LongOnly,
    NumberOperand,
    Options,
    Skip,
    after_marker,
    env,
    ip_netns_exec,
    parallel,
    sg,
    watch,
)


def _set(*names: str) -> frozenset[str]:
    return frozenset(names)


_HELP: Final = _set("-h", "-V", "--help", "--version")

_RUNUSER: Final = Options(
    flags="lmpP",
    with_value="ugGsw",
    long_flags=_set("--login", "--preserve-environment", "--pty"),
    long_with_value=_set("--user", "--group", "--supp-group", "--shell", "--whitelist-environment"),
)


def _runuser(argv: list[Word], index: int) -> int | Opaque | None:
    """``runuser -u USER cmd...``; without ``-u`` it starts USER's shell
    (``runuser -c`` is a shell body, read before this)."""
    for word in argv[index:]:
        text = word.value or ""
        if text == "--":
            break
        if text.startswith("--user") or (text[:1] == "-" and text[1:2] != "-" and "u" in text):
            return _RUNUSER(argv, index)
    return Opaque("runuser starts a shell the matcher cannot see")


_SETARCH: Final = Options(
    flags="v3BFILRSTXZ",
    long_flags=_set(
        "--verbose",
        "--3gb",
        "--4gb",
        "--uname-2.6",
        "--addr-no-randomize",
        "--fdpic-funcptrs",
        "--mmap-page-zero",
        "--addr-compat-layout",
        "--read-implies-exec",
        "--32bit",
        "--short-inode",
        "--whole-seconds",
        "--sticky-timeouts",
    ),
    stops=_set("--list", *_HELP),
)

_SYSTEMD_RUN: Final = Options(
    flags="rtPqGdS",
    with_value="upEHMC",
    long_flags=_set(
        "--user",
        "--system",
        "--scope",
        "--remain-after-exit",
        "--send-sighup",
        "--pty",
        "--pty-late",
        "--pipe",
        "--quiet",
        "--collect",
        "--same-dir",
        "--shell",
        "--wait",
        "--no-block",
        "--no-ask-password",
        "--slice-inherit",
        "--on-clock-change",
        "--on-timezone-change",
        "--ignore-failure",
    ),
    long_with_value=_set(
        "--unit",
        "--property",
        "--description",
        "--slice",
        "--service-type",
        "--uid",
        "--gid",
        "--nice",
        "--working-directory",
        "--setenv",
        "--on-active",
        "--on-boot",
        "--on-startup",
        "--on-unit-active",
        "--on-unit-inactive",
        "--on-calendar",
        "--timer-property",
        "--path-property",
        "--socket-property",
        "--host",
        "--machine",
        "--expand-environment",
        "--background",
        "--json",
        "--job-mode",
        "--capsule",
        "--chdir",
        "--group",
    ),
    stops=_set("-h", "--help", "--version"),
)

WRAPPERS: Final[dict[str, Skip]] = {
    "env": env,
    "command": Options(flags="p", stops=_set("-v", "-V")),
    "builtin": Options(),
    "exec": Options(flags="cl", with_value="a"),
    "nohup": Options(),
    # The keywords ``!``, ``time`` and ``coproc`` the grammar can read as programs
    # (``! ! X=1 cmd``) take a whole simple command, assignments included.
    "!": Options(assignments=True),
    "coproc": Options(assignments=True),
    "time": Options(
        flags="pavq",
        with_value="fo",
        long_flags=_set("--portability", "--append", "--verbose", "--quiet"),
        long_with_value=_set("--format", "--output"),
        assignments=True,
    ),
    "nice": Options(with_value="n", long_with_value=_set("--adjustment"), numbers=True),
    "timeout": Options(
        flags="vpf",
        with_value="ks",
        long_flags=_set("--preserve-status", "--foreground", "--verbose"),
        long_with_value=_set("--kill-after", "--signal"),
        operands=1,
    ),
    "xargs": Options(
        flags="0prtxo",
        with_value="adEILnPs",
        optional_value="eil",
        long_flags=_set(
            "--null",
            "--interactive",
            "--no-run-if-empty",
            "--verbose",
            "--exit",
            "--open-tty",
            "--eof",
            "--replace",
            "--max-lines",
        ),
        long_with_value=_set(
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ),
    ),
    "setsid": Options(flags="cfw", long_flags=_set("--ctty", "--fork", "--wait")),
    "stdbuf": Options(with_value="ioe", long_with_value=_set("--input", "--output", "--error")),
    "ionice": Options(
        flags="t",
        with_value="cn",
        long_flags=_set("--ignore"),
        long_with_value=_set("--class", "--classdata"),
        stops=_set("-p", "-P", "-u", "--pid", "--pgid", "--uid"),
    ),
    "runuser": _runuser,
    "doas": Options(flags="nsL", with_value="ua", stops=_set("-C")),
    # ``flock FILE cmd...`` (``flock -c`` is a shell body, read before this).
    "flock": Options(
        flags="sxeunoF",
        with_value="wE",
        long_flags=_set(
            "--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close", "--no-fork"
        )
        | _set("--verbose"),
        long_with_value=_set("--wait", "--timeout", "--conflict-exit-code"),
        operands=1,
    ),
    "sudo": Options(
        flags="AbBEHiKknPSsNh",
        with_value="ugCDprtTUR",
        long_flags=_set(
            "--askpass",
            "--background",
            "--bell",
            "--preserve-env",
            "--set-home",
            "--login",
            "--remove-timestamp",
            "--reset-timestamp",
            "--non-interactive",
            "--preserve-groups",
            "--stdin",
            "--shell",
            "--help",
        ),
        long_with_value=_set(
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--chroot",
        ),
        stops=_set("-e", "-l", "-v", "-V", "--edit", "--list", "--validate", "--version"),
        assignments=True,
    ),
    # util-linux
    "taskset": Options(
        flags="ac",
        long_flags=_set("--all-tasks", "--cpu-list"),
        stops=_set("-p", "--pid", *_HELP),
        operands=1,
    ),
    "setpriv": Options(
        long_flags=_set(
            "--nnp",
            "--no-new-privs",
            "--clear-groups",
            "--keep-groups",
            "--init-groups",
            "--reset-env",
        ),
        long_with_value=_set(
            "--ambient-caps",
            "--inh-caps",
            "--bounding-set",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--reuid",
            "--regid",
            "--groups",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
            "--ptracer",
        ),
        stops=_set("-d", "--dump", *_HELP),
    ),
    "prlimit": Options(
        optional_value="cdefilmnqrstuvxy",
        with_value="o",
        long_flags=_set(
            "--core",
            "--data",
            "--nice",
            "--fsize",
            "--sigpending",
            "--memlock",
            "--rss",
            "--nofile",
            "--msgqueue",
            "--rtprio",
            "--stack",
            "--cpu",
            "--nproc",
            "--as",
            "--locks",
            "--rttime",
            "--noheadings",
            "--raw",
            "--verbose",
        ),
        long_with_value=_set("--output"),
        stops=_set("-p", "--pid", *_HELP),
    ),
    "chrt": NumberOperand(
        Options(
            flags="abdefioRrv",
            with_value="TPD",
            long_flags=_set(
                "--all-tasks",
                "--batch",
                "--deadline",
                "--ext",
                "--fifo",
                "--idle",
                "--other",
                "--reset-on-fork",
                "--rr",
                "--verbose",
            ),
            long_with_value=_set("--sched-runtime", "--sched-period", "--sched-deadline"),
            stops=_set("-m", "-p", "--max", "--pid", *_HELP),
        )
    ),
    "nsenter": Options(
        flags="aFeZcU",
        with_value="tGSW",
        optional_value="muinpCTrw",
        long_flags=_set(
            "--all",
            "--no-fork",
            "--preserve-credentials",
            "--follow-context",
            "--env",
            "--join-cgroup",
            "--keep-caps",
            "--user-parent",
            "--mount",
            "--uts",
            "--ipc",
            "--net",
            "--pid",
            "--user",
            "--cgroup",
            "--time",
            "--root",
            "--wd",
        ),
        long_with_value=_set("--target", "--setgid", "--setuid", "--wdns", "--net-socket"),
        stops=_set(*_HELP),
    ),
    "unshare": Options(
        flags="frc",
        with_value="RwSG",
        optional_value="muinpUCT",
        long_flags=_set(
            "--mount",
            "--uts",
            "--ipc",
            "--net",
            "--pid",
            "--user",
            "--cgroup",
            "--time",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "--map-root-user",
            "--map-current-user",
            "--map-auto",
            "--keep-caps",
            "--mount-binfmt",
        ),
        long_with_value=_set(
            "--propagation",
            "--setgroups",
            "--root",
            "--wd",
            "--setuid",
            "--setgid",
            "--monotonic",
            "--boottime",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
            "--load-interp",
        ),
        stops=_set(*_HELP),
    ),
    "setarch": LeadingOperand(_SETARCH),
    "linux32": _SETARCH,
    "linux64": _SETARCH,
    "chroot": Options(
        long_flags=_set("--skip-chdir"),
        long_with_value=_set("--userspec", "--groups"),
        stops=_set("--help", "--version"),
        operands=1,
    ),
    "sg": sg,
    # procps and moreutils
    "watch": watch,
    "chronic": Options(flags="ev"),
    "ifne": Options(flags="n"),
    "parallel": parallel,
    # systemd and polkit
    "systemd-run": _SYSTEMD_RUN,
    "run0": _SYSTEMD_RUN,
    "systemd-inhibit": Options(
        long_with_value=_set("--what", "--who", "--why", "--mode"),
        stops=_set("--list", "-h", "--help", "--version"),
    ),
    "dbus-run-session": Options(
        long_with_value=_set("--config-file", "--dbus-daemon"), stops=_set("--help", "--version")
    ),
    "pkexec": Options(
        long_flags=_set("--keep-cwd", "--disable-internal-agent"),
        long_with_value=_set("--user"),
        stops=_set("--help", "--version"),
    ),
    # Sandboxes, fakes and preloads
    "firejail": LongOnly(),
    "fakeroot": Options(
        flags="u",
        with_value="lsib",
        long_flags=_set("--unknown-is-real"),
        long_with_value=_set("--lib", "--faked"),
        stops=_set(*_HELP),
    ),
    "faketime": Options(
        flags="fm",
        with_value="p",
        long_flags=_set("--exclude-monotonic"),
        long_with_value=_set("--date-prog"),
        operands=1,
    ),
    "eatmydata": Options(),
    "nocache": Options(with_value="n"),
    "catchsegv": Options(),
    "unbuffer": Options(flags="p"),
    "numactl": Options(
        flags="laHsb",
        with_value="ipmNCPw",
        long_flags=_set("--localalloc", "--all", "--balancing", "--strict", "--touch", "--huge"),
        long_with_value=_set(
            "--interleave",
            "--preferred",
            "--membind",
            "--cpunodebind",
            "--physcpubind",
            "--preferred-many",
            "--weighted-interleave",
            "--length",
            "--offset",
            "--shm",
            "--file",
            "--shmmode",
            "--shmid",
        ),
        stops=_set("-H", "-s", "--hardware", "--show"),
    ),
    "cgexec": Options(with_value="g", long_flags=_set("--sticky")),
    "cpulimit": Options(
        flags="zivqkr",
        with_value="lc",
        long_flags=_set("--lazy", "--include-children", "--verbose", "--quiet", "--kill"),
        long_with_value=_set("--limit", "--cpu", "--signal"),
        stops=_set("-p", "-e", "-P", "--pid", "--exe", "--path"),
    ),
    "torsocks": Options(
        flags="idq6",
        with_value="upaP",
        long_flags=_set("--isolate", "--quiet", "--debug"),
        long_with_value=_set("--user", "--pass", "--address", "--port"),
    ),
    "proxychains": Options(flags="q", with_value="f"),
    "proxychains4": Options(flags="q", with_value="f"),
    "trickle": Options(flags="sv", with_value="udwtlLn"),
    "ssh-agent": Options(flags="csDd", with_value="aEOPt", stops=_set("-k")),
    "xvfb-run": Options(
        flags="al",
        with_value="nefspw",
        long_flags=_set("--auto-servernum", "--listen-tcp"),
        long_with_value=_set(
            "--server-num",
            "--error-file",
            "--auth-file",
            "--server-args",
            "--xauth-protocol",
            "--wait",
        ),
        stops=_set("-h", "--help"),
    ),
    # Process supervisors and privilege droppers
    "gosu": Options(operands=1),
    "su-exec": Options(operands=1),
    "setuidgid": Options(operands=1),
    "envuidgid": Options(operands=1),
    "envdir": Options(operands=1),
    "softlimit": Options(with_value="madslfcrtop"),
    "chpst": Options(flags="P012v", with_value="uUbe/nlLmdofpcrt"),
    "dumb-init": Options(
        flags="cv",
        with_value="r",
        long_flags=_set("--single-child", "--verbose"),
        long_with_value=_set("--rewrite"),
        stops=_set(*_HELP),
    ),
    "tini": Options(flags="svgwl", with_value="pe", stops=_set("-h", "--version")),
    "screen": Options(flags="dmDLaAUOqil", with_value="SchpTtes"),
    # Tracers and debuggers that start the program they trace
    "strace": Options(
        flags="cCdDfFhiqrtTvVwxyYzZkAn",
        with_value="eopsabEIOSuPX",
        long_flags=_set(
            "--follow-forks",
            "--summary-only",
            "--summary",
            "--quiet",
            "--verbose",
            "--no-abbrev",
            "--timestamps",
            "--relative-timestamps",
            "--syscall-times",
            "--decode-fds",
            "--instruction-pointer",
            "--stack-trace",
            "--daemonize",
            "--output-separately",
            "--summary-wall-clock",
            "--seccomp-bpf",
        ),
        long_with_value=_set(
            "--output",
            "--trace",
            "--attach",
            "--string-limit",
            "--env",
            "--user",
            "--trace-path",
            "--signal",
            "--status",
            "--abbrev",
            "--raw",
            "--read",
            "--write",
            "--const-print-style",
            "--columns",
            "--inject",
            "--fault",
        ),
        stops=_set("-h", "-V", "--help", "--version"),
    ),
    "ltrace": Options(
        flags="bcCfhirSLtTV",
        with_value="aADeFlnopsuwx",
        stops=_set("-h", "-V", "--help", "--version"),
    ),
    "valgrind": LongOnly(flags="qvd"),
    "gdb": after_marker("--args"),
    # Multi-call binaries: the applet is the next word.
    "busybox": Options(stops=_set("--list", "--list-full", "--install", "--help")),
    "toybox": Options(stops=_set("--long", "--help", "--version")),
    "ip": ip_netns_exec,
}

#: Wrappers that start an interactive shell on their input when given no program.
SHELL_WHEN_EMPTY: Final = frozenset(
    {"chroot", "firejail", "nsenter", "unshare", "sudo", "doas", "pkexec", "fakeroot", "run0"}
    | {"setarch", "linux32", "linux64", "systemd-run", "screen", "dbus-run-session"}
)
