"""``NotebookEdit``: replace, insert or delete one cell of a Jupyter notebook
(DEC-TURN-3, DEC-PERM-PATH, DEC-PERM-MODE).

Claude Code's input: ``notebook_path``, ``cell_id`` (a cell's ``id``, or
``cell-N`` for the N-th cell counting from 0), ``new_source``, ``cell_type``
(``code``/``markdown``, required to insert) and ``edit_mode``
(``replace``/``insert``/``delete``, default ``replace``). An insert goes after
``cell_id``, or first without one.

It is a writing tool like ``Edit``: the same path permission (its path is
governed by ``Edit`` rules, ``acceptEdits`` allows it inside the working
directories, the sandbox's write policy holds), the same open-without-links
and the same atomic write (:func:`agentx.tools.fsaccess.replace_in`), so
whatever watches that write path sees notebook edits too. The notebook is
read bounded like ``Edit``'s files (:data:`agentx.tools.files.MAX_EDIT_BYTES`)
and parsed strictly: JSON with no duplicate member and no NaN, an object
with a ``cells`` list of cell objects whose ``source`` is a string or a list
of strings, ``nbformat`` 4. Anything else is a tool error and the file is
not touched. The edited notebook is written as Jupyter writes it (one-space
indent, sorted keys, a final newline).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal

from msgspec import Struct

from agentx.providers.base import CancelToken
from agentx.tools.base import (
    FileCheckpoints,
    OnePathTool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_cancel,
    check_members,
    display,
    error,
    get_optional_str,
    get_str,
    invalid_input,
    output,
)
from agentx.tools.files import bounded_text
from agentx.tools.fsaccess import (
    READ_FLAGS,
    open_admitted,
    parent_dir,
    regular_mode,
    replace_in,
)
from agentx.tools.specs import NOTEBOOK_EDIT

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown"]
#: The notebook format this tool edits (nbformat 4, every minor version).
NBFORMAT: Final = 4
_MODES: Final[dict[str, EditMode]] = {"replace": "replace", "insert": "insert", "delete": "delete"}
_CELL_TYPES: Final[dict[str, CellType]] = {"code": "code", "markdown": "markdown"}
#: Characters of the new source echoed back to the model.
MAX_ECHO_CHARS: Final = 2000


class NotebookError(ValueError):
    """The notebook cannot be edited as asked; the message is the tool error."""


class CellEdit(Struct, frozen=True, kw_only=True):
    """One validated ``NotebookEdit`` call."""

    mode: EditMode
    cell_id: str | None
    source: str
    cell_type: CellType | None


def parse_edit(input: Mapping[str, Any]) -> CellEdit:
    """The call's edit, or :class:`ToolInputError` naming what is wrong."""
    check_members(input, NOTEBOOK_EDIT)
    source = get_str(input, "new_source")
    mode = _MODES.get(get_optional_str(input, "edit_mode") or "replace")
    if mode is None:
        raise ToolInputError("parameter 'edit_mode' must be replace, insert or delete")
    type_name = get_optional_str(input, "cell_type")
    cell_type = None if type_name is None else _CELL_TYPES.get(type_name)
    if type_name is not None and cell_type is None:
        raise ToolInputError("parameter 'cell_type' must be code or markdown")
    if mode == "insert" and cell_type is None:
        raise ToolInputError("cell_type is required when edit_mode is insert")
    cell_id = get_optional_str(input, "cell_id") or None
    if mode != "insert" and cell_id is None:
        raise ToolInputError(f"cell_id is required when edit_mode is {mode}")
    return CellEdit(mode=mode, cell_id=cell_id, source=source, cell_type=cell_type)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise NotebookError("the notebook has a duplicate JSON member")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise NotebookError(f"the notebook has the non-JSON number {name}")


def load_notebook(text: str) -> dict[str, Any]:
    """Strictly parse and check a notebook (see the module docstring)."""
    try:
        notebook = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, NotebookError):
            raise
        raise NotebookError("the notebook is not valid JSON") from None
    if not isinstance(notebook, dict):
        raise NotebookError("the notebook is not a JSON object")
    if notebook.get("nbformat") != NBFORMAT:
        raise NotebookError(f"only nbformat {NBFORMAT} notebooks can be edited")
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("the notebook has no cells list")
    for cell in cells:
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError("the notebook has a cell that is not a cell object")
        source = cell.get("source")
        if not isinstance(source, str) and not (
            isinstance(source, list) and all(isinstance(line, str) for line in source)
        ):
            raise NotebookError("the notebook has a cell whose source is not text")
    return notebook


