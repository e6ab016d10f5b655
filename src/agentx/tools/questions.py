"""``AskUserQuestion``: multiple-choice questions to the user, answered
through the permission request (WIRE-PERM-001..003, WIRE-PERM-042,
DEC-PERM-MODE; :mod:`agentx.messages.user_questions`).

The tool always asks (whatever the mode or an allow rule says: only the
user can answer; a deny rule still denies, ``dontAsk`` denies), so the host
sees the questions in ``can_use_tool`` and answers with an allow whose
``updatedInput`` carries ``answers``. Without a permission channel (text
``-p`` with no prompt tool) the ask is denied at once and the model reads
that denial: the tool never waits for an answer that cannot come.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentx.messages.frozen import freeze
from agentx.messages.user_questions import (
    MAX_OPTIONS,
    MAX_QUESTIONS,
    MIN_OPTIONS,
    MIN_QUESTIONS,
    answer_text,
    questions_problem,
)
from agentx.providers.base import CancelToken, ToolSpec
from agentx.tools.base import ToolContext, ToolOutput, error, output

_OPTION = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "The choice as shown (1-5 words)"},
        "description": {"type": "string", "description": "What choosing it means"},
        "preview": {"type": "string", "description": "Optional content shown for the choice"},
    },
    "required": ["label", "description"],
    "additionalProperties": False,
}
_QUESTION = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "The question, ending with '?'"},
        "header": {"type": "string", "description": "A very short label (at most 12 characters)"},
        "options": {
            "type": "array",
            "items": _OPTION,
            "minItems": MIN_OPTIONS,
            "maxItems": MAX_OPTIONS,
        },
        "multiSelect": {"type": "boolean", "description": "Whether several options may be chosen"},
    },
    "required": ["question", "header", "options", "multiSelect"],
    "additionalProperties": False,
}

_SPEC = ToolSpec(
    name="AskUserQuestion",
    description=(
        f"Ask the user {MIN_QUESTIONS} to {MAX_QUESTIONS} multiple-choice questions "
        f"({MIN_OPTIONS} to {MAX_OPTIONS} options each; the user may also answer in their "
        "own words) and get their answers."
    ),
    input_schema=freeze(
        {
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "items": _QUESTION,
                    "minItems": MIN_QUESTIONS,
                    "maxItems": MAX_QUESTIONS,
                },
                "answers": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Filled in by the host with the user's answers",
                },
                "annotations": {"type": "object", "description": "Filled in by the host"},
                "metadata": {"type": "object", "description": "Not shown to the user"},
            },
            "required": ["questions"],
            "additionalProperties": False,
        }
    ),
)
_MEMBERS: Final = frozenset(_SPEC.input_schema["properties"])


def input_problem(input: Mapping[str, Any]) -> str | None:
    unknown = sorted(set(input) - _MEMBERS)
    if unknown:
        return f"unexpected parameter {unknown[0]!r}"
    return questions_problem(input)


class AskUserQuestionTool:
    name: Final = "AskUserQuestion"
    spec: Final = _SPEC
    #: It changes nothing (plan mode lets it ask); the ask itself is forced.
    read_only: Final = True

    def summarize(self, input: Mapping[str, Any]) -> str:
        questions = input["questions"]
        count = len(questions)
        return f"Ask the user {count} question{'s' if count != 1 else ''}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        problem = input_problem(input)
        if problem is not None:
            return error(f"AskUserQuestion: invalid input: {problem}")
        return output(answer_text(input))
