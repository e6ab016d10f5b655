"""Provider JSON that may reach stdout: stream events and tool-call arguments (WIRE-014).

A provider's stream event becomes a ``stream_event`` record and its text and
tool calls become the ``assistant`` and ``result`` records, so what a provider
sends must be JSON every stdout record can carry. :func:`json_object` accepts
one strict JSON object (the wire's decoding rules, WIRE-014: duplicate member
names by decoded name, NaN/Infinity, numbers overflowing to infinity and
runaway nesting are refused, the last at Python's recursion limit, below the
encoder's MAX_DEPTH; values come back frozen) and also refuses a
string holding a lone surrogate. The strict decoder accepts ``"\\ud800"``, but
the outbound encoder cannot spell it (WIRE-013 encodes UTF-8): a record
carrying it would be dropped, and with it the turn's ``assistant`` and
``result`` records. Refused here, it is a clear, bounded provider error.

Why not a faster decoder first (ujson, which the encoder uses)? Measured on a
Chat Completions delta chunk (Python 3.11): the strict decoder takes ~5 us
and returns frozen values; ``ujson.loads`` takes ~1.3 us but accepts what
strict JSON refuses (duplicates, NaN, ``1e400``, ``01``, raw control
characters) and returns plain dicts and lists, and freezing them plus the
checks that make the result exact costs more than the whole strict decode.
"""

from __future__ import annotations

import ujson

from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import loads_strict


def json_object(text: str) -> FrozenDict | None:
    """``text`` as a frozen JSON object, or None when it is not one stdout can carry."""
    try:
        value = loads_strict(text)
        if "\\u" in text:  # text from a strict UTF-8 decode or from checked strings:
            # only an escape can spell a lone surrogate in it
            ujson.dumps(value, ensure_ascii=False).encode("utf-8")
    except (ValueError, OverflowError):  # StrictJSONError, UnicodeEncodeError; ujson's depth
        return None
    return value if isinstance(value, FrozenDict) else None
