"""Third-party and generated JSON corpora against the strict decoder and the
framer (WIRE-001, WIRE-014, WIRE-021, WIRE-EOF-001, DECISIONS section 1).

The corpora live beside the repository in ``../shared/corpora``; every test
here skips with a clear message when they are absent.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from agentx.messages.decode import FatalDecodeError, decode_line, parse_object
from agentx.messages.framing import Line, LineFramer
from agentx.messages.frozen import thaw
from agentx.messages.inbound import KeepAlive
from agentx.messages.strict_json import DUPLICATE_MEMBER

CORPORA = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpora"
SUITE = CORPORA / "jsontestsuite"
GENERATED = CORPORA / "generated" / "json"


def _rows(table: Path) -> list[dict[str, str]]:
    if not table.is_file():
        return []
    with table.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _params(rows: list[dict[str, str]], what: str) -> list[object]:
    if not rows:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{what} not found at {CORPORA}"))]
    return [pytest.param(row, id=row["file"]) for row in rows]


SUITE_ROWS = _rows(SUITE / "stdlib_results.tsv")
GENERATED_ROWS = _rows(GENERATED / "MANIFEST.tsv")


def _read(path: Path, row: dict[str, str]) -> bytes:
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == row["sha256"], "corpus file changed"
    return data


def _embedded(value: bytes) -> Line:
    """The file as the value of a member, so the value parser (not the
    top-level-object rule) decides."""
    return Line(number=1, data=b'{"type":"keep_alive","x":' + value + b"}")


# --- nst/JSONTestSuite ------------------------------------------------------


def test_suite_covers_every_file() -> None:
    if not SUITE_ROWS:
        pytest.skip(f"JSONTestSuite corpus not found at {CORPORA}")
    files = {path.name for path in (SUITE / "test_parsing").iterdir()}
    assert files == {row["file"] for row in SUITE_ROWS}
    assert len(files) == 318


@pytest.mark.parametrize("row", _params(SUITE_ROWS, "JSONTestSuite corpus"))
def test_json_test_suite_follows_host_expect(row: dict[str, str]) -> None:
    data = _read(SUITE / "test_parsing" / row["file"], row)
    expect = row["host_expect"]
    if row["prefix"] == "n":
        assert expect == "reject"
    if row["file"].startswith("y_object_duplicated_key"):
        assert expect.startswith("reject(duplicate-member")
    if expect == "accept":
        assert decode_line(_embedded(data)) == KeepAlive(line=1)
        assert thaw(parse_object(_embedded(data))["x"]) == json.loads(data)
        return
    assert expect == "reject" or expect.startswith(("reject(", "policy(depth limit"))
    with pytest.raises(FatalDecodeError) as embedded:
        decode_line(_embedded(data))
    if row["file"].startswith("y_object_duplicated_key"):
        assert embedded.value.message == DUPLICATE_MEMBER
    with pytest.raises(FatalDecodeError):
        decode_line(Line(number=1, data=data))


# --- generated/json ---------------------------------------------------------

#: The .ndjson framing files: the manifest's host_expect text, then the
#: 1-based line numbers of the objects decoded, then the fatal line (if any).
FRAMING_EXPECT: dict[str, tuple[str, list[int], int | None]] = {
    "frames_blank_lines.ndjson": ("policy(blank lines: skip or fatal)", [1, 4], None),
    "frames_cr_only.ndjson": (
        "fatal framing error (1 LF-line with Extra data)",
        [],
        1,
    ),
    "frames_crlf.ndjson": ("2 records", [1, 2], None),
    "frames_no_final_newline.ndjson": ("2 records", [1, 2], None),
    "frames_second_line_invalid_utf8.ndjson": (
        "record 1 processed, then fatal framing error",
        [1],
        2,
    ),
    "frames_u2028_splits_with_splitlines.ndjson": ("2 records", [1, 2], None),
}


def _frame_and_parse(data: bytes) -> tuple[list[int], int | None]:
    """Feed the stream byte by byte; stop at the first fatal line."""
    framer = LineFramer()
    lines = [line for i in range(len(data)) for line in framer.feed(data[i : i + 1])]
    lines += framer.close()
    parsed: list[int] = []
    for line in lines:
        try:
            parse_object(line)
        except FatalDecodeError as error:
            return parsed, error.line_number
        parsed.append(line.number)
    return parsed, None


@pytest.mark.parametrize("row", _params(GENERATED_ROWS, "generated JSON corpus"))
def test_generated_json_follows_manifest(row: dict[str, str]) -> None:
    data = _read(GENERATED / row["file"], row)
    expect = row["host_expect"]
    if row["file"].endswith(".ndjson"):
        manifest_text, parsed, fatal_line = FRAMING_EXPECT[row["file"]]
        assert expect == manifest_text
        assert _frame_and_parse(data) == (parsed, fatal_line)
        return
    line = Line(number=1, data=data)
    if expect.startswith("accept"):
        assert thaw(parse_object(line)) == json.loads(data)
        return
    assert expect.startswith("reject")
    with pytest.raises(FatalDecodeError) as caught:
        parse_object(line)
    if row["file"].startswith("dup_"):
        assert caught.value.message == DUPLICATE_MEMBER
    else:
        assert caught.value.message != DUPLICATE_MEMBER


def test_generated_manifest_lists_every_file() -> None:
    if not GENERATED_ROWS:
        pytest.skip(f"generated JSON corpus not found at {CORPORA}")
    on_disk = {path.name for path in GENERATED.iterdir() if path.name != "MANIFEST.tsv"}
    assert on_disk == {row["file"] for row in GENERATED_ROWS}
    assert {name for name in on_disk if name.endswith(".ndjson")} == set(FRAMING_EXPECT)
