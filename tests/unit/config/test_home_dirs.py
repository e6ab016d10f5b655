"""The AgentX home's folders are private (DEC-HOME-1) and a file-system
failure is one line naming the path and the OS error (DECISIONS section 8).

Real directories under real umasks: the modes must not depend on the umask.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentx.config.home import check_private, os_error_line, private_dirs, with_path
from agentx.media.blobs import BlobStore
from agentx.sessions.store.files import SessionStore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o022, 0o077, 0o277], ids=lambda m: f"umask-{m:03o}")
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_every_directory_created_is_0700_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    target = private_dirs(tmp_path / "home" / "a" / "b")
    for path in (tmp_path / "home", tmp_path / "home" / "a", target):
        assert _mode(path) == 0o700, path


def test_an_existing_directory_is_left_as_it_is(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    private_dirs(mine / "inner")
    assert _mode(mine) == 0o755
    assert _mode(mine / "inner") == 0o700


def test_the_home_folders_agentx_makes_are_private(tmp_path: Path, umask: int) -> None:
    """DEC-HOME-1: the home, ``sessions/``, ``blobs/`` and ``blobs/sha256/``."""
    home = tmp_path / "fresh-home"
    SessionStore(home / "sessions")
    BlobStore(home / "blobs")
    for path in (home, home / "sessions", home / "blobs", home / "blobs" / "sha256"):
        assert _mode(path) == 0o700, path


def test_a_file_in_the_way_names_the_path_and_the_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError) as caught:
        private_dirs(blocker / "home" / "sessions")
    line = os_error_line(caught.value)
    assert line == f"{blocker / 'home'}: Not a directory (ENOTDIR)"
    assert "\n" not in line


def test_an_error_without_a_path_gets_the_one_given() -> None:
    bare = OSError(errno.ENOSPC, "No space left on device")
    named = with_path(bare, Path("/h/sessions/x/header.json"))
    assert isinstance(named, OSError) and named.errno == errno.ENOSPC
    assert os_error_line(named) == "/h/sessions/x/header.json: No space left on device (ENOSPC)"
    already = FileNotFoundError(errno.ENOENT, "No such file or directory", "/a")
    assert with_path(already, Path("/b")) is already
    assert os_error_line(OSError("odd")) == "OSError"


@pytest.mark.parametrize(
    ("mode", "others_may_read", "refused"),
    [
        (0o700, False, False),
        (0o750, False, True),
        (0o755, True, False),
        (0o775, True, True),
        (0o777, True, True),
        (0o1777, True, True),
    ],
)
def test_a_private_folder_is_this_users_and_closed_to_others(
    tmp_path: Path, mode: int, others_may_read: bool, refused: bool
) -> None:
    """DEC-HOME-1: a folder in a shared place another user could write (or,
    for the task folder itself, read) is refused by name, never used."""
    folder = tmp_path / "f"
    folder.mkdir()
    folder.chmod(mode)
    if refused:
        with pytest.raises(PermissionError, match="not a private folder") as caught:
            check_private(folder, others_may_read=others_may_read)
        assert caught.value.filename == str(folder)
    else:
        assert check_private(folder, others_may_read=others_may_read) == folder


def test_a_link_to_a_private_folder_is_refused(tmp_path: Path) -> None:
    """A link planted where the folder should be (another user's, in a
    shared temp directory) is refused, even to a folder of this user."""
    target = private_dirs(tmp_path / "real")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(PermissionError, match="not a private folder"):
        check_private(tmp_path / "link")
    (tmp_path / "file").touch(mode=0o600)
    with pytest.raises(PermissionError, match="not a private folder"):
        check_private(tmp_path / "file")
