"""The built-in tools' specs: the name, description and input schema the model
is offered (DEC-TURN-3), and the bounds those state.

Every model request carries the specs, and the context estimate that decides
automatic compaction counts them, from a session's first turn on; running a
tool needs far more (its module, file access, child processes, HTTP). So
the specs live here, in one module that imports only the spec type: the
registry offers them without importing a tool's module, which loads when
the tool is first summarized or run (:mod:`agentx.tools.registry`, DEC-CLI-3
start-up). Each tool class takes its ``spec`` from here, and the bounds its
description states from here too, so what the model reads is what the tool
enforces. The ``Skill`` tool's description lists the session's skills: it
is built here from them (:func:`skill_spec`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from agentx.messages.frozen import freeze
from agentx.messages.user_questions import MAX_OPTIONS, MAX_QUESTIONS, MIN_OPTIONS, MIN_QUESTIONS
from agentx.providers.base import ToolSpec

if TYPE_CHECKING:
    from agentx.messages.skills import Skill


def schema(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    """A closed JSON Schema object for a tool's input."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


# --- Bash -------------------------------------------------------------------------

DEFAULT_TIMEOUT_MS: Final = 120_000
MAX_TIMEOUT_MS: Final = 600_000

BASH: Final = ToolSpec(
    name="Bash",
    description=(
        "Run a shell command with /bin/bash in the session working directory and return "
        "its combined stdout and stderr. Optional timeout in milliseconds "
        f"(default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS})."
    ),
    input_schema=freeze(
        schema(
            {
                "command": {"type": "string", "description": "The command to run"},
                "timeout": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_TIMEOUT_MS,
                    "description": "Timeout in milliseconds",
                },
                "description": {
                    "type": "string",
                    "description": "What the command does, in 5-10 words",
                },
                "dangerouslyDisableSandbox": {
                    "type": "boolean",
                    "description": (
                        "Run this command outside the sandbox (only where the settings allow"
                        " unsandboxed commands; it is asked about like any command)"
                    ),
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": (
                        "Run the command as a background task and return at once with its "
                        "task id and output file; its end is reported later"
                    ),
                },
            },
            ("command",),
        )
    ),
)

# --- Glob and Grep ----------------------------------------------------------------

#: Files Glob lists, and Grep's files_with_matches and count rows, at most.
SEARCH_MAX_RESULTS: Final = 100

GLOB: Final = ToolSpec(
    name="Glob",
    description=(
        "Find files by glob pattern (`**` spans directories), newest first, at most "
        f"{SEARCH_MAX_RESULTS} results. path is the directory to search (default: the cwd)."
    ),
    input_schema=freeze(
        schema({"pattern": {"type": "string"}, "path": {"type": "string"}}, ("pattern",))
    ),
)

OutputMode = Literal["content", "files_with_matches", "count"]
OUTPUT_MODES: Final[tuple[OutputMode, ...]] = ("content", "files_with_matches", "count")

GREP: Final = ToolSpec(
    name="Grep",
    description=(
        "Search file contents with a regular expression (ripgrep's syntax: no look-around "
        "or backreferences). path: file or directory (default: the cwd); glob: only files "
        "whose path matches (e.g. `*.py`); -i: ignore case; output_mode: files_with_matches "
        "(default, newest first), content (path:line:text) or count; head_limit: at most "
        "this many output lines."
    ),
    input_schema=freeze(
        schema(
            {
                "pattern": {"type": "string"},
                "path": {"type": "string"},
                "glob": {"type": "string"},
                "-i": {"type": "boolean"},
                "output_mode": {"type": "string", "enum": list(OUTPUT_MODES)},
                "head_limit": {"type": "integer", "minimum": 1},
            },
            ("pattern",),
        )
    ),
)

# --- Read, Write and Edit ---------------------------------------------------------

DEFAULT_READ_LINES: Final = 2000
#: Characters of one line Read shows; the rest of the line is cut.
READ_MAX_LINE_CHARS: Final = 2000

_PATH_PROP: Final = {"type": "string", "description": "Absolute path, or relative to the cwd"}

