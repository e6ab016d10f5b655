"""Every stdout record stays under the clients' 1 MiB line limit (DEC-COMPAT-3).

The Python Agent SDK (``claude-agent-sdk``) reads stdout with a default
``max_buffer_size`` of ``1024 * 1024`` and refuses a line whose decoded
length passes it. Every record shaped here encodes, newline included, to
fewer than :data:`MAX_LINE_BYTES` bytes: strictly under the limit in bytes,
and so in characters too. Sizes are measured with the real encoder
(:func:`~agentx.messages.encode.encode_record`), escapes included.

- :func:`split_assistant`: a longer assistant message becomes several
  ``assistant`` records with the same ``message.id`` (and model, usage and
  stop reason), as Claude Code writes one record per content block. Blocks
  are packed in order; a text block too large for one record is cut into
  several text blocks across records. A client rebuilds the message by
  concatenating the ``content`` of the records that share ``message.id``, in
  stream order, and joining the text of adjacent text blocks. A record that
  holds a cut text is a :class:`SplitRecord`, which cuts it when read, so
  the split costs no copy of the text.
- :func:`cap_result`: the ``result`` text is cut and ends with
  :data:`RESULT_TRUNCATED` (the assistant records carry the whole text);
  should the record still be too long, the permission denials lose their
  ``tool_input`` and then their tail.
- :func:`cap_user_echo`: a replayed prompt's acknowledgement keeps what
  fits of its text, ending with :data:`PROMPT_TRUNCATED`.
- :func:`tool_input_too_large`: a tool use whose input passes
  :data:`MAX_TOOL_INPUT_BYTES` cannot be shown whole in its ``assistant``
  block nor in its ``can_use_tool`` request; the turn engine writes its
  block with an empty input, never asks about it and never runs it (its
  result is :data:`TOOL_INPUT_TOO_LARGE`).

Cuts fall between code points (a ``str`` index), so no UTF-8 sequence is
broken; an encodable text holds no surrogate code points, so a code point
beyond U+FFFF stays whole on one side and no UTF-16 pair is broken for
clients that count in UTF-16 (JavaScript). The transcript always keeps the
whole message: only the stdout copy is shaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from msgspec import Struct

from agentx.messages.encode import EncodeError, encode_record, encode_value
from agentx.messages.frozen import FrozenDict, FrozenJSON

#: The clients' default line limit (``claude-agent-sdk`` ``_DEFAULT_MAX_BUFFER_SIZE``):
#: every record's line, newline included, is strictly shorter.
MAX_LINE_BYTES: Final = 1_048_576

#: The largest tool input (encoded bytes) a tool use may carry: its
#: ``assistant`` block and its ``can_use_tool`` request must each fit one line,
#: with room left for their envelopes (description, suggestions).
MAX_TOOL_INPUT_BYTES: Final = MAX_LINE_BYTES - 65_536
#: The error result of a tool use whose input is larger.
TOOL_INPUT_TOO_LARGE: Final = (
    f"Tool not run: its input is larger than {MAX_TOOL_INPUT_BYTES} bytes, "
    "too large for one output record"
)

#: Appended to a cut ``result`` text; ``{total}`` is the whole text's length in
#: Unicode code points.
RESULT_TRUNCATED: Final = (
    "\n[result truncated: {total} characters in total; the assistant records carry the whole text]"
)
#: Appended to the cut text of a replayed prompt's acknowledgement.
PROMPT_TRUNCATED: Final = (
    "\n[prompt truncated in this echo: {total} characters in total; "
    "the session keeps the whole prompt]"
)

#: A code point no UTF-8 encoding holds: a text with one is refused by the encoder.
#: A pattern, not a compiled one: compiling its 2,048-code-point class takes
#: about 10 ms, paid by the first text of a megabyte (start-up, DEC-CLI-3).
_SURROGATE: Final = "[\ud800-\udfff]"


def _has_surrogate(text: str) -> bool:
    return re.search(_SURROGATE, text) is not None


#: Code points :func:`string_bytes` encodes at a time.
MEASURE_WINDOW: Final = 1 << 16


def line_bytes(record: Mapping[str, Any]) -> int:
    """The bytes ``record`` takes on stdout, newline included."""
    return len(encode_record(record))


def fits(record: Mapping[str, Any], limit: int = MAX_LINE_BYTES) -> bool:
    """True when ``record``'s line is strictly shorter than ``limit`` bytes.

    A record the encoder refuses counts as fitting: it is left whole for the
    writer to refuse (WIRE-013), never cut here.
    """
    try:
        return line_bytes(record) < limit
    except EncodeError:
        return True


def string_bytes(text: str) -> int:
    """Bytes ``text`` takes inside an encoded JSON string (quotes excluded),
    measured :data:`MEASURE_WINDOW` code points at a time: the encoder
    escapes each code point on its own, and its working memory grows with
    what it encodes at once."""
    return sum(
        len(encode_value(text[start : start + MEASURE_WINDOW])) - 2
        for start in range(0, len(text), MEASURE_WINDOW)
    )


def longest_prefix(text: str, room: int) -> int:
    """The length of the longest prefix of ``text`` whose encoding takes at
    most ``room`` bytes (``text`` must be encodable)."""
    if room <= 0:
        return 0
    if string_bytes(text) <= room:
        return len(text)
    low, high = 0, min(len(text), room)  # every code point takes a byte or more
    while low < high:
        mid = (low + high + 1) // 2
        if string_bytes(text[:mid]) <= room:
            low = mid
        else:
            high = mid - 1
    return low


def tool_input_too_large(tool_input: Mapping[str, Any]) -> bool:
    """True when ``tool_input`` encodes to more than :data:`MAX_TOOL_INPUT_BYTES`
    (an input the encoder refuses is left for the writer to refuse)."""
    try:
        return line_bytes(tool_input) - 1 > MAX_TOOL_INPUT_BYTES
    except EncodeError:
        return False


# --- assistant ---------------------------------------------------------------


def split_assistant(
    record: FrozenDict, *, new_uuid: Callable[[], str], limit: int = MAX_LINE_BYTES
) -> tuple[Mapping[str, Any], ...]:
    """``record`` itself when it fits, else several ``assistant`` records that
    share its ``message`` (id, model, usage, stop reason) and split its
    content in order; the first keeps ``record``'s uuid, each later one gets
    a new one. A single block other than text that is too large alone is
    written alone."""
    message: Mapping[str, Any] = record["message"]
    texts = [block["text"] for block in message["content"] if _is_text(block)]
    if sum(map(len, texts)) < limit:
        if fits(record, limit):
            return (record,)
    elif any(map(_has_surrogate, texts)):
        return (record,)  # the encoder refuses it: left whole for the writer (see fits)
    # else a text longer than the limit cannot fit; it is not encoded whole to learn so
    packer = _Packer(record, message, new_uuid=new_uuid, limit=limit)
    for block in message["content"]:
        packer.add(block)
    return packer.finish()


class _Piece(Struct, frozen=True):
    """A cut of a text block: ``block`` with its text from ``start`` to ``end``
    (a frozen Struct: cheaper to define at start-up than a NamedTuple, DEC-CLI-3)."""

    block: Mapping[str, Any]
    start: int
    end: int

    def cut(self) -> FrozenDict:
        return FrozenDict(self.block, text=self.block["text"][self.start : self.end])


class SplitRecord(Mapping[str, Any]):
    """One record of a split message whose text pieces are cut when it is
    read: ``record["message"]`` builds the content with each piece's text
    then, and nothing keeps it. A message of many megabytes so costs its
    own text plus the piece being written, not a second copy in pieces
    (the encoder reads it as a plain mapping, :func:`encode_record`)."""

    __slots__ = ("_content", "_message", "_record", "_uuid")

    def __init__(
        self,
        record: Mapping[str, Any],
        message: Mapping[str, Any],
        content: tuple[FrozenJSON | _Piece, ...],
        uuid: str,
    ) -> None:
        self._record = record
        self._message = message
        self._content = content
        self._uuid = uuid

    def __getitem__(self, key: str) -> Any:
        if key == "uuid":
            return self._uuid
        if key == "message":
            content = tuple(b.cut() if isinstance(b, _Piece) else b for b in self._content)
            return FrozenDict(self._message, content=content)
        return self._record[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._record)

    def __len__(self) -> int:
        return len(self._record)

    def __repr__(self) -> str:
        return f"SplitRecord(uuid={self._uuid!r}, blocks={len(self._content)})"


class _Packer:
    """Fills records with blocks in order, cutting text blocks to fit."""

    def __init__(
        self,
        record: FrozenDict,
        message: Mapping[str, Any],
        *,
        new_uuid: Callable[[], str],
        limit: int,
    ) -> None:
        self._record = record
        self._message = message
        self._new_uuid = new_uuid
        self._limit = limit
        self._records: list[Mapping[str, Any]] = []
        self._begin_record(record["uuid"])

    def _build(self, content: tuple[FrozenJSON | _Piece, ...], uuid: str) -> Mapping[str, Any]:
        if any(isinstance(block, _Piece) for block in content):
            return SplitRecord(self._record, self._message, content, uuid)
        return FrozenDict(
            self._record, message=FrozenDict(self._message, content=content), uuid=uuid
        )

    def _begin_record(self, uuid: str) -> None:
        self._uuid = uuid
        self._blocks: list[FrozenJSON | _Piece] = []
        # Bytes the content array may take between its brackets.
        self._room = self._limit - 1 - line_bytes(self._build((), uuid))

    def _close(self) -> None:
        self._records.append(self._build(tuple(self._blocks), self._uuid))
        self._begin_record(self._new_uuid())

    def _cost(self, size: int) -> int:
        """``size`` bytes of block plus the comma before it, if any."""
        return size + (1 if self._blocks else 0)

    def _put(self, block: FrozenJSON | _Piece, size: int) -> None:
        self._room -= self._cost(size)
        self._blocks.append(block)

    def add(self, block: FrozenJSON) -> None:
        if _is_text(block) and len(block["text"]) > self._room:
            # Every code point takes a byte or more: it cannot fit, and
            # encoding it whole to learn so would cost more than the text.
            self._add_text(block)
            return
        size = line_bytes(block) - 1
        if self._cost(size) <= self._room:
            self._put(block, size)
        elif _is_text(block):
            self._add_text(block)
        else:
            if self._blocks:
                self._close()
            self._put(block, size)

    def _add_text(self, block: Mapping[str, Any]) -> None:
        """Cut the text into pieces that fill records. Only a window of at
        most ``room`` code points is ever measured (a piece cannot be longer:
        each code point takes a byte or more) and a piece is kept as its
        bounds (:class:`SplitRecord` cuts it when written), so splitting
        costs neither multiples of the text nor a copy of it."""
        text: str = block["text"]
        frame = line_bytes(FrozenDict(block, text="")) - 1
        start = 0
        while start < len(text):
            room = self._room - self._cost(frame)
            cut = longest_prefix(text[start : start + max(room, 0)], room)
            if cut == 0:
                if not self._blocks:
                    raise ValueError("the record limit leaves no room for any text")
                self._close()
                continue
            self._put(
                _Piece(block, start, start + cut), frame + string_bytes(text[start : start + cut])
            )
            start += cut
            if start < len(text):
                self._close()

    def finish(self) -> tuple[Mapping[str, Any], ...]:
        if self._blocks or not self._records:
            self._records.append(self._build(tuple(self._blocks), self._uuid))
        return tuple(self._records)


# --- result and the replay echo -----------------------------------------------


def cap_result(record: FrozenDict, *, limit: int = MAX_LINE_BYTES) -> FrozenDict:
    """``record`` itself when it fits. Else, when even a ``result`` text of
    just the marker would not fit, every permission denial's ``tool_input``
    becomes ``{}`` and only the leading denials that fit are kept; then, if
    still needed, the ``result`` text is cut to fit and ends with
    :data:`RESULT_TRUNCATED`."""
    text: str = record.get("result") or ""
    if len(text) < limit:
        if fits(record, limit):
            return record
    elif _has_surrogate(text):
        return record  # the encoder refuses it: left whole for the writer (see fits)
    # else a text longer than the limit cannot fit; it is not encoded whole to learn so
    marker = RESULT_TRUNCATED.format(total=len(text)) if text else ""
    shell = FrozenDict(record, result=marker) if text else record
    if not fits(shell, limit):
        record = _shrink_denials(record, FrozenDict(shell, permission_denials=()), limit)
        if fits(record, limit):
            return record
    room = limit - 1 - line_bytes(FrozenDict(record, result=marker))
    window = text[: max(room, 0)]  # a prefix that fits is never longer (a byte or more each)
    return FrozenDict(record, result=window[: longest_prefix(window, room)] + marker)


def _shrink_denials(record: FrozenDict, bare: FrozenDict, limit: int) -> FrozenDict:
    """``record`` with input-less denials, as many as fit beside ``bare``."""
    room = limit - 1 - line_bytes(bare)
    kept: list[FrozenDict] = []
    for denial in record["permission_denials"]:
        emptied = FrozenDict(denial, tool_input=FrozenDict())
        room -= line_bytes(emptied)  # the object and its comma (the newline's byte)
        if room < 0:
            break
        kept.append(emptied)
    return FrozenDict(record, permission_denials=tuple(kept))


def cap_user_echo(record: FrozenDict, *, limit: int = MAX_LINE_BYTES) -> FrozenDict:
    """``record`` (a ``user`` acknowledgement) itself when it fits; else its
    text blocks keep, in order, what fits: the block where the cut falls
    ends with :data:`PROMPT_TRUNCATED` and later text blocks are left out;
    the other blocks (attachment references) stay."""
    if fits(record, limit):
        return record
    message: Mapping[str, Any] = record["message"]
    content: tuple[FrozenJSON, ...] = message["content"]
    total = sum(len(block["text"]) for block in content if _is_text(block))
    marker = PROMPT_TRUNCATED.format(total=total)

    def build(blocks: tuple[FrozenJSON, ...]) -> FrozenDict:
        return FrozenDict(record, message=FrozenDict(message, content=blocks))

    # Sizes below count each text block with one comma (the newline's byte).
    room = limit - 1 - line_bytes(build(tuple(b for b in content if not _is_text(b))))
    reserve = line_bytes(FrozenDict(type="text", text=marker))
    blocks: list[FrozenJSON] = []
    cut = False
    for block in content:
        if not _is_text(block):
            blocks.append(block)
        elif not cut and line_bytes(block) + reserve <= room:
            blocks.append(block)
            room -= line_bytes(block)
        elif not cut:
            frame = line_bytes(FrozenDict(block, text=marker))
            keep = longest_prefix(block["text"], room - frame)
            blocks.append(FrozenDict(block, text=block["text"][:keep] + marker))
            cut = True
    return build(tuple(blocks))


def _is_text(block: FrozenJSON) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text"


__all__ = [
    "MAX_LINE_BYTES",
    "MAX_TOOL_INPUT_BYTES",
    "PROMPT_TRUNCATED",
    "RESULT_TRUNCATED",
    "TOOL_INPUT_TOO_LARGE",
    "SplitRecord",
    "cap_result",
    "cap_user_echo",
    "fits",
    "line_bytes",
    "longest_prefix",
    "split_assistant",
    "string_bytes",
    "tool_input_too_large",
]
