"""messages/ reads from its concept map: every module is named in the package
docstring (one line each) and in ``__all__``, and nothing else is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import agentx.messages as package

MODULES = sorted(
    path.stem for path in Path(package.__file__).parent.glob("*.py") if path.stem != "__init__"
)


def test_all_names_exactly_the_modules() -> None:
    assert sorted(package.__all__) == MODULES


def test_the_concept_map_has_one_line_per_module() -> None:
    doc = package.__doc__ or ""
    entries = re.findall(r"^- ``(\w+)``: ", doc, flags=re.MULTILINE)
    assert sorted(entries) == MODULES
    assert len(entries) == len(set(entries))


def test_importing_the_package_imports_no_module() -> None:
    code = (
        "import sys, agentx.messages\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentx.messages.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
