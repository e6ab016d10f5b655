"""The session's structured output schema (DEC-CLI-5 ``--json-schema``; spec
"Success result"/"Error result").

:class:`OutputSchema` is what the engine holds once a schema is set: the
``StructuredOutput`` tool spec it offers the model and the answer to each
call, decided by :mod:`agentx.messages.structured_output`. The engine answers
the calls itself: the tool touches nothing, so it needs no permission and
runs no hooks. Imported only when a schema is set (``jsonschema`` stays off
the start path).

The schema's regular expressions run in the ``regex`` module, not ``re``:
the same syntax, but a match can be given a timeout and releases the
interpreter lock while it runs. All the matches of one validation share
:data:`PATTERN_BUDGET_S` (DECISIONS section 8: a hostile schema or model
output cannot freeze the host); past it the call is a failed attempt.
Chosen over google-re2 (linear time, but it refuses lookaround and
backreferences, which JSON Schema patterns may use, and a match is not
bounded in time) and over refusing patterns that might backtrack (no sound
test short of running them).
"""

from __future__ import annotations

import time
from typing import Final

import regex

from agentx.messages import record_limit
from agentx.messages.frozen import FrozenDict
from agentx.messages.structured_output import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    Search,
    StructuredTurn,
    ToolAnswer,
    schema_problem,
    validation_problem,
)
from agentx.providers.base import ToolSpec

#: Seconds all the pattern matches of one validation may take together.
PATTERN_BUDGET_S: Final = 2.0


def bounded_search(budget_s: float) -> Search:
    """A :data:`~agentx.messages.structured_output.Search` whose matches,
    all together, end within about ``budget_s`` seconds from now, else
    raise ``TimeoutError``."""
    deadline = time.monotonic() + budget_s

    def search(pattern: str, text: str) -> bool:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return regex.search(pattern, text, timeout=left, concurrent=True) is not None

    return search


class SchemaError(ValueError):
    """The schema cannot be used; the message is one sentence."""


class OutputSchema:
    """A usable structured-output schema and its ``StructuredOutput`` tool."""

    __slots__ = ("budget_s", "schema", "spec")

    def __init__(self, schema: FrozenDict, *, budget_s: float = PATTERN_BUDGET_S) -> None:
        problem = schema_problem(schema)
        if problem is not None:
            raise SchemaError(problem)
        self.schema = schema
        self.budget_s = budget_s
        self.spec = ToolSpec(name=TOOL_NAME, description=TOOL_DESCRIPTION, input_schema=schema)

    @staticmethod
    def new_turn() -> StructuredTurn:
        """A turn's state: no retries used, no payload."""
        return StructuredTurn()

    def answer(self, turn: StructuredTurn, value: FrozenDict) -> tuple[StructuredTurn, ToolAnswer]:
        """One call's answer; an input too large for one record is a failed
        attempt (DEC-COMPAT-3d) and is never validated."""
        if record_limit.tool_input_too_large(value):
            problem: str | None = record_limit.TOOL_INPUT_TOO_LARGE
        else:
            problem = validation_problem(self.schema, value, bounded_search(self.budget_s))
        return turn.on_call(problem, value)
