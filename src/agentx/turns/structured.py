"""The session's structured output schema (DEC-CLI-5 ``--json-schema``; spec
"Success result"/"Error result").

:class:`OutputSchema` is what the engine holds once a schema is set: the
``StructuredOutput`` tool spec it offers the model and the answer to each
call, decided by :mod:`agentx.messages.structured_output`. The engine answers
the calls itself: the tool touches nothing, so it needs no permission and
runs no hooks. Imported only when a schema is set (``jsonschema`` stays off
the start path).
"""

from __future__ import annotations

from agentx.messages import record_limit
from agentx.messages.frozen import FrozenDict
from agentx.messages.structured_output import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    StructuredTurn,
    ToolAnswer,
    schema_problem,
    validation_problem,
)
from agentx.providers.base import ToolSpec


class SchemaError(ValueError):
    """The schema cannot be used; the message is one sentence."""


class OutputSchema:
    """A usable structured-output schema and its ``StructuredOutput`` tool."""

    __slots__ = ("schema", "spec")

    def __init__(self, schema: FrozenDict) -> None:
        problem = schema_problem(schema)
        if problem is not None:
            raise SchemaError(problem)
        self.schema = schema
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
            problem = validation_problem(self.schema, value)
        return turn.on_call(problem, value)
