"""The outbound record encoder (spec "Framing and envelopes", WIRE-013).

One record becomes one physical NDJSON line: ujson with ``ensure_ascii=False``
and ``escape_forward_slashes=False``, then U+2028/U+2029 escaped as
``\\u2028``/``\\u2029`` (so a consumer that splits on Unicode line boundaries
cannot cut a record), then UTF-8 and the terminating ``\\n``. With no
credential material configured, these bytes are exactly what reaches stdout
(WIRE-013, last sentence).

Values that cannot become valid JSON text are refused with :class:`EncodeError`
and a fixed message that never quotes the value: NaN and infinities, lone
surrogates (not encodable as UTF-8), nesting deeper than :data:`MAX_DEPTH`, and
anything else without a JSON spelling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import ujson

_LINE_SEPARATOR: Final = "\u2028"
_PARAGRAPH_SEPARATOR: Final = "\u2029"

#: Deepest container nesting ujson encodes; one more level is refused.
MAX_DEPTH: Final = 1024

NON_FINITE: Final = "cannot encode record: NaN or infinite number"
LONE_SURROGATE: Final = "cannot encode record: string holds a lone surrogate"
TOO_DEEP: Final = "cannot encode record: nesting too deep"
NOT_JSON: Final = "cannot encode record: value has no JSON spelling"


class EncodeError(ValueError):
    """A record holds a value that has no valid JSON spelling.

    The message is one of the fixed module constants; the offending value (which
    may be credential-bearing) is never quoted, and no cause is chained.
    """


def _dumps(value: Any) -> str:
    try:
        # ujson 6's leading parameters by position: ensure_ascii,
        # encode_html_chars, escape_forward_slashes, sort_keys, indent and
        # allow_nan all off. Keyword parsing cost ~0.3 us a call, a third of
        # encoding a control response (bench/wire_bench.py);
        # tests/unit/messages/test_encode.py pins each effect. pyproject.toml pins
        # ujson 6 (5 had double_precision second, and types-ujson still
        # describes that signature).
        text = ujson.dumps(value, False, False, False, False, 0, False)  # type: ignore[arg-type]
    except OverflowError as exc:
        # ujson reports both NaN/Infinity (allow_nan=False) and its depth limit
        # as OverflowError; its own fixed text tells them apart.
        reason = TOO_DEEP if "recursion" in str(exc) else NON_FINITE
        raise EncodeError(reason) from None
    except (TypeError, ValueError, RecursionError):
        raise EncodeError(NOT_JSON) from None
    if text.isascii():  # O(1) for str: holds neither separator
        return text
    return text.replace(_LINE_SEPARATOR, "\\u2028").replace(_PARAGRAPH_SEPARATOR, "\\u2029")


def fs_text(name: str) -> str:
    """A file-system name (a working directory) as valid text for a record or
    the session store: bytes that are not UTF-8, which Python holds as lone
    surrogates, become ``\\xNN`` (DEC-CLI-3: a directory whose name is not
    UTF-8 still starts a session). Valid names are returned as they are."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        try:
            data = name.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate no file-system byte makes
            return name.encode("utf-8", "backslashreplace").decode("utf-8")
        return data.decode("utf-8", "backslashreplace")
    return name


def fs_key(name: str) -> str:
    """A file-system name (a working directory) as text that names it alone:
    the session store's record of where a session started, which
    ``--continue`` compares (DEC-CLI-5). :func:`fs_text` is for display and
    is not one-to-one: ``bad\\xff`` spelled out and the byte 0xff give the
    same text. Here a name that is valid UTF-8 without a backslash is kept
    as it is; any other has each backslash doubled and each byte that is not
    UTF-8 written ``\\xNN``, so no two names give the same text."""
    if "\\" not in name:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return name
    doubled = name.replace("\\", "\\\\")
    try:
        data = doubled.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file-system byte makes
        return doubled.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")


def encode_record(record: Mapping[str, Any]) -> bytes:
    """Encode one record as one complete NDJSON line, newline included.

    Accepts plain dicts, :class:`~agentx.messages.frozen.FrozenDict` (a dict
    subclass), tuples or lists for arrays, and
    :class:`~agentx.messages.raw_json.RawJSON` fragments. A record that is
    another mapping (a split message's record, whose text is cut when read:
    DEC-COMPAT-3) is read into a dict first.
    """
    text = _dumps(record if isinstance(record, dict) else dict(record))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        raise EncodeError(LONE_SURROGATE) from None


def encode_value(value: Any) -> bytes:
    """One JSON value spelled exactly as :func:`encode_record` spells it
    inside a record, as UTF-8 without a newline (the session store's lines,
    DEC-AUTH-6: the credential needles of :func:`string_spellings` match it).
    Each code point of a string is escaped on its own, so the spelling of a
    string is the concatenation of the spellings of its pieces."""
    text = _dumps(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise EncodeError(LONE_SURROGATE) from None


def string_spellings(literal: str) -> frozenset[bytes]:
    """Every UTF-8 byte spelling under which ``literal`` can appear in a frame.

    The raw text, its JSON string-body escaping as :func:`encode_record` writes
    it (separators escaped too), and the ASCII-only ``\\uXXXX`` escaping other
    JSON encoders produce for pass-through text (DEC-AUTH-3). Spellings that
    cannot be UTF-8 (lone surrogates) are left out: such text can only reach a
    frame escaped, which the ASCII spelling covers.
    """
    # lazy: start-up, WIRE-026 (with no credential literal this never runs)
    import json  # noqa: PLC0415

    candidates = [
        literal,
        _dumps(literal)[1:-1],
        json.dumps(literal, ensure_ascii=True)[1:-1],
    ]
    spellings: set[bytes] = set()
    for candidate in candidates:
        try:
            spellings.add(candidate.encode("utf-8"))
        except UnicodeEncodeError:
            continue
    return frozenset(spellings)