READ: Final = ToolSpec(
    name="Read",
    description=(
        "Read a text file. Lines come numbered like `cat -n`. Reads up to "
        f"{DEFAULT_READ_LINES} lines from the start unless offset (first line, 1-based) "
        f"and limit (line count) are given; lines longer than {READ_MAX_LINE_CHARS} "
        "characters are cut."
    ),
    input_schema=freeze(
        schema(
            {
                "file_path": _PATH_PROP,
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            ("file_path",),
        )
    ),
)

WRITE: Final = ToolSpec(
    name="Write",
    description="Create or overwrite a file with the given content (UTF-8).",
    input_schema=freeze(
        schema({"file_path": _PATH_PROP, "content": {"type": "string"}}, ("file_path", "content"))
    ),
)

EDIT: Final = ToolSpec(
    name="Edit",
    description=(
        "Replace old_string with new_string in a file. old_string must occur exactly once "
        "unless replace_all is true."
    ),
    input_schema=freeze(
        schema(
            {
                "file_path": _PATH_PROP,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean", "default": False},
            },
            ("file_path", "old_string", "new_string"),
        )
    ),
)

# --- NotebookEdit -----------------------------------------------------------------

NOTEBOOK_EDIT: Final = ToolSpec(
    name="NotebookEdit",
    description=(
        "Replace, insert or delete one cell of a Jupyter notebook (.ipynb). cell_id is a "
        "cell's id or cell-N (the N-th cell, from 0); insert puts the new cell after "
        "cell_id, or first without one, and needs cell_type."
    ),
    input_schema=freeze(
        schema(
            {
                "notebook_path": {
                    "type": "string",
                    "description": "Path of the .ipynb file (absolute, or relative to the cwd)",
                },
                "cell_id": {"type": "string", "description": "The cell to edit"},
                "new_source": {"type": "string", "description": "The new source of the cell"},
                "cell_type": {"type": "string", "enum": ["code", "markdown"]},
                "edit_mode": {
                    "type": "string",
                    "enum": ["replace", "insert", "delete"],
                    "default": "replace",
                },
            },
            ("notebook_path", "new_source"),
        )
    ),
)

# --- WebFetch ---------------------------------------------------------------------

MAX_BODY_BYTES: Final = 256 * 1024

WEB_FETCH: Final = ToolSpec(
    name="WebFetch",
    description=(
        "Fetch an http or https URL with GET and return the response body as text "
        f"(at most {MAX_BODY_BYTES} bytes). prompt: what you are looking for; it is "
        "echoed above the content."
    ),
    input_schema=freeze(
        schema(
            {"url": {"type": "string", "format": "uri"}, "prompt": {"type": "string"}},
            ("url",),
        )
    ),
)

# --- WebSearch --------------------------------------------------------------------

#: Claude Code's lower bound on the query.
MIN_QUERY_CHARS: Final = 2

WEB_SEARCH: Final = ToolSpec(
    name="WebSearch",
    description=(
        "Search the web and return result titles and URLs with a short summary. "
        "allowed_domains or blocked_domains (not both) limit the sites searched. "
        "Cite the sources you use as markdown links."
    ),
    input_schema=freeze(
        schema(
            {
                "query": {
                    "type": "string",
                    "minLength": MIN_QUERY_CHARS,
                    "description": "The search query to use",
                },
                "allowed_domains": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Only include search results from these domains",
                },
                "blocked_domains": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Never include search results from these domains",
                },
            },
            ("query",),
        )
    ),
)

# --- TaskStop ---------------------------------------------------------------------

TASK_STOP: Final = ToolSpec(
    name="TaskStop",
    description=(
        "Stop a running background task by its id (the id a background Bash command "
        "reported). The task ends as stopped and its end is reported."
    ),
    input_schema=freeze(
        schema(
            {
                "task_id": {"type": "string", "description": "The id of the task to stop"},
                "shell_id": {"type": "string", "description": "Deprecated: use task_id"},
            },
            (),
        )
    ),
)

# --- AskUserQuestion --------------------------------------------------------------

_OPTION: Final = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "The choice as shown (1-5 words)"},
        "description": {"type": "string", "description": "What choosing it means"},
        "preview": {"type": "string", "description": "Optional content shown for the choice"},
    },
    "required": ["label", "description"],
    "additionalProperties": False,
}
_QUESTION: Final = {
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

ASK_USER_QUESTION: Final = ToolSpec(
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

# --- Skill ------------------------------------------------------------------------

#: The ``Skill`` tool's input (its description lists the session's skills).
SKILL_SCHEMA: Final = freeze(
    schema(
        {
            "skill": {"type": "string", "description": "The name of the skill to run"},
            "args": {"type": "string", "description": "Optional arguments for the skill"},
        },
        ("skill",),
    )
)
_SKILL_HEAD: Final = (
    "Run a skill: its instructions (and the folder its files are in) are returned "
    "for you to follow. Use a skill when the task matches its description."
)


def skill_spec(skills: Iterable[Skill]) -> ToolSpec:
    """The ``Skill`` tool's spec: what it does and each skill the session offers."""
    lines = [f"- {skill.name}: {skill.description}" for skill in skills]
    listed = (
        "Available skills:\n" + "\n".join(lines)
        if lines
        else "No skills are available in this session."
    )
    return ToolSpec(
        name="Skill", description=f"{_SKILL_HEAD}\n\n{listed}", input_schema=SKILL_SCHEMA
    )


#: The fixed specs by tool name, for the registry.
STATIC: Final[Mapping[str, ToolSpec]] = {
    spec.name: spec
    for spec in (
        BASH,
        GLOB,
        GREP,
        READ,
        WRITE,
        EDIT,
        NOTEBOOK_EDIT,
        WEB_FETCH,
        WEB_SEARCH,
        TASK_STOP,
        ASK_USER_QUESTION,
    )
}
