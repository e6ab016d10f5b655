"""docs/rules.md, the index of the rule and decision IDs the code cites.

The committed index must be exactly what ``scripts/rules_index.py`` makes of
the tree now: every ID cited in the code is in it, and nothing else is. When
``../shared/spec`` sits beside the repository, every cited ID must also exist
in the wire spec or in DECISIONS. The sample citations below are assembled
from parts so that this file cites no rule itself.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _repo_root() -> Path:
    here = Path(__file__).resolve()
    return next(p for p in here.parents if (p / "pyproject.toml").is_file())


ROOT = _repo_root()
SCRIPT = ROOT / "scripts" / "rules_index.py"
SPEC = ROOT.parent / "shared" / "spec"
SPEC_FILES = ("sdk-wire-protocol.md", "DECISIONS.md")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rules_index", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rules_index = _load()

W, D, M = "WIRE", "DEC", "MOD"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"({W}-013)", {f"{W}-013"}),
        (f"{W}-010/011", {f"{W}-010", f"{W}-011"}),
        (f"{W}-006..009,", {f"{W}-006", f"{W}-007", f"{W}-008", f"{W}-009"}),
        (f"{W}-PERM-041..043", {f"{W}-PERM-041", f"{W}-PERM-042", f"{W}-PERM-043"}),
        (f"{W}-EOF-001.", {f"{W}-EOF-001"}),
        (f"{D}-CLI-1/2/4", {f"{D}-CLI-1", f"{D}-CLI-2", f"{D}-CLI-4"}),
        (f"{D}-COMPAT-1..3", {f"{D}-COMPAT-1", f"{D}-COMPAT-2", f"{D}-COMPAT-3"}),
        (f"{D}-PERM-PATH; {D}-PERM-MODE", {f"{D}-PERM-PATH", f"{D}-PERM-MODE"}),
        (f"{D}-TURN-5a", {f"{D}-TURN-5a"}),
        (f"{M}-083..085", {f"{M}-083", f"{M}-084", f"{M}-085"}),
        (f"{M}-A14B", {f"{M}-A14B"}),
        (f"every {D}-AUTH rule, {W}-PERM: x", set()),
        (f"x{W}-001, {W}-0011, {W}-01", set()),
    ],
)
def test_citations_are_read_with_their_shorthand_lists_and_ranges(
    text: str, expected: set[str]
) -> None:
    assert rules_index.ids_in(text) == expected


def test_the_index_lists_each_citing_file_once_under_its_kind(tmp_path: Path) -> None:
    (tmp_path / "messages").mkdir()
    (tmp_path / "messages" / "core.py").write_text(f'"""A core ({W}-003, {W}-003/004)."""\n')
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_core.py").write_text(f"# {W}-004\n")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "b.py").write_text(f"# {D}-TURN-1\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.py").write_text(f"# {D}-TURN-2: not a scanned folder\n")
    (tmp_path / "messages" / ".hidden").mkdir()
    (tmp_path / "messages" / ".hidden" / "x.py").write_text(f"# {D}-TURN-3\n")

    index = rules_index.citations(tmp_path)
    assert index == {
        f"{W}-003": {"messages/core.py"},
        f"{W}-004": {"messages/core.py", "tests/unit/test_core.py"},
        f"{D}-TURN-1": {"bench/b.py"},
    }
    text = rules_index.render(index)
    assert text.index(f"## {W}-003") < text.index(f"## {W}-004") < text.index(f"## {D}-TURN-1")
    section = text.split(f"## {W}-004\n", 1)[1].split("\n## ", 1)[0]
    assert section.strip().splitlines() == [
        f"What it says: [protocol.md](protocol.md#{W.lower()}-004)",
        "",
        "- modules:",
        "  - `messages/core.py`",
        "- tests:",
        "  - `tests/unit/test_core.py`",
    ]
    assert rules_index.COMMAND in text


def test_ids_sort_by_family_then_number() -> None:
    ids = [f"{M}-A14B", f"{D}-AUTH-10", f"{W}-PERM-001", f"{D}-AUTH-2", f"{W}-026", f"{M}-083"]
    ids.append(f"{W}-EOF-001")
    assert sorted(ids, key=rules_index._sort_key) == [
        f"{W}-026",
        f"{W}-EOF-001",
        f"{W}-PERM-001",
        f"{D}-AUTH-2",
        f"{D}-AUTH-10",
        f"{M}-083",
        f"{M}-A14B",
    ]


def test_a_stale_index_names_the_ids_and_the_command() -> None:
    index = {f"{W}-001": {"messages/a.py"}, f"{W}-002": {"messages/a.py"}}
    committed = rules_index.render({f"{W}-002": {"messages/a.py"}, f"{W}-003": {"x.py"}})
    assert list(rules_index.diff_summary(committed, index)) == [
        f"cited in the code but not in docs/rules.md: {W}-001",
        f"in docs/rules.md but cited nowhere in the code: {W}-003",
    ]


def test_the_committed_index_matches_the_code() -> None:
    index = rules_index.citations(ROOT)
    expected = rules_index.render(index)
    committed_path = ROOT / rules_index.INDEX_PATH
    committed = committed_path.read_text(encoding="utf-8") if committed_path.exists() else ""
    if committed != expected:
        changes = "\n".join(rules_index.diff_summary(committed, index))
        pytest.fail(
            f"{rules_index.INDEX_PATH} does not match the rule IDs cited in the code"
            f" (or the files citing them moved).\n{changes}\n"
            f"Regenerate it from the repository root with: {rules_index.COMMAND}",
            pytrace=False,
        )


def test_check_mode_exits_1_on_a_stale_index_and_says_how_to_regenerate(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "rules_index.py").write_bytes(SCRIPT.read_bytes())
    (tmp_path / "messages").mkdir()
    (tmp_path / "messages" / "core.py").write_text(f"# {W}-003\n")
    script = [sys.executable, str(tmp_path / "scripts" / "rules_index.py")]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*script, *extra], check=False, capture_output=True, text=True, timeout=60
        )

    stale = run("--check")
    assert stale.returncode == 1
    assert f"cited in the code but not in docs/rules.md: {W}-003" in stale.stderr
    assert rules_index.COMMAND in stale.stderr

    written = run()
    assert written.returncode == 0, written.stderr
    fresh = run("--check")
    assert fresh.returncode == 0, fresh.stderr
    assert (tmp_path / "docs" / "rules.md").read_text() == rules_index.render(
        {f"{W}-003": {"messages/core.py"}}
    )


def test_every_cited_id_exists_in_the_spec_or_decisions() -> None:
    if not all((SPEC / name).is_file() for name in SPEC_FILES):
        pytest.skip(
            f"{SPEC} is absent (it sits beside the repository in CI): the cited IDs"
            " were not checked against the spec and DECISIONS"
        )
    defined: set[str] = set()
    for name in SPEC_FILES:
        defined |= rules_index.literal_ids_in((SPEC / name).read_text(encoding="utf-8"))
    index = rules_index.citations(ROOT)
    unknown = {rule_id: sorted(paths) for rule_id, paths in index.items() if rule_id not in defined}
    assert not unknown, (
        "cited IDs that neither sdk-wire-protocol.md nor DECISIONS.md spells out"
        f" (ID -> citing files): {unknown}"
    )
