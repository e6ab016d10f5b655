"""Write docs/rules.md: every spec rule and decision ID the code cites, and where.

The IDs are the rule IDs of ``../shared/spec/sdk-wire-protocol.md`` (WIRE-,
MOD-) and the decision IDs of ``../shared/spec/DECISIONS.md`` (DEC-). The
index maps each ID cited in a Python file under the scanned folders to the
modules, tests and benches that cite it. Shorthand citations count for each
ID they name: a slash list (``X-010/011``) and a range (``X-006..009``).

Usage (from the repository root, standard library only)::

    python3 scripts/rules_index.py           # rewrite docs/rules.md
    python3 scripts/rules_index.py --check   # exit 1 when docs/rules.md is stale

The output depends on the tree alone (sorted IDs, sorted repository-relative
paths, no dates), so the same tree always gives the same bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

#: The command that regenerates the index; printed by --check and the test.
COMMAND = "python3 scripts/rules_index.py"
#: Where the index lives, relative to the repository root.
INDEX_PATH = "docs/rules.md"
#: The page that paraphrases every cited ID, one ``#### ID`` heading each.
PROTOCOL_PATH = "docs/protocol.md"
#: Folders scanned for citations, relative to the repository root.
SCANNED = ("src", "actors", "messages", "tests", "bench", "scripts")
#: The ID families, in the order the index lists them.
FAMILIES = ("WIRE", "DEC", "MOD")

# One citation: an ID, then optional ``/NNN`` siblings and ``..NNN`` ranges.
# The ID shapes: WIRE then word parts then three digits; DEC then word parts
# then a number or a last word; MOD then three digits or a letter-digit code.
# A trailing lowercase letter (a sub-rule) is kept, so the spec check sees it.
_ID = (
    r"WIRE(?:-[A-Z]+)*-\d{3}[a-z]?"
    r"|DEC-[A-Z]+(?:-[A-Z]+)*-(?:\d+[a-z]?|[A-Z]+)"
    r"|MOD-(?:\d{3}|[A-Z]\d+[A-Z]*)"
)
_CITATION = re.compile(r"(?<![\w-])(?P<id>" + _ID + r")(?P<tail>(?:(?:/|\.\.)\d+)*)(?![\w]|-\w)")
_TAIL_PART = re.compile(r"(/|\.\.)(\d+)")


def ids_in(text: str) -> set[str]:
    """Every ID a text cites, shorthand lists and ranges expanded."""
    found: set[str] = set()
    for match in _CITATION.finditer(text):
        first = match["id"]
        found.add(first)
        stem, _, number = first.rpartition("-")
        if not number.isdigit():
            continue
        width = len(number)
        previous = int(number)
        for sep, digits in _TAIL_PART.findall(match["tail"]):
            value = int(digits)
            span = range(previous + 1, value + 1) if sep == ".." else (value,)
            found.update(f"{stem}-{n:0{width}d}" for n in span)
            previous = value
    return found


def literal_ids_in(text: str) -> set[str]:
    """The IDs a text spells out in full (no shorthand expanded): what a spec defines."""
    return {match["id"] for match in _CITATION.finditer(text)}


def _sort_key(rule_id: str) -> tuple[object, ...]:
    family, *rest = rule_id.split("-")
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in rest)
    return (FAMILIES.index(family), parts)


def scanned_files(root: Path) -> Iterator[Path]:
    """The Python files under the scanned folders, skipping hidden and cache folders."""
    for folder in SCANNED:
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            relative = path.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
                continue
            yield path


def citations(root: Path) -> dict[str, set[str]]:
    """ID -> the repository-relative paths (POSIX spelling) of the files citing it."""
    index: dict[str, set[str]] = {}
    for path in scanned_files(root):
        relative = path.relative_to(root).as_posix()
        for rule_id in ids_in(path.read_text(encoding="utf-8")):
            index.setdefault(rule_id, set()).add(relative)
    return index


def anchor(rule_id: str) -> str:
    """The anchor of an ID's heading in docs/protocol.md (the ID in lower case)."""
    return rule_id.lower()


def documented_ids(text: str) -> set[str]:
    """The IDs docs/protocol.md gives an entry: its ``#### ID`` headings."""
    return {line[5:].strip() for line in text.splitlines() if line.startswith("#### ")}


def _kind(path: str) -> str:
    top = path.split("/", 1)[0]
    return {"tests": "tests", "bench": "benches"}.get(top, "modules")


def render(index: dict[str, set[str]]) -> str:
    """The text of docs/rules.md for an index."""
    lines = [
        "# Rule index",
        "",
        "Every rule ID of the wire spec (`WIRE-`, `MOD-`) and every decision ID of",
        "DECISIONS (`DEC-`) that the code cites, with the modules, tests and benches",
        "that cite it. Each ID links to its paraphrase in [protocol.md](protocol.md);",
        "the authoritative texts are `../shared/spec/sdk-wire-protocol.md` and",
        "`../shared/spec/DECISIONS.md`. This file is generated, never edited by",
        "hand; after adding, moving or changing a citation regenerate it with",
        "",
        f"    {COMMAND}",
        "",
        f"(a test fails while it is stale). {len(index)} IDs.",
    ]
    for rule_id in sorted(index, key=_sort_key):
        lines += ["", f"## {rule_id}", ""]
        lines += [f"What it says: [protocol.md](protocol.md#{anchor(rule_id)})", ""]
        paths = sorted(index[rule_id])
        for kind in ("modules", "tests", "benches"):
            these = [p for p in paths if _kind(p) == kind]
            if these:
                lines.append(f"- {kind}:")
                lines += [f"  - `{p}`" for p in these]
    return "\n".join(lines) + "\n"


def diff_summary(committed: str, current: dict[str, set[str]]) -> Iterable[str]:
    """One line per ID that is cited but not indexed, or indexed but not cited."""
    indexed = {line[3:].strip() for line in committed.splitlines() if line.startswith("## ")}
    for rule_id in sorted(set(current) - indexed, key=_sort_key):
        yield f"cited in the code but not in {INDEX_PATH}: {rule_id}"
    for rule_id in sorted(indexed - set(current)):
        yield f"in {INDEX_PATH} but cited nowhere in the code: {rule_id}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the index is stale")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    index = citations(root)
    text = render(index)
    target = root / INDEX_PATH
    if args.check:
        committed = target.read_text(encoding="utf-8") if target.exists() else ""
        if committed == text:
            return 0
        for line in diff_summary(committed, index):
            print(line, file=sys.stderr)
        print(f"{INDEX_PATH} is stale; regenerate it with: {COMMAND}", file=sys.stderr)
        return 1
    target.parent.mkdir(exist_ok=True)
    target.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {INDEX_PATH}: {len(index)} IDs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
