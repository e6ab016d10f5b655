"""Every file read at start is a regular file read with a size bound
(DECISIONS section 8): the helper's table, at each bound and one past it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file


@pytest.mark.parametrize("what", sorted(START_FILE_LIMITS))
def test_a_file_of_exactly_its_bound_is_read_and_one_byte_more_is_refused(
    tmp_path: Path, what: str
) -> None:
    limit = START_FILE_LIMITS[what]
    path = tmp_path / "file"
    path.write_bytes(b"x" * limit)
    assert read_start_file(path, limit, what) == b"x" * limit
    path.write_bytes(b"x" * (limit + 1))
    with pytest.raises(StartFileError) as refused:
        read_start_file(path, limit, what)
    assert str(refused.value) == f"{what}: {path}: is larger than {limit} bytes"


def _link(target: str) -> Callable[[Path], Path]:
    def make(tmp_path: Path) -> Path:
        link = tmp_path / "settings.json"
        link.symlink_to(target)
        return link

    return make


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


NOT_REGULAR = [
    pytest.param(lambda p: Path("/dev/zero"), "is a character device", id="dev-zero"),
    pytest.param(_link("/dev/zero"), "is a character device", id="link-to-dev-zero"),
    pytest.param(_link("/dev/null"), "is a character device", id="link-to-dev-null"),
    pytest.param(_fifo, "is a pipe", id="fifo-no-writer"),
    pytest.param(lambda p: p, "is a directory", id="directory"),
]


@pytest.mark.parametrize(("make", "kind"), NOT_REGULAR)
def test_anything_but_a_regular_file_is_refused_without_reading_or_blocking(
    tmp_path: Path, make: Callable[[Path], Path], kind: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(StartFileError) as refused:
        read_start_file(path, 1024, "settings")
    assert str(refused.value) == f"settings: {path}: {kind}, not a regular file"
    assert refused.value.problem == f"{kind}, not a regular file"


def test_a_link_to_stdin_is_refused_and_reads_nothing_of_it(tmp_path: Path) -> None:
    """A child whose stdin is a pipe: the link resolves to the pipe, which
    is refused; the protocol input is still all there afterwards."""
    link = tmp_path / "settings.json"
    link.symlink_to("/dev/stdin")
    code = (
        "import sys\n"
        "from agentx.config.start_files import StartFileError, read_start_file\n"
        "try:\n"
        f"    read_start_file({str(link)!r}, 1024, 'settings')\n"
        "except StartFileError as exc:\n"
        "    print(exc.problem)\n"
        "print(sys.stdin.read())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=b"protocol input",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.decode().splitlines() == ["is a pipe, not a regular file", "protocol input"]


def test_a_dangling_link_is_refused_and_a_missing_file_is_the_callers(tmp_path: Path) -> None:
    dangling = _link(str(tmp_path / "nowhere"))(tmp_path)
    with pytest.raises(StartFileError, match=r"settings: .*: is a dangling symbolic link$"):
        read_start_file(dangling, 1024, "settings")
    with pytest.raises(FileNotFoundError):
        read_start_file(tmp_path / "absent", 1024, "settings")


def test_a_private_path_is_never_named(tmp_path: Path) -> None:
    """DEC-AUTH-3a: auth.json's path (and what it names) stays out of a diagnostic."""
    with pytest.raises(StartFileError) as refused:
        read_start_file("/dev/zero", 1024, "auth.json", name_path=False)
    assert str(refused.value) == "auth.json: is a character device, not a regular file"


def test_an_os_error_names_the_path_and_the_error(tmp_path: Path) -> None:
    inside = tmp_path / "file"
    inside.write_text("{}")
    with pytest.raises(StartFileError) as refused:
        read_start_file(inside / "below", 1024, "settings")
    assert str(refused.value) == f"settings: {inside / 'below'}: Not a directory (ENOTDIR)"
