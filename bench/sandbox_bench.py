"""Sandbox bench: the latency a sandboxed Bash child adds (DEC-PERM-BASH-5).

Each round starts ``bash -c true`` the way the Bash tool does (a process
group through ``agentx.tools.process``, stdout piped, waited for to the end)
once unconfined and once through each tier's argv
(``agentx.sandbox.shell.Sandbox.command``): ``landlock`` (the exec helper
alone) and, where bubblewrap runs here, ``namespaces`` (bubblewrap, then the
helper). The commands of a round are interleaved so drifting load weighs on
each alike; the figures are medians (p50) and p90 of the same run, and each
tier's added p50 is printed against the unconfined one (target: under
100 ms). ``helper floor`` is the exec helper's interpreter alone starting and
loading ``ctypes`` (what any Python helper pays before it confines
anything). The tier probe is timed once, cold (what the first session on a
machine pays before it remembers the verdict).

Claude Code's own sandbox is not compared: its binary is not installed on
this machine (the SDK packages ship without it).

    python bench/sandbox_bench.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from agentx.messages.sandbox_policy import SandboxSettings, derive_policy
from agentx.sandbox.probe import Probe, find_bwrap, helper_argv, probe
from agentx.sandbox.shell import Sandbox
from agentx.tools.process import ChildProcesses, GroupProcess

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def timed(argv: list[str], cwd: Path, env: dict[str, str], children: ChildProcesses) -> float:
    began = time.perf_counter()
    proc = GroupProcess(argv, cwd=cwd, env=env, children=children, merge_stderr=True)
    while not proc.done:
        proc.pump(5.0)
    elapsed = time.perf_counter() - began
    if proc.returncode != 0:
        raise SystemExit(f"sandbox bench: {argv[0]} failed with status {proc.returncode}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="a few rounds: it runs, that is all")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    with tempfile.TemporaryDirectory(prefix="agentx-sandbox-bench-") as top:
        root = Path(top)
        work, tmp = root / "work", root / "tmp"
        work.mkdir()
        tmp.mkdir()
        settings = SandboxSettings(enabled=True)
        policy = derive_policy(
            settings,
            cwd=str(work),
            add_dirs=(),
            tmp_dir=str(tmp),
            home=str(root),
            read_deny_paths=(),
            settings_files=(),
        )
        bwrap = find_bwrap(None, policy.writable)
        began = time.perf_counter()
        found = probe(bwrap)
        probe_ms = (time.perf_counter() - began) * 1000
        landlock = Probe(tier="landlock", reason="bench", bwrap=None)
        tiers = (
            {} if found.tier == "none" else {"landlock": Sandbox(settings, policy, landlock, tmp)}
        )
        if found.tier == "namespaces":
            tiers["namespaces"] = Sandbox(settings, policy, found, tmp)
        shell = ["/bin/bash", "-c", "true"]
        commands = {"unconfined": (shell, ENV)}
        # The helper's floor: its interpreter starting and loading ctypes, unconfined.
        floor = [*helper_argv()[:3], "-c", "import ctypes, struct"]
        commands["helper floor"] = (floor, ENV)
        for name, sandbox in tiers.items():
            commands[name] = sandbox.command("true", ENV)
        children = ChildProcesses()
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for argv, env in commands.values():  # one warm-up each
            timed(argv, work, env, children)
        for _ in range(runs):
            for name, (argv, env) in commands.items():
                samples[name].append(timed(argv, work, env, children))
        children.terminate_all()
    print(f"sandbox bench: {runs} rounds, tier probe (cold) {probe_ms:.1f} ms -> {found.tier}")
    base = statistics.median(samples["unconfined"]) * 1000
    for name, values in samples.items():
        p50 = statistics.median(values) * 1000
        p90 = sorted(values)[int(0.9 * (len(values) - 1))] * 1000
        added = p50 - base
        print(
            f"{name:<13} p50 {p50:7.1f} ms  p90 {p90:7.1f} ms  added p50 {added:7.1f} ms"
            f"  ratio {p50 / base:5.2f}"
        )
    if found.tier != "namespaces":
        print(f"tiers not measured here: {found.reason}")


if __name__ == "__main__":
    main()
