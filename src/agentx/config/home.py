"""The AgentX home directory (DEC-HOME-1).

The home is ``$AGENTX_HOME``, else ``~/.agentx``. It holds ``auth.json`` (the
provider registry, DEC-AUTH-1), ``settings.json`` (the user settings source,
DEC-SET-1), ``sessions/`` and ``blobs/``. The environment is an argument so
callers and tests pass exactly the mapping the process should see. Every
directory agentx creates here, the home included, is 0700
(:func:`private_dirs`), and a directory's new entries are made durable with
:func:`fsync_dir`; a file-system failure before the protocol is one
line naming the path and the OS error (:func:`os_error_line`, DECISIONS
section 8). A temporary entry in the home carries its writer's pid; the
entries of writers that are gone are removed where a folder is opened
(:func:`sweep_stale`: crash recovery, at start).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path

#: The registry file inside the home (DEC-AUTH-1).
AUTH_FILE_NAME = "auth.json"


def agentx_home(env: Mapping[str, str]) -> Path:
    """Return the AgentX home for ``env`` (DEC-HOME-1).

    An empty ``AGENTX_HOME`` counts as unset (``AGENTX_HOME= agentx ...``
    clears it in a shell). ``~`` is the ``HOME`` of ``env`` when it has one,
    else the current user's home directory.
    """
    configured = env.get("AGENTX_HOME", "")
    if configured:
        return Path(configured)
    user_home = env.get("HOME", "")
    return (Path(user_home) if user_home else Path.home()) / ".agentx"


#: Every directory agentx creates in the home, the home included (DEC-HOME-1).
PRIVATE_DIR_MODE = 0o700


def private_dirs(path: Path) -> Path:
    """``mkdir -p path`` where every directory this call creates is exactly
    0700, whatever the umask (DEC-HOME-1: the home and its folders hold
    transcripts and blobs); directories that already exist are left as they
    are. Raises the ``OSError`` naming the path that failed."""
    missing: list[Path] = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by another process: not ours to change
        os.chmod(directory, PRIVATE_DIR_MODE)
    return path


def check_private(directory: Path, *, others_may_read: bool = False) -> Path:
    """Refuse a folder another user could swap or fill (DEC-HOME-1): it must
    be a real folder (no link) of this user that no other user may write
    (nor read, unless ``others_may_read``). A folder under a shared temp
    directory may have been made by someone else before agentx came.
    Raises ``PermissionError`` naming the folder."""
    st = os.lstat(directory)
    forbidden = 0o022 if others_may_read else 0o077
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & forbidden:
        raise PermissionError(
            errno.EPERM,
            "not a private folder of this user (a link, another owner or shared)",
            str(directory),
        )
    return directory


def fsync_dir(directory: Path) -> None:
    """Make ``directory``'s entries durable (a rename or a new file in it)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def with_path(error: OSError, path: Path) -> OSError:
    """``error`` if it names a path, else the same error naming ``path``
    (``os.write`` and ``os.fsync`` on a descriptor name none)."""
    if error.filename is not None:
        return error
    return OSError(error.errno, error.strerror or type(error).__name__, str(path))


def os_error_line(error: OSError) -> str:
    """One credential-free line naming the path and the OS error
    (DECISIONS section 8), e.g. ``/h/sessions: Not a directory (ENOTDIR)``."""
    reason = error.strerror or type(error).__name__
    code = errno.errorcode.get(error.errno) if error.errno is not None else None
    where = "" if error.filename is None else f"{os.fsdecode(error.filename)}: "
    return f"{where}{reason}" + (f" ({code})" if code else "")


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (signal 0 probes, sends nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(directory: Path, prefix: str) -> int:
    """Remove entries named ``<prefix><pid>-...`` whose process is gone
    (directories too); return how many were removed. Run at every open over
    folders that grow with use (every session, every blob), so it reads names
    only (``os.scandir``) and looks no further at any other entry."""
    removed = 0
    with os.scandir(directory) as entries:
        stale = [entry for entry in entries if entry.name.startswith(prefix)]
    for entry in stale:
        owner = entry.name[len(prefix) :].split("-", 1)[0]
        if owner.isdigit() and int(owner) > 0 and pid_alive(int(owner)):
            continue
        if entry.is_dir(follow_symlinks=False):
            import shutil  # noqa: PLC0415 - only for a stale directory (DEC-CLI-3)

            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
        removed += 1
    return removed
