"""End-to-end: attachment import over the real process (WIRE-017..022, MOD-083..085;
scenarios 22, 23, 24)."""

from __future__ import annotations

import base64
import hashlib
import io
import uuid
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from agentx.media.runtime_check import RECORD_NAME, runtime_seal
from tests.e2e.agentx_process import (
    AgentxProcess,
    Record,
    is_result,
    write_auth,
)

REPLAY = (
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--replay-user-messages",
)


def _png(color: tuple[int, int, int], size: int = 32) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buffer, format="PNG")
    return buffer.getvalue()


def _ops(upload_id: str, attachment_id: str, prompt: str, name: str, data: bytes) -> list[Record]:
    common = {"type": "attachment_import", "version": 1, "upload_id": upload_id}
    half = len(data) // 2
    return [
        {
            **common,
            "operation": "begin",
            "prompt_uuid": prompt,
            "attachment_id": attachment_id,
            "name": name,
            "size_bytes": len(data),
            "mime_type": "image/png",
            "sha256": hashlib.sha256(data).hexdigest(),
        },
        {
            **common,
            "operation": "chunk",
            "sequence": 0,
            "data": base64.b64encode(data[:half]).decode(),
        },
        {
            **common,
            "operation": "chunk",
            "sequence": 1,
            "data": base64.b64encode(data[half:]).decode(),
        },
        {**common, "operation": "commit"},
    ]


def _is_terminal(upload_id: str) -> Any:
    def match(record: Record) -> bool:
        return (
            record.get("type") == "attachment_import_result"
            and record["upload_id"] == upload_id
            and record["terminal"]
        )

    return match


def test_scenario_22_two_uploads_one_prompt(home: Path, processes: list[AgentxProcess]) -> None:
    proc = AgentxProcess(REPLAY, home=home)
    processes.append(proc)
    prompt = str(uuid.uuid4())
    first, second = _png((255, 0, 0)), _png((0, 0, 255), 48)
    proc.send(*_ops("upl_one", "att_one", prompt, "red.png", first))
    proc.send(*_ops("upl_two", "att_two", prompt, "blue.png", second))
    one = proc.until(_is_terminal("upl_one"))[-1]
    two = proc.until(_is_terminal("upl_two"))[-1]
    assert one["status"] == two["status"] == "committed", (one.get("reason"), two.get("reason"))
    assert one["prompt_uuid"] == two["prompt_uuid"] == prompt
    manifests = [one["attachment"], two["attachment"]]
    content = [{"type": "text", "text": "Compare these in order."}] + [
        {"type": "attachment_ref", **m} for m in manifests
    ]
    proc.send(
        {
            "type": "user",
            "uuid": prompt,
            "session_id": "",
            "parent_tool_use_id": None,
            "message": {"role": "user", "content_version": 1, "content": content},
        }
    )
    records = proc.until(is_result)
    proc.close_stdin()
    records += proc.rest()
    assert proc.wait() == 0
    replay = next(r for r in records if r["type"] == "user" and r.get("isReplay"))
    assert replay["message"]["content_version"] == 1
    assert replay["message"]["content"] == content
    result = next(r for r in records if is_result(r))
    assert result["subtype"] == "success" and result["prompt_uuid"] == prompt
    assert result["uuid"] != prompt
    assert "red.png" in result["result"] and "blue.png" in result["result"]
    assert result["result"].index("red.png") < result["result"].index("blue.png")
    terminals = [
        r for r in proc.seen if r.get("type") == "attachment_import_result" and r["terminal"]
    ]
    assert len(terminals) == 2
    for data in (first, second):
        assert base64.b64encode(data)[:40] not in proc.raw
    assert str(home / "blobs").encode() not in proc.raw  # no storage paths (WIRE-022)


