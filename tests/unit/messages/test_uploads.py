"""The upload lifecycle core (WIRE-018, WIRE-019, MOD-083 size/digest)."""

from __future__ import annotations

import base64
import hashlib
import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx.messages.attachment_limits import MIB
from agentx.messages.attachments import CommittedManifests, Manifest, Reason
from agentx.messages.inbound_import import (
    AttachmentAbort,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
)
from agentx.messages.inbound_user import AttachmentRef
from agentx.messages.records import Emit
from agentx.messages.upload_lifecycle import AppendChunk, DiscardTemp, Effect, RunCommit, State
from agentx.messages.upload_wire import valid_display_name
from agentx.messages.uploads import UploadCore

PROMPT = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
OTHER_PROMPT = "5a0c4d0e-1b2c-4d3e-8f40-516273849506"
PAYLOAD = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
T0 = 1000.0


def make_core(**overrides: Any) -> UploadCore:
    counter = itertools.count()
    options: dict[str, Any] = {
        "session_id": lambda: "sess-1",
        "new_uuid": lambda: f"uuid-{next(counter)}",
        "capability_enabled": True,
        "manifests": CommittedManifests(),
    }
    options.update(overrides)
    return UploadCore(**options)


def begin_op(n: int = 1, **overrides: Any) -> AttachmentBegin:
    fields: dict[str, Any] = {
        "line": 1,
        "upload_id": f"upl_{n}",
        "attachment_id": f"att_{n}",
        "prompt_uuid": PROMPT,
        "name": "screen.png",
        "size_bytes": len(PAYLOAD),
        "mime_type": "image/png",
        "sha256": hashlib.sha256(PAYLOAD).hexdigest(),
    }
    fields.update(overrides)
    return AttachmentBegin(**fields)


def chunk_op(upload_id: str, sequence: int, data: bytes | str) -> AttachmentChunk:
    text = data if isinstance(data, str) else base64.b64encode(data).decode()
    return AttachmentChunk(line=2, upload_id=upload_id, sequence=sequence, data=text)


def records(effects: tuple[Effect, ...]) -> list[dict[str, Any]]:
    return [dict(r) for e in effects if isinstance(e, Emit) for r in e.records]


def only_record(effects: tuple[Effect, ...]) -> dict[str, Any]:
    (record,) = records(effects)
    return record


def upload_all(core: UploadCore, n: int = 1, payload: bytes = PAYLOAD) -> tuple[Effect, ...]:
    """begin + two chunks + commit; returns the commit's effects."""
    core.begin(begin_op(n, size_bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest()), T0)
    half = len(payload) // 2
    core.chunk(chunk_op(f"upl_{n}", 0, payload[:half]), T0)
    core.chunk(chunk_op(f"upl_{n}", 1, payload[half:]), T0)
    return core.commit(AttachmentCommit(line=3, upload_id=f"upl_{n}"), T0)


def assert_failed(effects: tuple[Effect, ...], upload_id: str, status: str, reason: str) -> None:
    """Rule 2: the temp file goes first, then the single terminal record."""
    assert effects[0] == DiscardTemp(upload_id=upload_id)
    record = only_record(effects)
    assert (record["status"], record["terminal"], record["reason"]) == (status, True, reason)


# --- begin -----------------------------------------------------------------


