"""Lines of a file read in bounded chunks, each line's contribution capped.

A file may be one line of gigabytes (or a sparse file of terabytes): reading
it line by line with Python's file iteration holds a whole line in memory.
:func:`bounded_lines` reads :data:`CHUNK_BYTES` at a time and keeps at most
``keep`` bytes of each line, saying whether it cut the line, so what a line
costs is bounded whatever its length. Line ends are ``\\n``, ``\\r\\n`` and a
lone ``\\r``, as Python's universal newlines read them; a last line without
an end is a line. ``read`` is a callable returning up to ``n`` bytes (b"" at
the end), so the splitter is tested without files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

#: Bytes read at a time.
CHUNK_BYTES: Final = 1024 * 1024


def bounded_lines(
    read: Callable[[int], bytes], keep: int, *, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[bytes, bool]]:
    """Yield ``(first keep bytes of the line, whether the line was longer)``."""
    line = bytearray()
    cut = False
    after_cr = False  # the last chunk ended in "\r": a "\n" next is the same line end
    while True:
        data = read(chunk_bytes)
        if not data:
            break
        start = 1 if after_cr and data[:1] == b"\n" else 0
        after_cr = False
        ends = _LineEnds(data)
        while (found := ends.next(start)) is not None:
            stop, after = found
            cut = _take(line, data, start, stop, keep) or cut
            yield bytes(line), cut
            line.clear()
            cut = False
            start = after
            after_cr = data[stop] == 0x0D and after == len(data)
        cut = _take(line, data, start, len(data), keep) or cut
    if line or cut:
        yield bytes(line), cut


class _LineEnds:
    """The line ends of one chunk, found with ``bytes.find`` (memchr speed);
    each separator's next position is searched once, not once per line."""

    __slots__ = ("_cr", "_data", "_nl")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._nl = -2  # -2: not searched yet; -1: none left
        self._cr = -2

    def next(self, start: int) -> tuple[int, int] | None:
        """(where the next line end starts, where the line after it starts)."""
        if self._nl != -1 and self._nl < start:
            self._nl = self._data.find(b"\n", start)
        if self._cr != -1 and self._cr < start:
            self._cr = self._data.find(b"\r", start)
        nl, cr = self._nl, self._cr
        if cr == -1 or (nl != -1 and nl < cr):
            return None if nl == -1 else (nl, nl + 1)
        return (cr, cr + 2) if cr + 1 == nl else (cr, cr + 1)


def _take(line: bytearray, data: bytes, start: int, stop: int, keep: int) -> bool:
    """Append ``data[start:stop]`` to ``line`` up to ``keep`` bytes; True if some was left out."""
    room = keep - len(line)
    if room > 0:
        line += data[start : min(stop, start + room)]
    return stop - start > max(room, 0)