def _index(cells: list[dict[str, Any]], cell_id: str) -> int:
    """The position of ``cell_id``: a cell's ``id``, else ``cell-N``."""
    for position, cell in enumerate(cells):
        if cell.get("id") == cell_id:
            return position
    prefix, _, number = cell_id.partition("-")
    if prefix == "cell" and number.isdigit() and int(number) < len(cells):
        return int(number)
    raise NotebookError(f"no cell with id {cell_id!r} in the notebook")


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _new_cell(cell_type: CellType, source: str, *, with_id: bool) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": source}
    if cell_type == "code":
        cell.update(execution_count=None, outputs=[])
    if with_id:  # nbformat 4.5 gives every cell an id
        cell["id"] = os.urandom(4).hex()
    return cell


class Edited(Struct, frozen=True, kw_only=True):
    """The edited notebook's text and what the model is told."""

    text: str
    cell_id: str
    message: str


def apply_edit(notebook: dict[str, Any], edit: CellEdit) -> Edited:
    """Apply one edit to a checked notebook (pure: ids come from the urandom
    of a new cell only)."""
    cells: list[dict[str, Any]] = notebook["cells"]
    minor = notebook.get("nbformat_minor")
    with_ids = isinstance(minor, int) and minor >= 5
    if edit.mode == "insert":
        position = 0 if edit.cell_id is None else _index(cells, edit.cell_id) + 1
        if edit.cell_type is None:  # parse_edit requires it
            raise NotebookError("cell_type is required when edit_mode is insert")
        cell = _new_cell(edit.cell_type, edit.source, with_id=with_ids)
        cells.insert(position, cell)
        shown = str(cell.get("id", f"cell-{position}"))
        message = f"Inserted cell {shown} with {_echo(edit.source)}"
    else:
        if edit.cell_id is None:
            raise NotebookError(f"cell_id is required when edit_mode is {edit.mode}")
        position = _index(cells, edit.cell_id)
        shown = edit.cell_id
        if edit.mode == "delete":
            del cells[position]
            message = f"Deleted cell {shown}"
        else:
            cell = cells[position]
            if edit.cell_type is not None and edit.cell_type != cell["cell_type"]:
                cell["cell_type"] = edit.cell_type
                cell.pop("attachments", None)
            cell["source"] = edit.source
            if cell["cell_type"] == "code":
                cell["execution_count"] = None
                cell["outputs"] = []
            else:
                cell.pop("execution_count", None)
                cell.pop("outputs", None)
            message = f"Updated cell {shown} with {_echo(edit.source)}"
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return Edited(text=text, cell_id=shown, message=message)


def _echo(source: str) -> str:
    if len(source) <= MAX_ECHO_CHARS:
        return source
    return source[:MAX_ECHO_CHARS] + f"… ({len(source)} characters)"


class NotebookEditTool(OnePathTool):
    name: Final = "NotebookEdit"
    spec: Final = NOTEBOOK_EDIT
    read_only: Final = False
    path_key = "notebook_path"

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            edit = parse_edit(input)
            (path,) = self.paths(input, ctx.cwd)
            named = self.named_paths(input, ctx.cwd)
            if path.suffix != ".ipynb":
                raise ToolInputError(
                    "the file must be a Jupyter notebook (.ipynb); use Edit for other files"
                )
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        check_cancel(cancel)
        parent = open_admitted(self.name, path, ctx, named, parent_dir, what="notebook")
        if isinstance(parent, ToolOutput):
            return parent
        try:
            return self._edit(parent, path, edit, cancel, ctx.checkpoints)
        finally:
            os.close(parent)

    @staticmethod
    def _edit(
        parent: int,
        path: Path,
        edit: CellEdit,
        cancel: CancelToken,
        checkpoints: FileCheckpoints | None,
    ) -> ToolOutput:
        shown = display(path)
        try:
            fd = os.open(path.name, READ_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return error(f"NotebookEdit: notebook does not exist: {shown}")
        except OSError as exc:
            return error(f"NotebookEdit: cannot read {shown}: {exc.strerror}")
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return error(f"NotebookEdit: {shown} is not a regular file")
            text = bounded_text(fd, path)
            edited = apply_edit(load_notebook(text), edit)
        except ToolInputError as exc:
            return error(f"NotebookEdit: {exc}")
        except NotebookError as exc:
            return error(f"NotebookEdit: {shown}: {exc}")
        except OSError as exc:
            return error(f"NotebookEdit: cannot read {shown}: {exc.strerror}")
        finally:
            os.close(fd)
        check_cancel(cancel)
        try:
            # DEC-PROFILE-2: the file checkpoints see this change as Write's.
            replace_in(
                parent,
                path.name,
                edited.text,
                mode=regular_mode(st),
                path=path,
                checkpoints=checkpoints,
            )
        except OSError as exc:
            return error(f"NotebookEdit: cannot write {shown}: {exc.strerror}")
        return output(edited.message)
