"""``AskUserQuestion``: its input's bounds and the answer the model reads
(WIRE-PERM-001..003, WIRE-PERM-042; DEC-PERM-MODE), without IO.

The model asks one to four questions, each with a short ``header``, two to
four ``options`` (``label``, ``description``, optional ``preview``) and
``multiSelect``, as Claude Code's schema says; question texts are unique
and option labels unique within a question. The question is put to the
user through the ordinary permission request (``can_use_tool`` with the
tool's input, the closed record unchanged): the host's allow carries
``updatedInput`` with the same questions plus ``answers`` (question text ->
the chosen label, or labels: a list, or one string comma-separated, as the
SDKs send them) and optionally ``annotations`` (question text ->
``{preview, notes}``). The tool's result tells the model each answer.

:func:`questions_problem` checks the input (counts as Claude Code bounds
them; what a record can carry bounds the lengths, DEC-COMPAT-3);
:func:`answer_text` writes the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

#: Claude Code's bounds: questions per call and options per question.
MIN_QUESTIONS: Final = 1
MAX_QUESTIONS: Final = 4
MIN_OPTIONS: Final = 2
MAX_OPTIONS: Final = 4
QUESTION_MEMBERS: Final = frozenset({"question", "header", "options", "multiSelect"})
OPTION_MEMBERS: Final = frozenset({"label", "description", "preview"})
#: What the model reads for a question the user left without an answer.
NO_ANSWER: Final = "(no answer)"


def _members(value: Mapping[str, Any], allowed: frozenset[str], required: Sequence[str]) -> None:
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ValueError(f"unexpected member {unknown[0]!r}")
    for name in required:
        if name not in value:
            raise ValueError(f"missing member {name!r}")


def _option_problem(option: object) -> None:
    if not isinstance(option, Mapping):
        raise ValueError("each option must be an object")
    _members(option, OPTION_MEMBERS, ("label", "description"))
    for name in ("label", "description", "preview"):
        if name in option and not isinstance(option[name], str):
            raise ValueError(f"option {name} must be a string")


def _question_problem(question: object) -> str:
    if not isinstance(question, Mapping):
        raise ValueError("each question must be an object")
    _members(question, QUESTION_MEMBERS, ("question", "header", "options", "multiSelect"))
    text, header = question["question"], question["header"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("question must be a non-empty string")
    if not isinstance(header, str):
        raise ValueError("header must be a string")
    if not isinstance(question["multiSelect"], bool):
        raise ValueError("multiSelect must be a boolean")
    options = question["options"]
    if not isinstance(options, Sequence) or isinstance(options, str):
        raise ValueError("options must be an array")
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise ValueError(
            f"each question needs {MIN_OPTIONS} to {MAX_OPTIONS} options, not {len(options)}"
        )
    for option in options:
        _option_problem(option)
    labels = [option["label"] for option in options]
    if len(set(labels)) != len(labels):
        raise ValueError("option labels must be unique within each question")
    return text


def questions_problem(tool_input: Mapping[str, Any]) -> str | None:
    """Why the input is not a valid set of questions; None when it is."""
    questions = tool_input.get("questions")
    if not isinstance(questions, Sequence) or isinstance(questions, str):
        return "questions must be an array"
    if not MIN_QUESTIONS <= len(questions) <= MAX_QUESTIONS:
        return f"ask {MIN_QUESTIONS} to {MAX_QUESTIONS} questions, not {len(questions)}"
    try:
        texts = [_question_problem(question) for question in questions]
        if len(set(texts)) != len(texts):
            return "question texts must be unique"
        _answers(tool_input, texts)
    except ValueError as exc:
        return str(exc)
    return None


def _answers(tool_input: Mapping[str, Any], texts: Sequence[str]) -> dict[str, str]:
    """The answers per asked question (unknown questions are ignored)."""
    raw = tool_input.get("answers")
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError("answers must be an object")
    answers: dict[str, str] = {}
    for text in texts:
        value = raw.get(text)
        if value is None:
            continue
        if isinstance(value, str):
            answers[text] = value
        elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
            answers[text] = ", ".join(value)
        else:
            raise ValueError("an answer must be a string or an array of strings")
    return answers


def _notes(tool_input: Mapping[str, Any], text: str) -> str:
    annotations = tool_input.get("annotations")
    if not isinstance(annotations, Mapping):
        return ""
    note = annotations.get(text)
    if not isinstance(note, Mapping):
        return ""
    notes = note.get("notes")
    return f" (user notes: {notes})" if isinstance(notes, str) and notes else ""


def answer_text(tool_input: Mapping[str, Any]) -> str:
    """What the model reads: each question with the user's answer.

    The input must have passed :func:`questions_problem`.
    """
    texts = [question["question"] for question in tool_input["questions"]]
    answers = _answers(tool_input, texts)
    if not answers:
        return "The user was asked but gave no answers; decide how to go on without them."
    lines = [
        f'"{text}" = "{answers.get(text, NO_ANSWER)}"{_notes(tool_input, text)}' for text in texts
    ]
    return (
        "The user answered your questions:\n"
        + "\n".join(lines)
        + "\nContinue with these answers in mind."
    )
