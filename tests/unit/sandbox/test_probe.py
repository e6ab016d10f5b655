"""The tier probe and its remembered verdict (DEC-PERM-BASH-5), on the real
kernel: a start-up with the same fingerprint reads the verdict, any other
fingerprint or a damaged record probes again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agentx.sandbox.probe import RECORD_NAME, cached_probe, find_bwrap, fingerprint, probe

BWRAP = shutil.which("bwrap")


@pytest.mark.skipif(BWRAP is None, reason="needs bubblewrap (.ci/run installs it)")
def test_the_verdict_is_kept_and_reused(tmp_path: Path) -> None:
    bwrap = find_bwrap(None, ())
    first = cached_probe(tmp_path, bwrap)
    assert first.tier == "namespaces" and first.reason is None
    record = tmp_path / RECORD_NAME
    kept = json.loads(record.read_text())
    assert kept["seal"] == fingerprint(bwrap) and kept["tier"] == "namespaces"
    assert oct(record.stat().st_mode & 0o777) == "0o600"
    # A kept verdict is what the next start-up reports, without probing.
    record.write_text(json.dumps({**kept, "tier": "landlock", "reason": "kept"}))
    assert cached_probe(tmp_path, bwrap).reason == "kept"
    # Another fingerprint (here: no bubblewrap) probes again and keeps that.
    again = cached_probe(tmp_path, None)
    assert again.tier == "landlock" and again.reason == "bubblewrap (bwrap) not found"
    assert json.loads(record.read_text())["seal"] == fingerprint(None)


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"seal": 1}', '{"seal": "x", "tier": "root"}'])
def test_a_damaged_record_probes_again(tmp_path: Path, damage: str) -> None:
    (tmp_path / RECORD_NAME).write_text(damage)
    found = cached_probe(tmp_path, None)
    assert found.tier in ("landlock", "none")
    assert json.loads((tmp_path / RECORD_NAME).read_text())["tier"] == found.tier


def test_bwrap_inside_a_writable_root_is_never_used(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    assert find_bwrap(str(fake), (str(tmp_path),)) is None
    assert find_bwrap(str(fake), ("/elsewhere",)) == os.path.realpath(fake)
    assert find_bwrap(str(tmp_path / "absent"), ()) is None


def test_a_probe_without_bubblewrap_falls_to_landlock_with_its_reason() -> None:
    found = probe(None)
    assert found.tier == "landlock"
    assert found.reason == "bubblewrap (bwrap) not found"
    assert found.bwrap is None


def test_the_private_tmp_keeps_what_the_helper_needs_from_below_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agentx whose virtual environment lives under /tmp still starts its
    exec helper in the namespaces tier: the private /tmp binds the
    interpreter's prefix back, read-only; nothing else below /tmp shows."""
    from agentx.sandbox import probe

    venv = tmp_path / "venv"
    venv.mkdir()
    monkeypatch.setattr(probe.sys, "prefix", str(venv))
    binds = probe.private_tmp()
    assert binds[:2] == ["--tmpfs", "/tmp"]
    pairs = [binds[i : i + 3] for i in range(2, len(binds), 3)]
    assert ["--ro-bind", os.path.realpath(venv), os.path.realpath(venv)] in pairs
    assert all(p[0] == "--ro-bind" and p[1].startswith("/tmp/") for p in pairs)
    assert str(tmp_path / "other") not in binds
