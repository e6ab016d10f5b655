"""MOD-A14B runtime qualification, remembered per installed runtime and kept
off the start path.

The check itself (:func:`agentx.media.admission.qualify_runtime`: Pillow round-trips
PNG and JPEG, pypdf imports) loads Pillow and pypdf, which a text session
otherwise never needs, and costs more than the rest of start-up after the
libraries the design binds. Its verdict depends only on the interpreter and
the installed Pillow and pypdf, so a passing verdict is kept in
``$AGENTX_HOME/runtime-qualified`` as a fingerprint of them: the size,
modification time and inode of every file at the top of their package
directories (and of Pillow's bundled libraries), the interpreter's version
and prefix. A start-up whose fingerprint matches advertises
``input_capabilities`` from a few ``stat`` calls; any difference, a missing
or unreadable record, runs the full check again. A failing
verdict is never kept: the next start-up checks again and warns again.

Start-up does not wait for the check (DEC-CLI-3): a session whose provider
accepts attachments advertises ``input_capabilities`` at once, and its
:class:`~agentx.media.deferred.RuntimeVerdict` runs the check (from the
record when this runtime passed before; this module loads then) the first
time an attachment needs it, on the thread that
admits it: the upload manager's before the first ``attachment_import_begin``
is admitted, the MCP manager's before the first image of a tool result is
kept. A failing verdict withdraws the capability for the rest of the
session: one WARN line says why, and every later import is rejected
``capability_not_advertised``. ``--attach`` decides before the protocol
starts, as its files are imported then.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.diagnostics import logger

#: The record of the last passing check, in ``$AGENTX_HOME``.
RECORD_NAME = "runtime-qualified"
#: What MOD-A14B qualifies; ``Pillow.libs`` holds the codecs a wheel bundles.
PACKAGES = ("PIL", "pypdf")
BUNDLED_LIBS = "Pillow.libs"


def _package_dir(name: str) -> Path | None:
    """The directory of top-level package ``name``, found without importing it."""
    from importlib.util import find_spec  # noqa: PLC0415 - with the first attachment (DEC-CLI-3)

    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _entries(directory: Path) -> list[str]:
    with os.scandir(directory) as entries:
        rows = []
        for entry in entries:
            st = entry.stat(follow_symlinks=True)
            rows.append(f"{entry.name}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}")
    return sorted(rows)


def runtime_seal(packages: tuple[str, ...] = PACKAGES) -> str | None:
    """The installed runtime's fingerprint; ``None`` when a package is missing
    or its directory cannot be read (the full check then decides)."""
    import hashlib  # noqa: PLC0415 - with the first attachment, not at start (DEC-CLI-3)

    parts = [sys.version, sys.prefix]
    for name in packages:
        directory = _package_dir(name)
        if directory is None:
            return None
        parts.append(str(directory))
        try:
            parts.extend(_entries(directory))
            bundled = directory.parent / BUNDLED_LIBS
            if name == "PIL" and bundled.is_dir():
                parts.extend(_entries(bundled))
        except OSError:
            return None
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _recorded(record: Path) -> str | None:
    try:
        data = read_start_file(record, START_FILE_LIMITS["runtime record"], "runtime record")
        return data.decode("ascii").strip()
    except (OSError, UnicodeDecodeError, StartFileError):
        return None  # checked again, and the record written anew


def _remember(record: Path, seal: str) -> None:
    """Write the record atomically; a failure only means the next start checks again."""
    temp = record.with_name(f".{RECORD_NAME}.{os.getpid()}")
    try:
        temp.write_text(seal + "\n", encoding="ascii")
        os.replace(temp, record)
    except OSError as exc:
        logger.debug("runtime qualification not recorded: {}", exc.strerror)
        with contextlib.suppress(OSError):
            temp.unlink()


def runtime_problem(home: Path) -> str | None:
    """MOD-A14B: ``None`` when attachments may be advertised, else why not.

    Loads Pillow and pypdf only when this runtime has not passed before.
    """
    record = home / RECORD_NAME
    seal = runtime_seal()
    if seal is not None and _recorded(record) == seal:
        return None
    from agentx.media.admission import qualify_runtime  # noqa: PLC0415 - the full check, loads Pillow

    problem = qualify_runtime()
    if problem is None and seal is not None:
        _remember(record, seal)
    return problem
