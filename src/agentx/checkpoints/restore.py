"""Looking at and restoring one checkpointed file (DEC-PROFILE-2, DEC-PERM-PATH).

A rewind goes through the same machinery as Write: the kept path (resolved
when it was kept) must be admitted now by the session's path policy (deny
rules, the working directories, the sandbox's read-only paths), its folder
is opened one component at a time without following a symlink, and the file
is replaced by a rename inside that open folder (or unlinked there). A
symlink planted since the checkpoint, at the file or at any folder above
it, is never followed: the file is refused (:func:`look`), and a link
swapped in after the look is replaced or unlinked itself, never its target.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from agentx.messages.checkpoints import MAX_FILE_BYTES, Now
from agentx.tools.base import PathAccess
from agentx.tools.fsaccess import (
    READ_FLAGS,
    PathRefused,
    admitted,
    open_dir,
    replace_bytes_in,
)

NOT_REGULAR = "a symlink or another file that is not a regular file is there now"
LINKED_FOLDER = "a folder on its path is now a symlink or not a folder"


def look(path: Path, access: PathAccess) -> Now:
    """What is at ``path`` now, with its bytes when it is a regular file of
    at most :data:`MAX_FILE_BYTES` (for the line counts)."""
    try:
        admitted(path, access)
    except PathRefused as exc:
        return Now(kind="refused", why=exc.decision.reason)
    try:
        parent = open_dir(path.parent)
    except FileNotFoundError:
        return Now(kind="absent")
    except OSError:
        return Now(kind="refused", why=LINKED_FOLDER)
    try:
        try:
            st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return Now(kind="absent")
        if not stat.S_ISREG(st.st_mode):
            return Now(kind="refused", why=NOT_REGULAR)
        try:
            fd = os.open(path.name, READ_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return Now(kind="refused", why=NOT_REGULAR)
            return Now(kind="refused", why=f"it cannot be read ({exc.strerror})")
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return Now(kind="refused", why=NOT_REGULAR)
            digest = hashlib.sha256()
            kept = bytearray()
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
                if len(kept) <= MAX_FILE_BYTES:
                    kept += chunk
        data = bytes(kept) if len(kept) <= MAX_FILE_BYTES else None
        return Now(kind="file", digest=digest.hexdigest(), mode=stat.S_IMODE(st.st_mode), data=data)
    finally:
        os.close(parent)


class Unrestorable(Exception):
    """The file cannot be restored safely now; nothing was changed at it."""


def put_back(path: Path, data: bytes | None, mode: int, access: PathAccess) -> None:
    """Restore ``path`` to ``data`` with ``mode`` (None: remove it), through
    the admitted, no-follow path; raises :class:`Unrestorable` or ``OSError``."""
    try:
        admitted(path, access)
    except PathRefused as exc:
        raise Unrestorable(exc.decision.reason) from None
    try:
        parent = open_dir(path.parent, create=data is not None)
    except FileNotFoundError:
        if data is None:
            return  # its folder is gone: so is the file
        raise
    except OSError:
        raise Unrestorable(LINKED_FOLDER) from None
    try:
        try:
            st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise Unrestorable(NOT_REGULAR)
        if data is None:
            if st is not None:
                os.unlink(path.name, dir_fd=parent)
        else:
            replace_bytes_in(parent, path.name, data, mode=mode)
    finally:
        os.close(parent)