def test_accepted_begin_record_has_the_wire_shape() -> None:
    effects = make_core().begin(begin_op(), T0)
    assert records(effects) == [
        {
            "type": "attachment_import_result",
            "version": 1,
            "upload_id": "upl_1",
            "attachment_id": "att_1",
            "status": "accepted",
            "terminal": False,
            "prompt_uuid": PROMPT,
            "uuid": "uuid-0",
            "session_id": "sess-1",
        }
    ]


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"mime_type": "image/gif"}, "unsupported_mime_type"),
        ({"mime_type": "IMAGE/PNG"}, "unsupported_mime_type"),
        ({"name": ""}, "invalid_name"),
        ({"name": "a" * 256}, "invalid_name"),
        ({"name": "é" * 128}, "invalid_name"),
        ({"name": "dir/screen.png"}, "invalid_name"),
        ({"name": "dir\\screen.png"}, "invalid_name"),
        ({"name": "a\x00b"}, "invalid_name"),
        ({"name": "a\x1fb"}, "invalid_name"),
        ({"name": "a\x7fb"}, "invalid_name"),
        ({"name": "a\x85b"}, "invalid_name"),
        ({"name": "a\ud800b"}, "invalid_name"),
        ({"size_bytes": 0}, "invalid_size"),
        ({"size_bytes": 20 * MIB + 1}, "attachment_too_large"),
    ],
    ids=[
        "mime-gif",
        "mime-case",
        "name-empty",
        "name-256-bytes",
        "name-256-utf8-bytes",
        "name-slash",
        "name-backslash",
        "name-nul",
        "name-c0-control",
        "name-del",
        "name-c1-control",
        "name-lone-surrogate",
        "size-zero",
        "size-one-past-20MiB",
    ],
)
def test_begin_admission_rejections(overrides: dict[str, Any], reason: str) -> None:
    core = make_core()
    record = only_record(core.begin(begin_op(**overrides), T0))
    assert record == {
        "type": "attachment_import_rejected",
        "version": 1,
        "operation": "begin",
        "upload_id": "upl_1",
        "attachment_id": "att_1",
        "prompt_uuid": PROMPT,
        "status": "rejected",
        "terminal": False,
        "reason": reason,
        "uuid": "uuid-0",
        "session_id": "sess-1",
    }
    assert core.active_ids == ()
    assert core.ledger_size == 0


@pytest.mark.parametrize(
    "overrides",
    [
        {"name": "a" * 255},
        {"name": "é" * 127 + "a"},
        {"name": "日本語 screen (1).png"},
        {"size_bytes": 20 * MIB},
        {"mime_type": "image/jpeg"},
        {"mime_type": "application/pdf"},
    ],
    ids=["name-255-bytes", "name-255-utf8-bytes", "name-unicode", "size-20MiB", "jpeg", "pdf"],
)
def test_begin_admits_at_the_limits(overrides: dict[str, Any]) -> None:
    record = only_record(make_core().begin(begin_op(**overrides), T0))
    assert record["status"] == "accepted"


def test_capability_not_advertised_rejects_every_operation() -> None:
    core = make_core(capability_enabled=False)
    ops = [
        core.begin(begin_op(), T0),
        core.chunk(chunk_op("upl_1", 0, b"x"), T0),
        core.commit(AttachmentCommit(line=1, upload_id="upl_1"), T0),
        core.abort(AttachmentAbort(line=1, upload_id="upl_1"), T0),
    ]
    reasons = [(only_record(e)["type"], only_record(e)["reason"]) for e in ops]
    assert reasons == [("attachment_import_rejected", "capability_not_advertised")] * 4


def test_a_withdrawn_capability_rejects_every_later_operation_and_reference() -> None:
    """MOD-A14B: a runtime that fails its check after the capability was
    advertised: the core then answers as if it never had been."""
    core = make_core(capability_enabled=True)
    core.withdraw()
    ops = [
        core.begin(begin_op(), T0),
        core.chunk(chunk_op("upl_1", 0, b"x"), T0),
        core.commit(AttachmentCommit(line=1, upload_id="upl_1"), T0),
        core.abort(AttachmentAbort(line=1, upload_id="upl_1"), T0),
    ]
    reasons = [(only_record(e)["type"], only_record(e)["reason"]) for e in ops]
    assert reasons == [("attachment_import_rejected", "capability_not_advertised")] * 4
    assert core.admit_refs(PROMPT, (ref_of(manifest("att_1")),)) == "capability_not_advertised"


def test_eight_active_uploads_then_the_ninth_is_rejected() -> None:
    core = make_core()
    for n in range(8):
        assert only_record(core.begin(begin_op(n), T0))["status"] == "accepted"
    assert only_record(core.begin(begin_op(8), T0))["reason"] == "too_many_active_uploads"
    core.abort(AttachmentAbort(line=1, upload_id="upl_0"), T0)
    assert only_record(core.begin(begin_op(9), T0))["status"] == "accepted"


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        (begin_op(1, attachment_id="att_other"), "duplicate_upload_id"),
        (begin_op(2, attachment_id="att_1"), "duplicate_attachment_id"),
    ],
    ids=["same-upload-id", "same-attachment-id"],
)
def test_duplicate_ids_while_active(second: AttachmentBegin, reason: str) -> None:
    core = make_core()
    core.begin(begin_op(1), T0)
    assert only_record(core.begin(second, T0))["reason"] == reason
    assert core.active_ids == ("upl_1",)


