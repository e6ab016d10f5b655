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
schema names (2020-12 when it names none). Its regular expressions (``pattern``,
``patternProperties`` and the ``additionalProperties`` they narrow) are not
run by ``re``, which can backtrack for hours holding the interpreter lock
(DECISIONS section 8: nothing waits without a deadline): every match goes
through the caller's :data:`Search`, which bounds it. ``unevaluatedProperties``
next to ``patternProperties`` would match through ``re`` inside the library,
so a schema holding both is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

import jsonschema
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.validators import extend, validator_for

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


#: ``search(pattern, text)``: whether ``pattern`` (in ``re``'s syntax, as
#: jsonschema reads it) matches somewhere in ``text``. It raises
#: ``TimeoutError`` when it cannot tell within its bound (the caller's).
Search = Callable[[str, str], bool]
PATTERN_TIMEOUT: Final = "a pattern of the schema took too long to match this input"
#: Keywords the library would match with ``re`` while evaluating this one.
_UNBOUNDED_WITH: Final = ("unevaluatedProperties", "patternProperties")


def _bounded_keywords(search: Search) -> dict[str, Callable[..., Iterator[ValidationError]]]:
    """jsonschema's three regular-expression keywords, word for word as the
    library has them, matching with ``search``."""

    def pattern(
        validator: Any, patrn: str, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for name, value in instance.items():
                if search(patrn, name):
                    yield from validator.descend(value, subschema, path=name, schema_path=patrn)

    def additional_properties(
        validator: Any, allowed: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extras = {
            name
            for name in instance
            if name not in properties and not any(search(p, name) for p in patterns)
        }
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:
            if "patternProperties" in schema:
                verb = "does" if len(extras) == 1 else "do"
                joined = ", ".join(repr(each) for each in sorted(extras))
                listed = ", ".join(repr(each) for each in sorted(patterns))
                yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
            else:
                names = sorted(extras, key=str)
                verb = "was" if len(names) == 1 else "were"
                yield ValidationError(
                    "Additional properties are not allowed "
                    f"({', '.join(repr(name) for name in names)} {verb} unexpected)"
                )

    return {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }


def _validator(schema: FrozenDict, search: Search) -> Any:
    plain = thaw(schema)
    base = validator_for(plain, default=jsonschema.Draft202012Validator)
    keywords = {k: v for k, v in _bounded_keywords(search).items() if k in base.VALIDATORS}
    # types-jsonschema leaves ``extend`` unannotated.
    return extend(base, keywords)(plain)  # type: ignore[no-untyped-call]


def _holds_keys(value: FrozenJSON, names: tuple[str, ...]) -> set[str]:
    """Which of ``names`` occur as a member name anywhere in ``value``."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, FrozenDict):
            found.update(name for name in names if name in item)
            stack.extend(item.values())
        elif isinstance(item, tuple):
            stack.extend(item)
    return found


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
    if len(_holds_keys(schema, _UNBOUNDED_WITH)) == len(_UNBOUNDED_WITH):
        return (
            'the JSON schema may not use "unevaluatedProperties" together with '
            '"patternProperties" (their patterns could not be matched with a time bound)'
        )
    return None


def validation_problem(schema: FrozenDict, value: FrozenJSON, search: Search) -> str | None:
    """None when ``schema`` accepts ``value``; else one bounded sentence
    (the most relevant error, where it is, how many there are). A pattern
    ``search`` gave up on is a failed attempt, never an accepted one."""
    try:
        errors = list(_validator(schema, search).iter_errors(thaw(value)))
    except TimeoutError:
        return PATTERN_TIMEOUT
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
    "PATTERN_TIMEOUT",
    "REMINDER",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "Delivered",
    "Exhausted",
    "Remind",
    "Search",
    "StructuredTurn",
    "ToolAnswer",
    "schema_problem",
    "validation_problem",
]
