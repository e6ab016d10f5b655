"""Structured output (DEC-CLI-5 flags from SDK clients; spec "Success result"/"Error
result"): a sans-IO core.

With ``--json-schema`` (the SDKs' ``output_format``, the TS SDK's
``initialize`` ``jsonSchema``) every turn must end with the model calling the
``StructuredOutput`` tool with input that the schema accepts. This module
decides, without IO:

- whether a schema is usable (:func:`schema_problem`): a JSON object, valid
  against its own meta-schema, whose root describes an object (a tool's
  input is always one);
- the verdict on one call's input (:func:`validation_problem`): ``None`` or
  one bounded sentence naming where and why the input fails;
- the turn's retry count (:class:`StructuredTurn`): an invalid call and an
  answer that ends without a valid call each use one retry; past
  :data:`MAX_RETRIES` the turn ends ``error_max_structured_output_retries``,
  never ``success`` without the payload. The count lives in the turn, so it
  never carries into the next turn nor across a resume.

Validation uses the maintained ``jsonschema`` library with the draft the
schema names (2020-12 when it names none).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from agentx.messages.frozen import FrozenDict, FrozenJSON, thaw

#: The tool's name, as Claude Code offers it.
TOOL_NAME: Final = "StructuredOutput"
#: Retries after the first attempt: the sixth failure of a turn ends it.
MAX_RETRIES: Final = 5
#: Longest validation sentence given back to the model (characters).
MAX_PROBLEM_CHARS: Final = 2000

TOOL_DESCRIPTION: Final = (
    "Return the final answer of this request as structured data. Call this tool "
    "exactly once, at the end, with input that matches its schema; the request is "
    "not complete until it succeeds."
)
ACCEPTED: Final = "Structured output provided successfully"
REMINDER: Final = (
    "You must call the StructuredOutput tool with the final answer, as input "
    "matching its schema, to complete this request."
)
EXHAUSTED: Final = "Failed to provide valid structured output after {n} attempts"


def _validator(schema: FrozenDict) -> Any:
    plain = thaw(schema)
    cls = validator_for(plain, default=jsonschema.Draft202012Validator)
    return cls(plain)


def schema_problem(schema: FrozenJSON) -> str | None:
    """Why ``schema`` cannot be the structured output's schema, or None."""
    if not isinstance(schema, FrozenDict):
        return "the JSON schema must be a JSON object"
    root_type = schema.get("type", "object")
    if root_type != "object":
        return 'the JSON schema must describe an object (its "type" must be "object")'
    plain = thaw(schema)
    try:
        validator_for(plain, default=jsonschema.Draft202012Validator).check_schema(plain)
    except SchemaError as exc:
        return f"the JSON schema is not valid: {_bounded(exc.message)}"
    return None


def validation_problem(schema: FrozenDict, value: FrozenJSON) -> str | None:
    """None when ``schema`` accepts ``value``; else one bounded sentence
    (the most relevant error, where it is, how many there are)."""
    try:
        errors = list(_validator(schema).iter_errors(thaw(value)))
    except Exception as exc:  # an unresolvable $ref, a deep schema: a failed attempt
        return f"the schema could not be applied ({type(exc).__name__})"
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    where = "/".join(str(part) for part in best.absolute_path) or "(root)"
    more = f" ({len(errors)} errors in all)" if len(errors) > 1 else ""
    return _bounded(f"at {where}: {best.message}{more}")


def _bounded(text: str) -> str:
    if len(text) <= MAX_PROBLEM_CHARS:
        return text
    return text[: MAX_PROBLEM_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """The ``tool_result`` a ``StructuredOutput`` call gets."""

    content: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class Remind:
    """The answer ended without a valid call: tell the model and go on."""

    text: str = REMINDER


@dataclass(frozen=True, slots=True)
class Exhausted:
    """The retries are used up: the turn ends with this error."""

    error: str


@dataclass(frozen=True, slots=True)
class Delivered:
    """A valid call was made: the turn may end ``success`` with the payload."""

    payload: FrozenDict


@dataclass(frozen=True, slots=True)
class StructuredTurn:
    """One turn's structured-output state; every step returns a new one."""

    max_retries: int = MAX_RETRIES
    failures: int = 0
    payload: FrozenDict | None = None

    @property
    def exhausted(self) -> bool:
        return self.payload is None and self.failures > self.max_retries

    def on_call(self, problem: str | None, value: FrozenDict) -> tuple[StructuredTurn, ToolAnswer]:
        """One ``StructuredOutput`` call with its verdict (``problem`` None: valid)."""
        if problem is None:
            return replace(self, payload=value), ToolAnswer(ACCEPTED, False)
        after = replace(self, failures=self.failures + 1)
        text = f"Output does not match the required schema: {problem}"
        if not after.exhausted:
            text += ". Call StructuredOutput again with corrected input."
        return after, ToolAnswer(text, True)

    def on_end(self) -> tuple[StructuredTurn, Delivered | Remind | Exhausted]:
        """The model's answer ended (no tool calls)."""
        if self.payload is not None:
            return self, Delivered(self.payload)
        after = self if self.exhausted else replace(self, failures=self.failures + 1)
        if after.exhausted:
            return after, Exhausted(EXHAUSTED.format(n=after.failures))
        return after, Remind()

    def verdict_after_tools(self) -> Exhausted | None:
        """After a batch of tool calls: the turn ends when the retries are used up."""
        return Exhausted(EXHAUSTED.format(n=self.failures)) if self.exhausted else None


__all__ = [
    "ACCEPTED",
    "EXHAUSTED",
    "MAX_RETRIES",
    "REMINDER",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "Delivered",
    "Exhausted",
    "Remind",
    "StructuredTurn",
    "ToolAnswer",
    "schema_problem",
    "validation_problem",
]
