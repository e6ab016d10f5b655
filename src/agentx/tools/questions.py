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

from agentx.messages.user_questions import (
    answer_text,
    questions_problem,
)
from agentx.providers.base import CancelToken
from agentx.tools.base import ToolContext, ToolOutput, error, output
from agentx.tools.specs import ASK_USER_QUESTION

_MEMBERS: Final = frozenset(ASK_USER_QUESTION.input_schema["properties"])


def input_problem(input: Mapping[str, Any]) -> str | None:
    unknown = sorted(set(input) - _MEMBERS)
    if unknown:
        return f"unexpected parameter {unknown[0]!r}"
    return questions_problem(input)


class AskUserQuestionTool:
    name: Final = "AskUserQuestion"
    spec: Final = ASK_USER_QUESTION
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
