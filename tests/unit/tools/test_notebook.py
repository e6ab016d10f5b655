"""``NotebookEdit`` (DEC-TURN-3, DEC-PERM-PATH): the edit core as a table and
the tool over real files, hostile notebooks included."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.permission_rules import PermissionRules, parse_rule
from agentx.tools.base import CallAccess, ToolContext
from agentx.tools.files import MAX_EDIT_BYTES
from agentx.tools.notebook import (
    CellEdit,
    NotebookEditTool,
    NotebookError,
    apply_edit,
    load_notebook,
    parse_edit,
)
from agentx.tools.registry import BUILTIN_TOOLS
from agentx.turns.cancel import CancelScope


def _notebook(minor: int = 5) -> dict[str, Any]:
    return {
        "nbformat": 4,
        "nbformat_minor": minor,
        "metadata": {"language_info": {"name": "python"}},
        "cells": [
            {
                "cell_type": "code",
                "id": "a1",
                "metadata": {},
                "source": ["print(1)\n", "print(2)"],
                "execution_count": 3,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}],
            },
            {"cell_type": "markdown", "id": "b2", "metadata": {}, "source": "# title"},
        ],
    }


def _ids(notebook: dict[str, Any]) -> list[str]:
    return [cell.get("id", "?") for cell in notebook["cells"]]


def test_replace_by_id_clears_outputs() -> None:
    nb = _notebook()
    edited = apply_edit(nb, CellEdit(mode="replace", cell_id="a1", source="x = 1", cell_type=None))
    cell = json.loads(edited.text)["cells"][0]
    assert cell["source"] == "x = 1" and cell["outputs"] == [] and cell["execution_count"] is None
    assert edited.message.startswith("Updated cell a1")
    assert edited.text.endswith("\n") and '\n "cells"' in edited.text  # Jupyter's layout


def test_replace_by_index_and_type_change() -> None:
    nb = _notebook()
    apply_edit(nb, CellEdit(mode="replace", cell_id="cell-1", source="y", cell_type="code"))
    assert nb["cells"][1]["cell_type"] == "code" and nb["cells"][1]["outputs"] == []
    apply_edit(nb, CellEdit(mode="replace", cell_id="a1", source="# m", cell_type="markdown"))
    assert "outputs" not in nb["cells"][0]


@pytest.mark.parametrize(("cell_id", "position"), [(None, 0), ("a1", 1), ("b2", 2), ("cell-0", 1)])
def test_insert_after_or_first(cell_id: str | None, position: int) -> None:
    nb = _notebook()
    apply_edit(nb, CellEdit(mode="insert", cell_id=cell_id, source="new", cell_type="markdown"))
    assert nb["cells"][position]["source"] == "new"
    assert len(nb["cells"]) == 3 and "id" in nb["cells"][position]  # nbformat 4.5 ids


def test_insert_in_an_older_minor_has_no_id() -> None:
    nb = _notebook(minor=4)
    apply_edit(nb, CellEdit(mode="insert", cell_id=None, source="c", cell_type="code"))
    assert "id" not in nb["cells"][0] and nb["cells"][0]["outputs"] == []


def test_delete() -> None:
    nb = _notebook()
    edited = apply_edit(nb, CellEdit(mode="delete", cell_id="a1", source="", cell_type=None))
    assert _ids(nb) == ["b2"] and edited.message == "Deleted cell a1"


@pytest.mark.parametrize("cell_id", ["zz", "cell-2", "cell-x", "cell--1"])
def test_unknown_cell(cell_id: str) -> None:
    with pytest.raises(NotebookError, match="no cell with id"):
        apply_edit(_notebook(), CellEdit(mode="delete", cell_id=cell_id, source="", cell_type=None))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("not json", "not valid JSON"),
        ("[]", "not a JSON object"),
        ('{"nbformat": 3, "cells": []}', "nbformat 4"),
        ('{"nbformat": 4}', "no cells list"),
        ('{"nbformat": 4, "cells": [1]}', "not a cell object"),
        ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}', "not text"),
        ('{"nbformat": 4, "nbformat": 4, "cells": []}', "duplicate"),
        ('{"nbformat": 4, "cells": [], "x": NaN}', "NaN"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
    ],
    ids=["text", "array", "v3", "no-cells", "cell-not-object", "source", "dup", "nan", "deep"],
)
def test_strict_load(text: str, problem: str) -> None:
    with pytest.raises(NotebookError, match=problem):
        load_notebook(text)


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        ({"notebook_path": "n.ipynb", "new_source": "x", "edit_mode": "insert"}, "cell_type"),
        ({"notebook_path": "n.ipynb", "new_source": "x"}, "cell_id is required"),
        ({"notebook_path": "n.ipynb", "new_source": "x", "cell_id": "a", "edit_mode": "m"}, "mode"),
        (
            {"notebook_path": "n.ipynb", "new_source": "x", "cell_id": "a", "cell_type": "raw"},
            "type",
        ),
        ({"notebook_path": "n.ipynb", "new_source": "x", "cell_id": "a", "extra": 1}, "extra"),
    ],
)
def test_parse_edit_refuses(tool_input: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_edit(tool_input)


def _ctx(cwd: Path, rules: PermissionRules | None = None) -> ToolContext:
    access = CallAccess(
        tool_name="NotebookEdit",
        rules=rules or PermissionRules(),
        mode="acceptEdits",
        cwd=cwd.resolve(),
    )
    return ToolContext(cwd=cwd, env={}, access=access)


def _run(cwd: Path, rules: PermissionRules | None = None, **tool_input: Any) -> Any:
    return NotebookEditTool().run(tool_input, _ctx(cwd, rules), CancelScope())


def test_tool_edits_the_file_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(_notebook()))
    path.chmod(0o640)
    result = _run(tmp_path, notebook_path=str(path), cell_id="b2", new_source="# new")
    assert not result.is_error, result.content
    assert json.loads(path.read_text())["cells"][1]["source"] == "# new"
    assert path.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize(
    ("content", "problem"),
    [(b"not json at all", "not valid JSON"), (b"\xff\xfe", "UTF-8")],
)
def test_tool_refuses_bad_files_untouched(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "n.ipynb"
    path.write_bytes(content)
    result = _run(tmp_path, notebook_path=str(path), cell_id="a", new_source="x")
    assert result.is_error and problem in result.content
    assert path.read_bytes() == content


def test_tool_refuses_a_huge_notebook_at_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "n.ipynb"
    with path.open("wb") as handle:  # one past the bound: refused before parsing
        handle.truncate(MAX_EDIT_BYTES + 1)
    result = _run(tmp_path, notebook_path=str(path), cell_id="a", new_source="x")
    assert result.is_error and f"larger than {MAX_EDIT_BYTES}" in result.content
    exact = tmp_path / "exact.ipynb"
    body = json.dumps(_notebook())
    exact.write_text(body + " " * (MAX_EDIT_BYTES - len(body)))
    assert exact.stat().st_size == MAX_EDIT_BYTES
    result = _run(tmp_path, notebook_path=str(exact), cell_id="a1", new_source="x")
    assert not result.is_error, result.content


def test_tool_refuses_a_fifo_and_other_suffixes(tmp_path: Path) -> None:
    fifo = tmp_path / "f.ipynb"
    os.mkfifo(fifo)
    result = _run(tmp_path, notebook_path=str(fifo), cell_id="a", new_source="x")
    assert result.is_error and "not a regular file" in result.content
    other = tmp_path / "n.json"
    other.write_text(json.dumps(_notebook()))
    result = _run(tmp_path, notebook_path=str(other), cell_id="a1", new_source="x")
    assert result.is_error and ".ipynb" in result.content


def test_tool_refuses_a_link_to_a_denied_notebook(tmp_path: Path) -> None:
    """DEC-PERM-PATH: an ``Edit`` deny rule governs NotebookEdit, on either spelling."""
    secret = tmp_path / "secret"
    secret.mkdir()
    target = secret / "s.ipynb"
    target.write_text(json.dumps(_notebook()))
    link = tmp_path / "link.ipynb"
    link.symlink_to(target)
    rules = PermissionRules(deny=(parse_rule("Edit(./secret/**)"),))
    result = _run(tmp_path, rules, notebook_path=str(link), cell_id="a1", new_source="x")
    assert result.is_error and "denied by rule" in result.content
    assert json.loads(target.read_text()) == _notebook()


def test_the_registry_entry_is_lazy_and_the_same_tool() -> None:
    (entry,) = [tool for tool in BUILTIN_TOOLS if tool.name == "NotebookEdit"]
    assert entry.spec.name == "NotebookEdit" and entry.read_only is False
    assert entry.named_paths({"notebook_path": "n.ipynb"}, Path("/w")) == (Path("/w/n.ipynb"),)  # type: ignore[attr-defined]
