"""MOD-A14B's start-up check, remembered per installed runtime (agentx.media.runtime_check).

The check itself runs in a fresh interpreter in each case, so whether it ran
is read from that interpreter's ``sys.modules`` (Pillow loaded or not).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentx.media.runtime_check import RECORD_NAME, runtime_seal

PROGRAM = """
import sys
from pathlib import Path
from agentx.media.runtime_check import runtime_problem
problem = runtime_problem(Path(sys.argv[1]))
print(repr((problem, "PIL" in sys.modules, "pypdf" in sys.modules)))
"""


def check(home: Path, *, pythonpath: Path | None = None) -> tuple[str | None, bool, bool]:
    """(the verdict, whether Pillow was loaded, whether pypdf was) in a fresh process."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(home)],
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    verdict: tuple[str | None, bool, bool] = ast.literal_eval(done.stdout.decode())
    return verdict


def test_a_passing_check_is_remembered_and_the_next_start_loads_neither(tmp_path: Path) -> None:
    assert check(tmp_path) == (None, True, True)  # the full check ran
    assert (tmp_path / RECORD_NAME).read_text().strip() == runtime_seal()
    assert check(tmp_path) == (None, False, False)


def test_a_record_of_another_runtime_runs_the_full_check_again(tmp_path: Path) -> None:
    (tmp_path / RECORD_NAME).write_text("0" * 64 + "\n")
    assert check(tmp_path) == (None, True, True)
    assert (tmp_path / RECORD_NAME).read_text().strip() == runtime_seal()


def test_a_failing_check_warns_every_start_and_is_never_remembered(tmp_path: Path) -> None:
    """A pypdf that does not import (first on the path) fails the check."""
    broken = tmp_path / "site"
    (broken / "pypdf").mkdir(parents=True)
    (broken / "pypdf" / "__init__.py").write_text("raise ImportError('broken install')\n")
    home = tmp_path / "home"
    home.mkdir()
    for _ in range(2):
        problem, pillow, _ = check(home, pythonpath=broken)
        assert problem == "pypdf does not import: ImportError"
        assert pillow
        assert not (home / RECORD_NAME).exists()
    assert check(home) == (None, True, True)  # the real pypdf qualifies


def test_a_record_that_cannot_be_written_never_fails_start_up(tmp_path: Path) -> None:
    (tmp_path / RECORD_NAME).mkdir()  # neither readable as a file nor replaceable
    for _ in range(2):
        assert check(tmp_path) == (None, True, True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD_NAME]  # no temp file left


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Two small installed packages of names no other test imports."""
    dirs = []
    for name in ("agentx_fp_one", "agentx_fp_two"):
        package = tmp_path / name
        (package / "sub").mkdir(parents=True)
        (package / "__init__.py").write_text("VERSION = 1\n")
        (package / "codec.so").write_bytes(b"\0" * 16)
        dirs.append(package)
    monkeypatch.syspath_prepend(str(tmp_path))
    return dirs[0], dirs[1]


NAMES = ("agentx_fp_one", "agentx_fp_two")


def test_the_fingerprint_is_stable_for_an_unchanged_install(packages: tuple[Path, Path]) -> None:
    assert runtime_seal(NAMES) == runtime_seal(NAMES)
    assert runtime_seal(NAMES) != runtime_seal(NAMES[:1])


@pytest.mark.parametrize("change", ["rewrite", "touch", "add", "remove", "subdirectory"])
def test_any_change_to_an_installed_file_changes_the_fingerprint(
    packages: tuple[Path, Path], change: str
) -> None:
    before = runtime_seal(NAMES)
    target = packages[1]
    if change == "rewrite":  # same size, new content, installed a second later
        stat = (target / "codec.so").stat()
        (target / "codec.so").unlink()
        (target / "codec.so").write_bytes(b"\1" * 16)
        os.utime(target / "codec.so", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    elif change == "touch":
        stat = (target / "__init__.py").stat()
        os.utime(target / "__init__.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    elif change == "add":
        (target / "extra.py").write_text("")
    elif change == "remove":
        (target / "codec.so").unlink()
    else:
        (target / "sub" / "module.py").write_text("")
    assert runtime_seal(NAMES) != before


def test_a_missing_package_has_no_fingerprint(packages: tuple[Path, Path]) -> None:
    assert runtime_seal((*NAMES, "agentx_fp_not_installed")) is None
