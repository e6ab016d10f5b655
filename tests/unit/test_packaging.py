"""The wheel: everything under ``agentx/``, and every source package in it.

``actors/`` and ``messages/`` are installed as ``agentx.actors`` and
``agentx.messages`` through setuptools' ``package-dir``, so an embedding
application never gets top-level modules of those names (DESIGN "Three kinds
of code"). The package list in pyproject.toml is written out because
setuptools' discovery cannot apply that mapping; these tests build the real
wheel from a copy of the sources (offline, no build isolation) and fail when a
folder with an ``__init__.py`` is missing from it, or when anything lands
outside ``agentx/``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Where each installed package's sources live.
SOURCE_ROOTS = {
    "agentx": ROOT / "src" / "agentx",
    "agentx/actors": ROOT / "actors",
    "agentx/messages": ROOT / "messages",
}


def source_packages() -> set[str]:
    """Every package folder of the sources, as its path inside the wheel."""
    found: set[str] = set()
    for installed, folder in SOURCE_ROOTS.items():
        for init in folder.rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                found.add("/".join([installed, *init.parent.relative_to(folder).parts]))
    return found


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The member names of a wheel built from a copy of the sources."""
    work = tmp_path_factory.mktemp("wheel")
    tree = work / "tree"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for folder in ("src", "actors", "messages"):
        shutil.copytree(ROOT / folder, tree / folder, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    command = [sys.executable, "-m", "build", "--wheel", "--no-isolation"]
    done = subprocess.run(
        [*command, "--skip-dependency-check", "--outdir", str(work / "dist"), str(tree)],
        capture_output=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    [wheel] = (work / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_holds_only_agentx(wheel_names: list[str]) -> None:
    outside = [
        name
        for name in wheel_names
        if not name.startswith("agentx/") and not name.split("/")[0].endswith(".dist-info")
    ]
    assert outside == []


def test_every_source_package_is_in_the_wheel(wheel_names: list[str]) -> None:
    packages = source_packages()
    assert {"agentx", "agentx/actors", "agentx/messages", "agentx/sessions/store"} <= packages
    assert sorted(p for p in packages if f"{p}/__init__.py" not in wheel_names) == []


def test_every_source_module_is_in_the_wheel(wheel_names: list[str]) -> None:
    for installed, folder in SOURCE_ROOTS.items():
        modules = {
            "/".join([installed, *path.relative_to(folder).parts])
            for path in folder.rglob("*.py")
            if "__pycache__" not in path.parts
        }
        assert sorted(modules - set(wheel_names)) == []


def test_the_type_markers_are_in_the_wheel(wheel_names: list[str]) -> None:
    assert {f"{installed}/py.typed" for installed in SOURCE_ROOTS} <= set(wheel_names)