def test_terminal_upload_id_and_committed_attachment_id_stay_taken() -> None:
    core = make_core()
    upload_all(core)
    core.commit_succeeded(
        "upl_1", size_bytes=1, sha256="0" * 64, storage_id="blob_sha256_" + "0" * 64
    )
    assert only_record(core.begin(begin_op(1, attachment_id="att_9"), T0))["reason"] == (
        "duplicate_upload_id"
    )
    again = begin_op(2, attachment_id="att_1")
    assert only_record(core.begin(again, T0))["reason"] == "duplicate_attachment_id"


def test_ledger_ceiling_at_the_limit_and_one_past() -> None:
    """The 100,000 terminal lifecycle IDs (WIRE-018), not shrunk for the test."""
    core = make_core()
    for n in range(99_999):
        core.begin(begin_op(n), T0)
        core.abort(AttachmentAbort(line=1, upload_id=f"upl_{n}"), T0)
    assert only_record(core.begin(begin_op(99_999), T0))["status"] == "accepted"
    assert only_record(core.begin(begin_op(100_000), T0))["reason"] == "upload_ledger_full"
    assert core.ledger_size == 99_999
    assert len(core.manifests) == 0, "the ledger does not consume manifest slots"


def test_manifest_ceiling_is_independent_of_the_ledger() -> None:
    manifests = CommittedManifests(capacity=2)
    core = make_core(manifests=manifests)
    manifests.add(OTHER_PROMPT, manifest("att_file"))  # a file import (initial_cli)
    assert only_record(core.begin(begin_op(1), T0))["status"] == "accepted"
    assert only_record(core.begin(begin_op(2), T0))["reason"] == "manifest_limit_reached"
    assert core.ledger_size == 0


def test_commit_fails_when_the_manifest_ceiling_was_reached_meanwhile() -> None:
    manifests = CommittedManifests(capacity=1)
    core = make_core(manifests=manifests)
    upload_all(core)
    manifests.add(OTHER_PROMPT, manifest("att_file"))
    effects = core.commit_succeeded("upl_1", size_bytes=1, sha256="a" * 64, storage_id="s")
    assert_failed(effects, "upl_1", "failed", "manifest_limit_reached")


# --- chunks ----------------------------------------------------------------


def test_valid_chunks_emit_no_record_and_append_decoded_bytes() -> None:
    core = make_core()
    core.begin(begin_op(), T0)
    effects = core.chunk(chunk_op("upl_1", 0, PAYLOAD[:10]), T0)
    assert effects == (AppendChunk(upload_id="upl_1", data=PAYLOAD[:10]),)


@pytest.mark.parametrize(
    ("sequences", "reason"),
    [
        ((1,), "chunk_out_of_order"),
        ((0, 0), "chunk_out_of_order"),
        ((0, 2), "chunk_out_of_order"),
        ((0, 1, 1), "chunk_out_of_order"),
    ],
    ids=["missing-first", "repeated", "gap", "repeated-later"],
)
def test_sequence_must_advance_by_exactly_one(sequences: tuple[int, ...], reason: str) -> None:
    core = make_core()
    core.begin(begin_op(), T0)
    *good, bad = sequences
    for seq in good:
        assert records(core.chunk(chunk_op("upl_1", seq, b"\x89P"), T0)) == []
    assert_failed(core.chunk(chunk_op("upl_1", bad, b"\x89P"), T0), "upl_1", "failed", reason)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("", "chunk_empty"),
        ("QQ", "chunk_not_canonical_base64"),
        (base64.b64encode(bytes(262_145)).decode(), "chunk_too_large"),
    ],
    ids=["empty", "noncanonical", "oversized"],
)
def test_a_bad_chunk_fails_the_lifecycle(data: str, reason: str) -> None:
    core = make_core()
    core.begin(begin_op(size_bytes=20 * MIB), T0)
    assert_failed(core.chunk(chunk_op("upl_1", 0, data), T0), "upl_1", "failed", reason)
    assert core.active_ids == ()


