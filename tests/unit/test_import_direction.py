"""Imports point one way: agentx.messages <- agentx domain <- agentx.actors (DESIGN).

``messages/`` imports nothing of agentx but itself; the domain under
``src/agentx/`` never imports pykka nor the actors, except the entry points
that start a host. Every import statement counts, lazy ones inside functions
included.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The modules that start the actor system (DESIGN "Ways in"; the CLI also
#: installs the signal gate of agentx.actors.signals).
ENTRY_POINTS = {"cli.py", "launch.py", "embed.py", "client.py"}


def imported_names(path: Path) -> set[str]:
    """Every module name an import statement of ``path`` names."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import"
            names.add(node.module or "")
    return names


def under(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def test_messages_imports_nothing_of_agentx_but_itself() -> None:
    wrong = {
        f"{path.name}: {name}"
        for path in (ROOT / "messages").glob("*.py")
        for name in imported_names(path)
        if (under(name, "agentx") and not under(name, "agentx.messages")) or under(name, "pykka")
    }
    assert sorted(wrong) == []


def test_the_domain_imports_neither_pykka_nor_the_actors() -> None:
    top = ROOT / "src" / "agentx"
    modules = [p for p in top.rglob("*.py") if "__pycache__" not in p.parts]
    assert len(modules) > 50  # the walk really found the domain
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in modules
        if path.parent != top or path.name not in ENTRY_POINTS
        for name in imported_names(path)
        if under(name, "pykka") or under(name, "agentx.actors")
    }
    assert sorted(wrong) == []


def test_the_check_sees_an_actor_import(tmp_path: Path) -> None:
    """A check that cannot fail proves nothing: a lazy actor import is found."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from agentx.actors.host import run\n", encoding="utf-8")
    assert "agentx.actors.host" in imported_names(module)
