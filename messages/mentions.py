"""``@file`` mentions in a prompt's text (DEC-PROFILE-2, DEC-PERM-PATH).

In the ``sdk`` profile, as in Claude Code, a prompt that mentions a file as
``@path`` (or ``@"a path with spaces"``) gets the file's content attached,
read through the Read tool's own permission path; a prompt the client marked
``client_composed`` (the Agent SDKs' ``verbatim_prompts``) is sent as
written. A mention begins the text or follows whitespace (``a@b.c`` is not
one); at most :data:`MAX_MENTIONS` distinct paths of a prompt are read.

Sans-IO: :func:`mentioned_paths` finds the paths; :func:`attachment_text` is
what the model receives for one that was read.
"""

from __future__ import annotations

import json
import re
from typing import Final

#: Distinct paths read for one prompt; later mentions stay plain text.
MAX_MENTIONS: Final = 10

_MENTION = re.compile(r'(?:^|(?<=\s))@(?:"([^"\n]+)"|([^\s"@]+))')


def mentioned_paths(text: str) -> tuple[str, ...]:
    """The distinct paths ``text`` mentions, in order, at most :data:`MAX_MENTIONS`."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        path = match.group(1) or match.group(2)
        if path and path not in found:
            found.append(path)
            if len(found) == MAX_MENTIONS:
                break
    return tuple(found)


def attachment_text(path: str, content: str) -> str:
    """One read mention as the model receives it, after the prompt: the Read
    call it stands for and that call's result."""
    call = json.dumps({"file_path": path}, ensure_ascii=False)
    return (
        f"Called the Read tool with the following input: {call}\n\n"
        f"Result of calling the Read tool: {content}"
    )