def test_cumulative_size_at_the_declared_size_and_one_past() -> None:
    core = make_core()
    core.begin(begin_op(size_bytes=4), T0)
    assert records(core.chunk(chunk_op("upl_1", 0, b"abc"), T0)) == []
    assert records(core.chunk(chunk_op("upl_1", 1, b"d"), T0)) == []
    effects = core.chunk(chunk_op("upl_1", 2, b"e"), T0)
    assert_failed(effects, "upl_1", "failed", "size_exceeded")


# --- commit ----------------------------------------------------------------


def test_commit_runs_media_validation_then_acknowledges_the_manifest() -> None:
    core = make_core()
    assert upload_all(core) == (RunCommit(upload_id="upl_1", mime_type="image/png", kind="image"),)
    assert core.state_of("upl_1") is State.COMMITTING
    effects = core.commit_succeeded(
        "upl_1", size_bytes=99, sha256="b" * 64, storage_id="blob_sha256_" + "b" * 64
    )
    assert effects[0] == DiscardTemp(upload_id="upl_1")
    assert records(effects) == [
        {
            "type": "attachment_import_result",
            "version": 1,
            "upload_id": "upl_1",
            "attachment_id": "att_1",
            "status": "committed",
            "terminal": True,
            "prompt_uuid": PROMPT,
            "attachment": {
                "type": "attachment_ref",
                "attachment_id": "att_1",
                "kind": "image",
                "name": "screen.png",
                "mime_type": "image/png",
                "size_bytes": 99,
                "sha256": "b" * 64,
                "storage_id": "blob_sha256_" + "b" * 64,
            },
            "uuid": "uuid-1",
            "session_id": "sess-1",
        }
    ]
    assert core.manifests.for_prompt(PROMPT)[0].sha256 == "b" * 64


@pytest.mark.parametrize(
    ("declared", "reason"),
    [
        ({"size_bytes": len(PAYLOAD) + 1}, "size_mismatch"),
        ({"sha256": "0" * 64}, "sha256_mismatch"),
        ({"sha256": hashlib.sha256(PAYLOAD).hexdigest().upper()}, "sha256_mismatch"),
    ],
    ids=["short", "digest", "digest-uppercase"],
)
def test_commit_checks_declared_size_and_digest(declared: dict[str, Any], reason: str) -> None:
    core = make_core()
    core.begin(begin_op(**declared), T0)
    core.chunk(chunk_op("upl_1", 0, PAYLOAD), T0)
    effects = core.commit(AttachmentCommit(line=3, upload_id="upl_1"), T0)
    assert_failed(effects, "upl_1", "failed", reason)


@pytest.mark.parametrize(
    "operation",
    ["chunk", "commit", "abort"],
)
def test_operations_while_committing_are_rejected(operation: str) -> None:
    core = make_core()
    upload_all(core)
    op = {
        "chunk": lambda: core.chunk(chunk_op("upl_1", 2, b"x"), T0),
        "commit": lambda: core.commit(AttachmentCommit(line=4, upload_id="upl_1"), T0),
        "abort": lambda: core.abort(AttachmentAbort(line=4, upload_id="upl_1"), T0),
    }[operation]
    record = only_record(op())
    assert (record["type"], record["operation"], record["reason"]) == (
        "attachment_import_rejected",
        operation,
        "upload_committing",
    )
    assert core.state_of("upl_1") is State.COMMITTING


def test_shell_failure_during_commit_is_one_terminal_failure() -> None:
    core = make_core()
    upload_all(core)
    assert_failed(core.fail("upl_1", Reason.MAGIC_MISMATCH), "upl_1", "failed", "magic_mismatch")


# --- abort, duplicates after terminal ----------------------------------------


