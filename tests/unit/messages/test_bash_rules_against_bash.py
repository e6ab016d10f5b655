"""The Bash rule matcher against real bash (DEC-PERM-PATH).

Hypothesis builds command lines from a soup of shell tokens (quotes,
backslashes, line breaks, operators, wrappers); ``/bin/bash -c`` runs each one
with fake ``curl``, ``ls`` and ``x`` first on ``PATH``, each of which logs its
name. Whatever bash ran decides:

- if curl ran, ``Bash(curl:*)`` must match the line as a deny rule;
- if ``Bash(ls:*)`` allows the line, nothing but ls may have run.

Every process bash starts inherits the write end of a pipe; reading it to its
end waits for background jobs too, with no sleep.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentx.messages.bash.rules import allowing, deny_matches

#: Before a program: wrappers, assignments, redirections, openers, line breaks.
BEFORE = [
    *("env ", "env -i ", "X=1 ", "timeout 1 ", "xargs ", "nice -n 1 ", "exec ", "command "),
    *("setsid ", "stdbuf -oL ", "script -qc ", "ionice -c 3 "),
    *("time ", "nohup ", "bash -c ", "sh -c '", 'bash -c "', "find . -exec ", "eval "),
    *("> f ", "2>&1 ", "<<< a ", "$(", "`", "(", "( ", "{ ", "! ", "\\\n", "\n", "\\", "'", '"'),
    *("cu", "c", "=", "$", "*", "#", "alias a=", "trap ", "-c ", "if ", "then ", "do "),
]
#: Programs, spelt in ways bash accepts or rejects.
PROGRAMS = [
    *("curl", "ls", "x", "c\\url", "'c'url", '"curl"', "cu''rl", "\\curl"),
    *("", "rl", "url", "cur?", "$X", "ls\\", "curl\\"),
]
#: After a program: arguments, redirections, closers, continuations.
AFTER = [
    *(" a", " -s", " >f", " 2>&1", " 2>&1 curl", " > f curl", " <<<a", " <f", " \\;", " {} +"),
    *(")", " )", "'", '"', "`", " }", "; }", "\\\n", "\\", "rl", "url", "=1", " #", "$"),
]
SEPARATORS = ["; ", " | ", " && ", " || ", "\n", " & ", " ", "", ";", "|"]


@st.composite
def _lines(draw: st.DrawFn) -> str:
    line = ""
    for index in range(draw(st.integers(1, 4))):
        if index:
            line += draw(st.sampled_from(SEPARATORS))
        line += "".join(draw(st.lists(st.sampled_from(BEFORE), max_size=3)))
        line += draw(st.sampled_from(PROGRAMS))
        line += "".join(draw(st.lists(st.sampled_from(AFTER), max_size=3)))
    return line


LINES = _lines()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    root = tmp_path_factory.mktemp("bash-vs-rules")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    log = root / "ran.log"
    for name in ("curl", "ls", "x"):
        program = bin_dir / name
        program.write_text(f"#!/bin/sh\necho {name} >> {log}\n")
        program.chmod(0o755)
    work = root / "work"
    work.mkdir()
    yield bin_dir, work


def _run(command: str, bin_dir: Path, work: Path) -> set[str]:
    log = bin_dir.parent / "ran.log"
    log.unlink(missing_ok=True)
    read_end, write_end = os.pipe()
    with subprocess.Popen(
        ["/bin/bash", "-c", command],
        cwd=work,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write_end,),
        start_new_session=True,
    ) as proc:
        os.close(write_end)
        try:
            proc.wait(timeout=10)
            # EOF once bash and every process it started have exited.
            with os.fdopen(read_end, "rb") as pipe:
                assert pipe.read() == b""
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            raise
    return set(log.read_text().split()) if log.exists() else set()


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(LINES)
def test_the_matcher_never_misses_what_bash_runs(sandbox: tuple[Path, Path], command: str) -> None:
    ran = _run(command, *sandbox)
    if "curl" in ran:
        assert deny_matches("curl:*", command), (command, ran)
    if allowing(("ls:*",), command) is not None:
        assert ran <= {"ls"}, (command, ran)
