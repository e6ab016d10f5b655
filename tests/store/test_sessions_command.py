"""``agentx sessions list|copy`` over real stores (DEC-STORE-1): moving the
sessions of one machine's files into a shared PostgreSQL store, verified
entry by entry."""

from __future__ import annotations

import io
import subprocess
import uuid
from pathlib import Path

from PIL import Image

from agentx.messages.frozen import thaw
from agentx.sessions.store.select import open_blobs, open_store
from tests.e2e.agentx_process import DUPLEX, agentx_command, base_env, encode, run_once, user
from tests.store.pg_cluster import PASSWORD, Cluster
from tests.unit.sessions.test_sessions import REALISTIC, header_for

NOWHERE = Path("/nonexistent-agentx-home")
#: The realistic entries whose blobs exist: an attachment's blob is copied
#: with its session (tested with real attachments below).
ENTRIES = [e for name, e in REALISTIC if "attachment" not in name]


def _sessions(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*agentx_command(), "sessions", *args],
        capture_output=True,
        text=True,
        env=base_env(home),
        cwd=home,
        timeout=60,
        check=False,
    )


def test_copy_moves_the_local_sessions_into_postgres_and_resume_works(
    tmp_path: Path, pg_url: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ids = [str(uuid.uuid4()) for _ in range(2)]
    for n, session in enumerate(ids):
        done = run_once(
            [*DUPLEX, "--session-id", session],
            encode(user(f"local {n}")) + encode(user(f"again {n}")),
            home=home,
        )
        assert done.returncode == 0, done.stderr
    local = _sessions(home, "list")
    assert local.returncode == 0, local.stderr
    header, *rows = local.stdout.splitlines()
    assert header.split("\t")[:4] == ["SESSION", "CREATED", "LAST_ACTIVITY", "TURNS"]
    assert sorted(row.split("\t")[0] for row in rows) == sorted(ids)
    assert {row.split("\t")[3] for row in rows} == {"2"}

    copied = _sessions(home, "copy", "--from", f"file://{home}/sessions", "--to", pg_url)
    assert copied.returncode == 0, copied.stderr
    assert sorted(copied.stdout.splitlines()) == sorted(
        f"{session}: copied, 6 entries verified" for session in ids
    )
    again = _sessions(home, "copy", "--from", f"file://{home}/sessions", "--to", pg_url, ids[0])
    assert again.stdout == f"{ids[0]}: already there, verified\n"
    listed = _sessions(home, "list", "--store", pg_url)
    assert listed.stdout == local.stdout
    assert pg_url not in copied.stdout + copied.stderr + listed.stdout

    elsewhere = tmp_path / "other-machine"
    elsewhere.mkdir()
    resumed = run_once(
        [*DUPLEX, "--session-store", pg_url, "--resume", ids[1]],
        encode(user("resumed elsewhere")),
        home=elsewhere,
    )
    assert resumed.returncode == 0, resumed.stderr
    store = open_store(pg_url, NOWHERE)
    messages = [thaw(e) for e in store.read(ids[1]).entries if e["type"] == "message"]
    texts = [b["text"] for e in messages for b in e["content"]]
    store.close()
    prompts = ["local 1", "again 1", "resumed elsewhere"]
    assert texts == [t for p in prompts for t in (p, p)]


def _attached_session(home: Path, tmp_path: Path) -> str:
    """A session of ``home``'s files whose first prompt attached an image."""
    image = tmp_path / "square.png"
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (0, 128, 255)).save(buffer, format="PNG")
    image.write_bytes(buffer.getvalue())
    session = str(uuid.uuid4())
    done = run_once(["-p", "look", "--attach", str(image), "--session-id", session], b"", home=home)
    assert done.returncode == 0, done.stderr
    return session