def test_abort_then_every_later_operation_is_rejected_not_acknowledged() -> None:
    core = make_core()
    core.begin(begin_op(), T0)
    assert_failed(
        core.abort(AttachmentAbort(line=2, upload_id="upl_1"), T0),
        "upl_1",
        "aborted",
        "client_abort",
    )
    later = [
        core.abort(AttachmentAbort(line=3, upload_id="upl_1"), T0),
        core.chunk(chunk_op("upl_1", 0, b"x"), T0),
        core.commit(AttachmentCommit(line=4, upload_id="upl_1"), T0),
    ]
    for effects in later:
        record = only_record(effects)
        assert (record["type"], record["terminal"], record["reason"]) == (
            "attachment_import_rejected",
            False,
            "upload_not_active",
        )
        assert "attachment_id" not in record


@pytest.mark.parametrize("operation", ["chunk", "commit", "abort"])
def test_unknown_upload_id_is_rejected(operation: str) -> None:
    core = make_core()
    effects = {
        "chunk": lambda: core.chunk(chunk_op("upl_x", 0, b"x"), T0),
        "commit": lambda: core.commit(AttachmentCommit(line=1, upload_id="upl_x"), T0),
        "abort": lambda: core.abort(AttachmentAbort(line=1, upload_id="upl_x"), T0),
    }[operation]()
    assert only_record(effects)["reason"] == "unknown_upload_id"
    assert core.ledger_size == 0


# --- time, EOF and stop --------------------------------------------------------


def test_a_lifecycle_is_alive_at_120_s_and_expired_past_it() -> None:
    core = make_core()
    core.begin(begin_op(), T0)
    assert core.expire(T0 + 120.0) == ()
    assert records(core.chunk(chunk_op("upl_1", 0, b"\x89"), T0 + 120.0)) == []
    assert_failed(core.expire(T0 + 120.001), "upl_1", "expired", "upload_timeout")
    assert core.expire(T0 + 500) == ()


def test_an_operation_after_the_deadline_expires_first_then_is_rejected() -> None:
    core = make_core()
    core.begin(begin_op(), T0)
    effects = core.chunk(chunk_op("upl_1", 0, b"x"), T0 + 121)
    assert [(r["type"], r["status"], r.get("reason")) for r in records(effects)] == [
        ("attachment_import_result", "expired", "upload_timeout"),
        ("attachment_import_rejected", "rejected", "upload_not_active"),
    ]


@pytest.mark.parametrize(
    ("cause", "status", "reason"),
    [("eof", "aborted", "input_closed"), ("stop", "failed", "host_shutdown")],
    ids=["eof", "stop"],
)
def test_close_settles_every_lifecycle_exactly_once(cause: Any, status: str, reason: str) -> None:
    core = make_core()
    core.begin(begin_op(1), T0)
    upload_all(core, 2)  # left committing
    effects = core.close(cause)
    assert [e for e in effects if isinstance(e, DiscardTemp)] == [
        DiscardTemp(upload_id="upl_1"),
        DiscardTemp(upload_id="upl_2"),
    ]
    assert [(r["upload_id"], r["status"], r["reason"]) for r in records(effects)] == [
        ("upl_1", status, reason),
        ("upl_2", status, reason),
    ]
    assert core.close(cause) == ()


# --- WIRE-020 through the core -----------------------------------------------


def manifest(attachment_id: str) -> Manifest:
    return Manifest(
        attachment_id=attachment_id,
        kind="image",
        name="a.png",
        mime_type="image/png",
        size_bytes=10,
        sha256="c" * 64,
        storage_id="blob_sha256_" + "c" * 64,
    )


def ref_of(m: Manifest) -> AttachmentRef:
    return AttachmentRef(
        attachment_id=m.attachment_id,
        kind=m.kind,
        name=m.name,
        mime_type=m.mime_type,
        size_bytes=m.size_bytes,
        sha256=m.sha256,
        storage_id=m.storage_id,
    )


def test_admit_refs_waits_for_open_uploads_of_the_same_prompt() -> None:
    core = make_core()
    upload_all(core, 1)
    core.commit_succeeded("upl_1", size_bytes=10, sha256="c" * 64, storage_id="s1")
    committed = core.manifests.for_prompt(PROMPT)
    core.begin(begin_op(2), T0)
    assert core.admit_refs(PROMPT, tuple(map(ref_of, committed))) == "attachment_upload_pending"
    core.abort(AttachmentAbort(line=9, upload_id="upl_2"), T0)
    assert core.admit_refs(PROMPT, tuple(map(ref_of, committed))) is None


