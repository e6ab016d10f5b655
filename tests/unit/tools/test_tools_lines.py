"""A file's lines in bounded chunks, each line's contribution capped
(:mod:`agentx.tools.lines`): line ends as universal newlines read them,
whatever the chunk boundaries; at the cap and one past it."""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from agentx.providers.base import Cancelled
from agentx.tools.base import ToolContext
from agentx.tools.files import MAX_LINE_CHARS, ReadTool
from agentx.tools.lines import bounded_lines
from agentx.turns.cancel import CancelScope

TEXTS = [
    b"",
    b"a",
    b"a\n",
    b"a\nb",
    b"a\r\nb\r\n",
    b"a\rb\rc",
    b"a\r\r\nb",
    b"\n\n\r\n\r",
    b"one\r\ntwo\nthree\rfour",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("chunk", [1, 2, 3, 64])
def test_lines_match_universal_newlines_whatever_the_chunks(text: bytes, chunk: int) -> None:
    expected = [line.encode() for line in io.StringIO(text.decode(), newline=None)]
    expected = [line.rstrip(b"\n") for line in expected]
    got = list(bounded_lines(io.BytesIO(text).read, 100, chunk_bytes=chunk))
    assert got == [(line, False) for line in expected]


@pytest.mark.parametrize(
    ("length", "cut"), [(4, False), (5, True), (1000, True)], ids=["at", "one-past", "far-past"]
)
@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_a_line_contributes_at_most_keep_bytes(length: int, cut: bool, chunk: int) -> None:
    text = b"x" * length + b"\nnext\n"
    got = list(bounded_lines(io.BytesIO(text).read, 4, chunk_bytes=chunk))
    assert got == [(b"xxxx", cut), (b"next", False)]


def test_read_of_a_sparse_gigabyte_line_is_cut_and_counted(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.write(b"hello ")
        handle.truncate(256 * 1024 * 1024)
    result = ReadTool().run(
        {"file_path": str(big)}, ToolContext(cwd=tmp_path, env={}), CancelScope()
    )
    assert not result.is_error
    number, text = result.content.split("\t", 1)
    assert number.strip() == "1"
    assert text.startswith("hello \0") and text.endswith("… [line truncated]")
    assert len(text) == MAX_LINE_CHARS + len("… [line truncated]")


@pytest.mark.parametrize(
    ("length", "cut"), [(MAX_LINE_CHARS, False), (MAX_LINE_CHARS + 1, True)], ids=["at", "past"]
)
def test_read_cuts_a_line_past_the_limit_of_characters(
    tmp_path: Path, length: int, cut: bool
) -> None:
    path = tmp_path / "f.txt"
    path.write_text("é" * length + "\n")  # two bytes a character: the cap counts characters
    result = ReadTool().run(
        {"file_path": str(path)}, ToolContext(cwd=tmp_path, env={}), CancelScope()
    )
    text = result.content.split("\t", 1)[1]
    assert text.startswith("é" * MAX_LINE_CHARS)
    assert text.endswith("… [line truncated]") is cut


def test_read_is_cancelled_between_chunks(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024)
    scope = CancelScope()
    scope.cancel()
    with pytest.raises(Cancelled):
        ReadTool().run({"file_path": str(big)}, ToolContext(cwd=tmp_path, env={}), scope)


def test_reading_a_two_gibibyte_line_stays_small(tmp_path: Path) -> None:
    """In a child whose address space is capped at 1 GiB: a whole-line read
    would need 2 GiB (MemoryError); the bounded read does not."""
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.write(b"start")
        handle.truncate(2 * 1024 * 1024 * 1024)
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from pathlib import Path\n"
        "from agentx.tools.base import ToolContext\n"
        "from agentx.tools.files import ReadTool\n"
        "from agentx.turns.cancel import CancelScope\n"
        "p = Path(sys.argv[1])\n"
        "ctx = ToolContext(cwd=p.parent, env={})\n"
        "r = ReadTool().run({'file_path': str(p)}, ctx, CancelScope())\n"
        "print(r.is_error, r.content[:14].replace(chr(0), '0'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(big)], capture_output=True, timeout=100, check=False
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().split() == ["False", "1", "start00"]
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 1 << 20  # KiB: < 1 GiB
    assert os.path.getsize(big) == 2 * 1024 * 1024 * 1024
