"""Pre-encoded JSON fragments for the outbound encoder (WIRE-013, WIRE-014).

:class:`RawJSON` is spliced verbatim into a record by
:func:`~agentx.messages.encode.encode_record` through ujson's ``__json__``
hook. It lives apart from the encoder so that encoding a record (and with it
prelaunch discovery, WIRE-026) does not import ``dataclasses``.
"""

from __future__ import annotations

import json
from typing import Any, Final

from msgspec import Struct

from agentx.messages.encode import EncodeError

RAW_NOT_ONE_LINE: Final = "raw JSON must not contain a line break"
RAW_INVALID: Final = "raw JSON is not one well-formed JSON value"


def _refuse_constant(_name: str) -> Any:
    raise ValueError(RAW_INVALID)


class RawJSON(Struct, frozen=True, kw_only=True):
    """Pre-encoded JSON text spliced verbatim into an outbound record.

    For raw outbound projections (WIRE-014 names them) that must keep the
    upstream spelling byte for byte. The text must be one well-formed JSON value
    with no NaN/Infinity literal and no CR or LF, so it cannot break framing.
    Duplicate members are not refused here: that is the decoder's job
    (WIRE-014), and the output guard inspects every occurrence regardless
    (WIRE-013).
    """

    text: str

    def __post_init__(self) -> None:
        if "\n" in self.text or "\r" in self.text:
            raise EncodeError(RAW_NOT_ONE_LINE)
        try:
            json.loads(self.text, parse_constant=_refuse_constant)
        except (ValueError, RecursionError):
            raise EncodeError(RAW_INVALID) from None

    def __json__(self) -> str:
        """The ujson hook: the text is inserted as it is."""
        return self.text