def test_copy_moves_the_attachment_blobs_and_resume_elsewhere_replays_them(
    tmp_path: Path, pg_url: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    session = _attached_session(home, tmp_path)
    (stored,) = (home / "blobs" / "sha256").iterdir()
    copied = _sessions(home, "copy", "--from", f"file://{home}/sessions", "--to", pg_url)
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout == f"{session}: copied, 3 entries and 1 blob verified\n"
    again = _sessions(home, "copy", "--from", f"file://{home}/sessions", "--to", pg_url)
    assert again.stdout == f"{session}: already there, 1 blob verified\n"
    blobs = open_blobs(pg_url, NOWHERE)
    assert blobs.read(f"blob_sha256_{stored.name}") == stored.read_bytes()
    elsewhere = tmp_path / "other-machine"
    elsewhere.mkdir()
    resumed = run_once(
        [*DUPLEX, "--session-store", pg_url, "--resume", session],
        encode(user("and again")),
        home=elsewhere,
    )
    assert resumed.returncode == 0, resumed.stderr


def test_copy_refuses_a_session_whose_blob_is_missing(tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    session = _attached_session(home, tmp_path)
    (stored,) = (home / "blobs" / "sha256").iterdir()
    stored.unlink()
    done = _sessions(home, "copy", "--from", f"file://{home}/sessions", "--to", pg_url)
    assert done.returncode == 2
    assert done.stderr == (
        f"agentx: session {session}: blob_sha256_{stored.name} is missing in the source\n"
    )
    target = open_store(pg_url, NOWHERE)
    assert target.headers() == (), "nothing of the session was copied"
    target.close()


def test_copy_refuses_a_different_session_of_the_same_id(tmp_path: Path, pg_url: str) -> None:
    files = open_store(f"file://{tmp_path}/sessions", NOWHERE)
    files.create(header_for())
    files.append(header_for().session_id, ENTRIES)
    target = open_store(pg_url, NOWHERE)
    target.create(header_for())
    target.append(header_for().session_id, [{"other": True}])
    target.close()
    done = _sessions(tmp_path, "copy", "--from", f"file://{tmp_path}/sessions", "--to", pg_url)
    assert done.returncode == 2
    assert "the target holds a different session" in done.stderr
    assert pg_url not in done.stderr


def test_copy_from_postgres_to_files_reads_back_entry_by_entry(tmp_path: Path, pg_url: str) -> None:
    source = open_store(pg_url, NOWHERE)
    source.create(header_for())
    source.append(header_for().session_id, ENTRIES)
    expected = source.read(header_for().session_id)
    source.close()
    done = _sessions(tmp_path, "copy", "--from", pg_url, "--to", f"file://{tmp_path}/copy")
    assert done.returncode == 0, done.stderr
    files = open_store(f"file://{tmp_path}/copy", NOWHERE)
    assert files.read(header_for().session_id) == expected


def test_an_unreachable_store_is_one_line_without_the_url(tmp_path: Path, cluster: Cluster) -> None:
    url = f"postgresql://guarded:{PASSWORD}@/agentx?host={tmp_path}/none"
    done = _sessions(tmp_path, "list", "--store", url)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1
    assert PASSWORD not in done.stderr
    assert url not in done.stderr


def test_usage_errors_exit_2_without_echoing_a_url(tmp_path: Path) -> None:
    secret_url = f"postgresql://u:{PASSWORD}@h/db"
    for args in (
        ("copy", "--from", secret_url),
        ("list", "--bogus", secret_url),
        ("list", secret_url),
        ("frobnicate",),
        ("copy", "--from", secret_url, "--to", secret_url, "not-a-uuid"),
    ):
        done = _sessions(tmp_path, *args)
        assert done.returncode == 2, args
        assert PASSWORD not in done.stderr
        assert done.stdout == ""


def test_show_export_and_delete_on_postgres(tmp_path: Path, pg_url: str) -> None:
    """DEC-STORE-5: the same commands on the PostgreSQL store; the URL is never printed."""
    home = tmp_path / "home"
    home.mkdir()
    session = str(uuid.uuid4())
    done = run_once(
        [*DUPLEX, "--session-store", pg_url, "--session-id", session],
        encode(user("stored in postgres")) + encode(user("twice")),
        home=home,
    )
    assert done.returncode == 0, done.stderr
    shown = _sessions(home, "show", session, "--store", pg_url)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"session {session}"
    assert "  first prompt: stored in postgres" in shown.stdout.splitlines()
    assert len([line for line in shown.stdout.splitlines() if line.startswith("  turn ")]) == 2
    exported = _sessions(home, "export", session, "--store", pg_url)
    assert exported.returncode == 0, exported.stderr
    kinds = [line.split('"type":"', 1)[1].split('"', 1)[0] for line in exported.stdout.splitlines()]
    assert kinds == ["session_header", *(["message", "message", "turn"] * 2)]
    deleted = _sessions(home, "delete", session, "--store", pg_url)
    assert (deleted.returncode, deleted.stdout) == (0, f"{session}: deleted\n"), deleted.stderr
    listed = _sessions(home, "list", "--store", pg_url)
    assert listed.stdout.splitlines()[1:] == []
    for done in (shown, exported, deleted, listed):
        assert PASSWORD not in done.stdout + done.stderr