def test_scenario_23_bad_digest_fails_and_prompt_is_refused(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = AgentxProcess(REPLAY, home=home)
    processes.append(proc)
    prompt = str(uuid.uuid4())
    data = _png((0, 255, 0))
    ops = _ops("upl_bad", "att_bad", prompt, "g.png", data)
    ops[0] = {**ops[0], "sha256": "0" * 64}
    proc.send(*ops)
    terminal = proc.until(_is_terminal("upl_bad"))[-1]
    assert terminal["status"] == "failed" and "attachment" not in terminal
    proc.send(ops[3])  # a post-terminal duplicate commit: no second terminal record
    manifest = {
        "attachment_id": "att_bad",
        "kind": "image",
        "name": "g.png",
        "mime_type": "image/png",
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "storage_id": "blob_sha256_" + hashlib.sha256(data).hexdigest(),
    }
    proc.send(
        {
            "type": "user",
            "uuid": prompt,
            "parent_tool_use_id": None,
            "message": {"content_version": 1, "content": [{"type": "attachment_ref", **manifest}]},
        }
    )
    result = proc.until(is_result)[-1]
    assert result["subtype"] == "error_during_execution"
    assert result["errors"][0].startswith("input_error: ")
    proc.close_stdin()
    rest = proc.rest()
    assert proc.wait() == 0
    seen = proc.seen + rest
    assert len([r for r in seen if _is_terminal("upl_bad")(r)]) == 1
    assert any(r.get("type") == "attachment_import_rejected" for r in seen)
    leftovers = (
        list((home / "blobs" / "tmp").rglob("*")) if (home / "blobs" / "tmp").exists() else []
    )
    assert [p for p in leftovers if p.is_file()] == []


def test_scenario_24_no_capability_rejects_imports_and_references(
    home: Path, processes: list[AgentxProcess]
) -> None:
    write_auth(home, [{"id": "t", "type": "scripted", "model": "m", "attachments": False}])
    proc = AgentxProcess(REPLAY, home=home)
    processes.append(proc)
    prompt = str(uuid.uuid4())
    proc.send(_ops("upl_x", "att_x", prompt, "x.png", _png((1, 2, 3)))[0])
    rejected = proc.until(lambda r: r.get("type") == "attachment_import_rejected")[-1]
    assert rejected["reason"] == "capability_not_advertised"
    assert "input_capabilities" not in proc.seen[0]
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_initial_cli_attachments(home: Path, tmp_path: Path) -> None:
    """DEC-CLI-1: -p PROMPT --attach PATH... through the same admission."""
    from tests.e2e.agentx_process import records_of, run_once

    image = tmp_path / "shot.png"
    image.write_bytes(_png((10, 20, 30)))
    proc = run_once(
        ["-p", "describe", "--attach", str(image), "--output-format", "json"], b"", home=home
    )
    assert proc.returncode == 0, proc.stderr
    (result,) = records_of(proc.stdout)
    assert "shot.png" in result["result"] and result["prompt_uuid"]
    assert str(tmp_path).encode() not in proc.stdout


def test_initial_cli_attachment_refused_is_a_start_up_error(home: Path, tmp_path: Path) -> None:
    from tests.e2e.agentx_process import run_once

    fake = tmp_path / "fake.png"
    fake.write_bytes(b"<svg>not an image</svg>")
    proc = run_once(["-p", "describe", "--attach", str(fake)], b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"unsupported_mime_type" in proc.stderr and str(fake).encode() not in proc.stderr


def test_scenario_23_failed_priority_now_record_does_not_interrupt(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """WIRE-020: references are validated before a priority-now record may
    interrupt; a refused one leaves the active turn running to success."""
    import json as _json

    from tests.e2e.agentx_process import is_state, user

    script = home / "slow.json"
    script.write_text(
        _json.dumps(
            {"version": 1, "turns": [{"steps": [{"sleep_ms": 1500}, {"text": "finished"}]}]}
        )
    )
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = AgentxProcess(REPLAY, home=home)
    processes.append(proc)
    proc.send(user("slow one"))
    proc.until(is_state("running"))
    bogus = {
        "type": "attachment_ref",
        "attachment_id": "att_never",
        "kind": "image",
        "name": "n.png",
        "mime_type": "image/png",
        "size_bytes": 10,
        "sha256": "a" * 64,
        "storage_id": "blob_sha256_" + "a" * 64,
    }
    proc.send(
        {
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "priority": "now",
            "parent_tool_use_id": None,
            "message": {"content_version": 1, "content": [bogus]},
        }
    )
    first = proc.until(is_result)[-1]
    second = proc.until(is_result)[-1]
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    assert first["errors"][0].startswith("input_error: ")
    assert second["subtype"] == "success" and second["result"] == "finished"


def test_a_new_runtime_is_qualified_at_the_first_begin_not_at_start(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """MOD-A14B off the start path (DEC-CLI-3): a fresh home advertises
    ``input_capabilities`` without running the check; the first begin runs it,
    remembers the verdict and the upload commits."""
    proc = AgentxProcess(REPLAY, home=home)
    processes.append(proc)
    proc.send({"type": "control_request", "request_id": "i", "request": {"subtype": "initialize"}})
    proc.until(lambda r: r.get("response", {}).get("request_id") == "i")
    assert "input_capabilities" in proc.seen[0]
    assert not (home / RECORD_NAME).exists()
    proc.send(*_ops("upl_q", "att_q", str(uuid.uuid4()), "q.png", _png((9, 9, 9))))
    done = proc.until(_is_terminal("upl_q"))[-1]
    assert done["status"] == "committed", done.get("reason")
    assert (home / RECORD_NAME).read_text().strip() == runtime_seal()
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_a_runtime_that_fails_its_check_withdraws_the_capability(
    home: Path, tmp_path: Path, processes: list[AgentxProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pypdf that does not import (first on the path): the capability
    advertised at start is withdrawn at the first begin, with one WARN line;
    that begin and a later one are rejected ``capability_not_advertised`` and
    nothing is remembered."""
    broken = tmp_path / "site"
    (broken / "pypdf").mkdir(parents=True)
    (broken / "pypdf" / "__init__.py").write_text("raise ImportError('broken install')\n")
    monkeypatch.setenv("PYTHONPATH", str(broken))
    proc = AgentxProcess(REPLAY, home=home)
    processes.append(proc)
    prompt = str(uuid.uuid4())
    proc.send(_ops("upl_a", "att_a", prompt, "a.png", _png((1, 2, 3)))[0])
    first = proc.until(lambda r: r.get("type") == "attachment_import_rejected")[-1]
    proc.send(_ops("upl_b", "att_b", prompt, "b.png", _png((3, 2, 1)))[0])
    second = proc.until(
        lambda r: r.get("type") == "attachment_import_rejected" and r["upload_id"] == "upl_b"
    )[-1]
    assert first["reason"] == second["reason"] == "capability_not_advertised"
    assert "input_capabilities" in proc.seen[0]
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    warnings = [line for line in proc.stderr.splitlines() if "attachments disabled" in line]
    assert len(warnings) == 1, warnings
    assert warnings[0].endswith(
        "agentx: WARNING: attachments disabled: pypdf does not import: ImportError"
    )
    assert not (home / RECORD_NAME).exists()
