"""The ``text/event-stream`` decoder the provider clients read their streams with."""

from __future__ import annotations

import codecs

from msgspec import Struct


class ServerSentEvent(Struct, frozen=True, kw_only=True):
    event: str
    data: str


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder (WHATWG HTML, "event stream").

    Lines end at CRLF, LF or CR; ``data`` lines join with LF; an event is
    dispatched at a blank line when it has data. Comments and ``id``/``retry``
    fields are ignored. Call :meth:`end` at end of stream.

    Each chunk is decoded and split into lines in bulk (``str.split`` at LF,
    after CRLF and CR are turned into LF when the text holds a CR), so the
    per-byte work stays in C; only whole lines reach Python code.
    """

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self._buffer = ""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode ``chunk``; raise ``UnicodeDecodeError`` on invalid UTF-8."""
        return self._lines(self._buffer + self._text.decode(chunk), final=False)

    def end(self) -> list[ServerSentEvent]:
        """At end of stream a pending CR ends its line; a partial event is dropped."""
        return self._lines(self._buffer + self._text.decode(b"", final=True), final=True)

    def _lines(self, text: str, *, final: bool) -> list[ServerSentEvent]:
        # A CR at the end may be the first half of CRLF: held back unless final.
        held = "\r" if text.endswith("\r") and not final else ""
        if "\r" in text:
            text = text.removesuffix(held).replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        self._buffer = lines.pop() + held
        events: list[ServerSentEvent] = []
        for line in lines:
            if line:
                name, _, value = line.partition(":")
                if name == "data":
                    self._data.append(value.removeprefix(" "))
                elif name == "event":
                    self._event = value.removeprefix(" ")
            elif self._data:
                event = ServerSentEvent(event=self._event or "message", data="\n".join(self._data))
                events.append(event)
                self._event, self._data = "", []
            else:
                self._event = ""
        return events
