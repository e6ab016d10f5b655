"""The session's file checkpoints over real files (agentx.checkpoints.keeper,
DEC-PROFILE-2): the entry bound, the session byte bound, a store that
fails, all through the file tools' one write path (fsaccess.replace_in)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentx.checkpoints.keeper import Checkpoints
from agentx.checkpoints.stores import Place
from agentx.messages import checkpoints as core
from agentx.messages.permission_rules import PermissionRules
from agentx.tools.base import CallAccess, PathAccess
from agentx.tools.fsaccess import open_dir, replace_in


def _keeper(tmp_path: Path, kind: str = "temp") -> Checkpoints:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def access() -> PathAccess:
        return CallAccess(tool_name="Write", rules=PermissionRules(), mode="default", cwd=work)

    location = str(tmp_path / "cp") if kind == "files" else ""
    place = Place(kind="files" if kind == "files" else "temp", location=location, session_id="s")
    return Checkpoints(place, access)


def _answer(outcome: object) -> dict[str, object]:
    assert isinstance(outcome, dict), outcome
    return dict(outcome)


def _write(keeper: Checkpoints, path: Path, text: str) -> None:
    parent = open_dir(path.parent)
    try:
        replace_in(parent, path.name, text, mode=None, path=path, checkpoints=keeper)
    finally:
        os.close(parent)


def test_past_the_entry_bound_tracking_stops_and_a_rewind_across_it_is_refused(
    tmp_path: Path,
) -> None:
    keeper = _keeper(tmp_path)
    try:
        target = tmp_path / "work" / "a.txt"
        target.write_text("v0")
        keeper.begin_message("m-0")
        _write(keeper, target, "v1")  # the second entry
        # m-1 adds its mark and a.txt kept again (changed since); every later
        # message only its mark, up to exactly MAX_ENTRIES entries.
        for n in range(1, core.MAX_ENTRIES - 2):
            keeper.begin_message(f"m-{n}")
        last = f"m-{core.MAX_ENTRIES - 3}"
        assert keeper.rewind(last, dry_run=True) == core.answer([], 0, 0)
        keeper.begin_message("m-past")  # one past: tracking stops
        _write(keeper, target, "v2")
        assert keeper.rewind("m-past", dry_run=False) == core.NOT_FOUND
        refused = keeper.rewind("m-0", dry_run=False)
        assert isinstance(refused, str) and str(core.MAX_ENTRIES) in refused
        assert target.read_text() == "v2"
    finally:
        keeper.close()


def test_past_the_session_byte_bound_a_state_is_lost_and_its_rewind_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core, "MAX_SESSION_BYTES", 100)
    keeper = _keeper(tmp_path)
    try:
        work = tmp_path / "work"
        first, same, other = work / "first", work / "same", work / "other"
        first.write_text("a" * 60)
        same.write_text("a" * 60)  # the same bytes: kept once, costs nothing more
        other.write_text("b" * 41)  # 60 + 41 > 100: not kept
        keeper.begin_message("m")
        for path in (first, same, other):
            _write(keeper, path, "changed")
        refused = _answer(keeper.rewind("m", dry_run=True))
        assert refused["canRewind"] is False
        assert f"{other}: its earlier state was not kept" in str(refused["error"])
        assert "already held 100 bytes" in str(refused["error"])
        other.write_text("b" * 41)  # put back by hand: nothing lost any more...
        os.utime(other, ns=(0, 0))  # ...but only an unchanged file passes
        assert _answer(keeper.rewind("m", dry_run=True))["canRewind"] is False
    finally:
        keeper.close()


def test_a_change_whose_state_cannot_be_recorded_does_not_happen(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path, "files")
    try:
        target = tmp_path / "work" / "a.txt"
        target.write_text("v0")
        keeper.begin_message("m")
        shutil.rmtree(tmp_path / "cp")  # the store's folder is gone
        with pytest.raises(OSError, match="checkpoint could not be recorded"):
            _write(keeper, target, "v1")
        assert target.read_text() == "v0"
    finally:
        keeper.close()


def test_after_close_no_change_happens(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    target = tmp_path / "work" / "a.txt"
    keeper.begin_message("m")
    keeper.close()
    with pytest.raises(OSError, match="ending"):
        _write(keeper, target, "v1")
    assert not target.exists()


def test_a_file_changed_by_another_program_is_kept_again_as_the_next_message_begins(
    tmp_path: Path,
) -> None:
    keeper = _keeper(tmp_path)
    try:
        target = tmp_path / "work" / "a.txt"
        target.write_text("v0")
        keeper.begin_message("m1")
        _write(keeper, target, "v1")
        keeper.begin_message("m2")
        target.write_text("by hand")  # not through a file tool
        keeper.begin_message("m3")
        target.write_text("by hand again")
        assert _answer(keeper.rewind("m3", dry_run=False))["canRewind"] is True
        assert target.read_text() == "by hand"
        assert _answer(keeper.rewind("m2", dry_run=False))["canRewind"] is True
        assert target.read_text() == "v1"
        assert _answer(keeper.rewind("m1", dry_run=False))["canRewind"] is True
        assert target.read_text() == "v0"
    finally:
        keeper.close()
