"""The outbound-record vocabulary every core and actor shares (WIRE-003).

- :data:`Records`: an ordered batch of outbound records, whole records in the
  order they must leave.
- :class:`Emit`: "write these records, whole and in order": the effect a core
  returns and, unchanged, the message the writer's inbox takes.
- :data:`RecordSink`: the callable that hands a batch to the writer (the
  writer's sink, a turn's output handle, a test recorder).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct

Records = tuple[Mapping[str, Any], ...]
RecordSink = Callable[[Records], None]


class Emit(Struct, frozen=True, kw_only=True):
    """Write these records, whole and in order, through the shared FIFO writer
    (WIRE-003): a core's effect and the writer's message."""

    records: Records

    def __post_init__(self) -> None:
        if type(self.records) is not tuple:
            raise TypeError("Emit.records must be a tuple of records")
