"""``--session-mirror``: transcript entries mirrored to the client
(DEC-STORE-1, DEC-PROFILE-2), in the frame the Agent SDKs read for their
``session_store`` option.

Claude Code writes ``{"type": "transcript_mirror", "filePath": P,
"entries": [...]}`` on stdout; the SDKs peel these frames off the stream
(never shown to the application) and append ``entries`` to the store under
the key they derive from ``filePath``:
``<projects dir>/<project key>/<session id>.jsonl``, where the projects dir
is ``$CLAUDE_CONFIG_DIR/projects`` (else ``~/.claude/projects``) and the
project key is the working directory with every character that is not an
ASCII letter or digit replaced by ``-``, cut at 200 characters plus a hash
of the whole when longer (:func:`project_key`, as the SDKs compute it).

agentx mirrors its own transcript entries, each once, after they were
appended to its store, and a new session's header first (``type``
``session_header``, as ``agentx sessions export`` writes it).

Sans-IO.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentx.messages.frozen import FrozenDict

MIRROR_TYPE: Final = "transcript_mirror"
#: The SDKs' cut for a long project key.
MAX_KEY_LENGTH: Final = 200
_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def _base36_hash(text: str) -> str:
    """The 32-bit string hash the SDKs append to a long key, in base 36."""
    value = 0
    for char in text:
        value = ((value << 5) - value + ord(char)) & 0xFFFFFFFF
    if value >= 0x80000000:
        value -= 0x100000000
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if value == 0:
            return out


def project_key(directory: str) -> str:
    """The SDKs' project key of a working directory (already resolved)."""
    normalized = unicodedata.normalize("NFC", directory)
    key = _NOT_ALNUM.sub("-", normalized)
    if len(key) <= MAX_KEY_LENGTH:
        return key
    return f"{key[:MAX_KEY_LENGTH]}-{_base36_hash(normalized)}"


def mirror_frame(file_path: str, entries: Sequence[Mapping[str, Any]]) -> FrozenDict:
    """One ``transcript_mirror`` frame."""
    return FrozenDict(type=MIRROR_TYPE, filePath=file_path, entries=tuple(entries))