def test_admit_refs_without_the_capability() -> None:
    core = make_core(capability_enabled=False)
    assert core.admit_refs(PROMPT, (ref_of(manifest("att_1")),)) == "capability_not_advertised"
    assert core.admit_refs(PROMPT, ()) is None


# --- properties ------------------------------------------------------------

_op = st.tuples(
    st.sampled_from(["begin", "chunk", "commit", "abort", "tick", "ok", "fail"]),
    st.integers(0, 3),
    st.integers(0, 3),
    st.floats(0, 200),
)


@settings(max_examples=300)
@given(st.lists(_op, max_size=40), st.sampled_from(["eof", "stop"]))
def test_every_accepted_lifecycle_gets_exactly_one_terminal(
    ops: list[tuple[str, int, int, float]], cause: Any
) -> None:
    """Rule 2 under arbitrary interleavings: one terminal per accepted
    upload ID, rejections are never terminal, at most 8 active."""
    core = make_core(max_active=2)
    emitted: list[dict[str, Any]] = []
    now = T0
    for kind, n, seq, dt in ops:
        now += dt
        upload_id = f"upl_{n}"
        if kind == "begin":
            effects = core.begin(begin_op(n, size_bytes=2), now)
        elif kind == "chunk":
            effects = core.chunk(chunk_op(upload_id, seq, b"\x89"), now)
        elif kind == "commit":
            effects = core.commit(AttachmentCommit(line=1, upload_id=upload_id), now)
        elif kind == "abort":
            effects = core.abort(AttachmentAbort(line=1, upload_id=upload_id), now)
        elif kind == "tick":
            effects = core.expire(now)
        elif core.state_of(upload_id) is State.COMMITTING:
            effects = (
                core.commit_succeeded(upload_id, size_bytes=2, sha256="d" * 64, storage_id="s")
                if kind == "ok"
                else core.fail(upload_id, Reason.STORAGE_ERROR)
            )
        else:
            continue
        assert len(core.active_ids) <= 2
        emitted += records(effects)
    emitted += records(core.close(cause))
    accepted = [r["upload_id"] for r in emitted if r["status"] == "accepted"]
    terminals = [r["upload_id"] for r in emitted if r["terminal"]]
    assert sorted(accepted) == sorted(terminals)
    assert len(set(terminals)) == len(terminals)
    assert all(not r["terminal"] for r in emitted if r["type"] == "attachment_import_rejected")
    assert len({r["uuid"] for r in emitted}) == len(emitted)


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("a" * 252 + "\u20ac", True),
        ("a" * 253 + "\u20ac", False),
        ("a" * 252 + "\u202e", False),
        ("a" * 251 + "\u202e", False),
        ("\u202a.png", False),
        ("\u202e.png", False),
        ("\u202f.png", True),
        ("\u2065.png", True),
        ("\u2066.png", False),
        ("\u2069.png", False),
        ("\u206a.png", True),
        ("\u200d.png", True),
        ("\u200e.png", False),
        ("\u200f.png", False),
        ("\u2010.png", True),
        ("\u061b.png", True),
        ("\u061c.png", False),
        ("\u2027.png", True),
        ("\u2028.png", False),
        ("\u2029.png", False),
        (".", False),
        ("..", False),
        ("...", True),
        (".png", True),
        ("..png", True),
    ],
    ids=[
        "255-bytes",
        "256-bytes",
        "bidi-at-255-bytes",
        "bidi-at-254-bytes",
        "lre",
        "rlo",
        "after-rlo",
        "before-isolates",
        "lri",
        "pdi",
        "after-pdi",
        "zwj-kept-for-emoji",
        "lrm",
        "rlm",
        "after-rlm",
        "before-alm",
        "alm",
        "before-line-separator",
        "line-separator",
        "paragraph-separator",
        "dot",
        "dot-dot",
        "three-dots",
        "dotfile",
        "dot-dot-prefix",
    ],
)
def test_display_name_spoofing_at_the_edges(name: str, valid: bool) -> None:
    assert valid_display_name(name) is valid
    record = only_record(make_core().begin(begin_op(name=name), T0))
    assert (record["type"] == "attachment_import_result") is valid
    if not valid:
        assert record["reason"] == "invalid_name"
