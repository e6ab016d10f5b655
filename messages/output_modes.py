"""What each ``--output-format`` writes (DECISIONS section 9, DEC-CLI-1/2).

``stream-json`` writes every record; ``json`` writes only the ``result``
record as one JSON line; ``text`` writes only the result's text (or its
errors) and a newline. Every mode's bytes still pass the credential guard
as exact final bytes (WIRE-013).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from agentx.messages.encode import encode_record

OutputFormat = Literal["text", "json", "stream-json"]


def selects(output_format: OutputFormat) -> Callable[[Mapping[str, Any]], bool]:
    """Which records reach the sink in this mode."""
    if output_format == "stream-json":
        return _every
    return _results


def encoder(output_format: OutputFormat) -> Callable[[Mapping[str, Any]], bytes]:
    return encode_text_result if output_format == "text" else encode_record


def encode_text_result(record: Mapping[str, Any]) -> bytes:
    """The text mode frame: the success text, else ``Error: <errors>``."""
    if record.get("subtype") == "success":
        text = str(record.get("result", ""))
    else:
        errors = record.get("errors") or (record.get("subtype", "error"),)
        text = "Error: " + "; ".join(str(e) for e in errors)
    return (text + "\n").encode("utf-8", "surrogatepass")


def observing_results(
    select: Callable[[Mapping[str, Any]], bool], seen: Callable[[Mapping[str, Any]], None]
) -> Callable[[Mapping[str, Any]], bool]:
    """``select`` that also hands every ``result`` record to ``seen`` before it
    is written (a one-shot run's exit status follows its result, DEC-CLI-6)."""

    def observed(record: Mapping[str, Any]) -> bool:
        if record.get("type") == "result":
            seen(record)
        return select(record)

    return observed


def turn_failed(result: Mapping[str, Any]) -> bool | None:
    """DEC-CLI-6: whether a ``result`` ended a turn in error; None for an
    input-error result (every error an ``input_error: ...``), which belongs
    to no model turn and leaves the exit status as it was."""
    errors = result.get("errors")
    if (
        isinstance(errors, tuple | list)
        and errors
        and all(isinstance(e, str) and e.startswith("input_error:") for e in errors)
    ):
        return None
    return result.get("is_error") is True


def _every(record: Mapping[str, Any]) -> bool:
    return True


def _results(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "result"
