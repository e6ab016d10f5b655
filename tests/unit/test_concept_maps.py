"""Every package reads from its concept map (DESIGN "Three kinds of code").

Each package's ``__init__.py`` says in a few lines what it holds: every module
and sub-package of it is named exactly once in the package docstring, as a
line ``- ``name``: ...``, and in ``__all__`` (as a string: the package imports
nothing), and nothing else is named. Importing a package imports nothing but
its parents, so the start-up fast paths (WIRE-026, DEC-CLI-3) pay only for the
modules they use.

The packages are found on disk through pyproject.toml's ``package-dir``
(``actors/`` and ``messages/`` are installed as ``agentx.actors`` and
``agentx.messages``), so a new module or sub-package is checked without being
listed here.
"""

from __future__ import annotations

import importlib
import itertools
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A concept-map line: ``- ``name``: what it is``.
ENTRY = re.compile(r"^- ``(\w+)``: \S", flags=re.MULTILINE)


def package_folders() -> dict[str, Path]:
    """Every installed package's name and its source folder."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        roots = tomllib.load(file)["tool"]["setuptools"]["package-dir"]
    found: dict[str, Path] = {}
    for installed, folder in roots.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" not in init.parts:
                parts = init.parent.relative_to(ROOT / folder).parts
                found[".".join([installed, *parts])] = init.parent
    return dict(sorted(found.items()))


PACKAGES = package_folders()


def members(name: str) -> list[str]:
    """The modules and sub-packages of the package ``name``, wherever they live."""
    folder = PACKAGES[name]
    modules = {path.stem for path in folder.glob("*.py") if path.stem != "__init__"}
    children = {other.rpartition(".")[2] for other in PACKAGES if other.rpartition(".")[0] == name}
    return sorted(modules | children)


def load(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_every_package_is_found() -> None:
    expected = {"agentx", "agentx.actors", "agentx.messages", "agentx.sessions.store"}
    assert expected <= set(PACKAGES)
    assert {"actors", "messages", "sessions", "cli", "__main__"} <= set(members("agentx"))


@pytest.mark.parametrize("name", list(PACKAGES))
def test_all_names_exactly_the_members(name: str) -> None:
    exported = load(name).__all__
    assert all(isinstance(entry, str) for entry in exported)
    assert sorted(exported) == members(name)
    assert len(exported) == len(set(exported))


@pytest.mark.parametrize("name", list(PACKAGES))
def test_the_concept_map_has_one_line_per_member(name: str) -> None:
    doc = load(name).__doc__ or ""
    entries = ENTRY.findall(doc)
    assert sorted(entries) == members(name)
    assert len(entries) == len(set(entries))


@pytest.mark.parametrize("name", list(PACKAGES))
def test_each_map_entry_is_one_line(name: str) -> None:
    lines = (load(name).__doc__ or "").splitlines()
    continued = [
        line
        for line, following in itertools.pairwise(lines)
        if ENTRY.match(line) and following.startswith(" ") and following.strip()
    ]
    assert continued == []


@pytest.mark.parametrize("name", list(PACKAGES))
def test_importing_the_package_imports_nothing(name: str) -> None:
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        f"__import__({name!r})\n"
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    parts = name.split(".")
    parents_and_itself = sorted(".".join(parts[: n + 1]) for n in range(len(parts)))
    assert out.stdout.strip() == repr(parents_and_itself)
