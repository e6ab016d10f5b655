"""What start-up imports: the fast paths (WIRE-026) and a text session
(bench/startup_bench.py).

Each case runs :func:`agentx.cli.main` in a fresh interpreter, as the
``agentx`` entry point does, and reads ``sys.modules`` afterwards. Modules cut
from a path are listed here so they cannot creep back: ``dataclasses`` (and
the ``inspect``/``ast`` machinery under it), ``hashlib``/OpenSSL, the turn
accounting, and the whole runtime stack; with no auth.json to parse, ``json``
too. ``decimal`` is not on the list: the encoder's ujson imports it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

PROGRAM = """
import sys
from agentx.cli import main
status = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\n" + repr(sorted(sys.modules)))
sys.exit(status)
"""

#: Never imported to answer ``--list-providers``, with or without an auth.json.
DISCOVERY_NEVER = (
    "dataclasses",
    "inspect",
    "ast",
    "hashlib",
    "_hashlib",
    "agentx.messages.accounting",
    "agentx.messages.raw_json",
    "agentx.launch",
    "agentx.actors",
    "pykka",
    "loguru",
    "PIL",
    "pypdf",
    "httpx",
    "mcp",
    "genai_prices",
)
#: Never imported by a text session on the built-in echo provider: each is
#: loaded where it is first used (an attachment, an HTTP provider, a
#: WebFetch, an MCP server, a Bash rule, catalog pricing, a PostgreSQL store,
#: a permission ask, a background task).
#: Pillow and pypdf are for the MOD-A14B check too, which runs before the
#: first attachment is admitted, never at start (agentx.media.runtime_check).
SESSION_NEVER = (
    # DEC-CLI-3: loguru loads on the first line logged; a clean session logs none.
    "loguru",
    "PIL",
    "pypdf",
    "cryptography",
    "httpx",
    "httpcore",
    "anyio",
    "mcp",
    "tree_sitter",
    "tree_sitter_bash",
    "genai_prices",
    "psycopg",
    "tenacity",
    "agentx.media.admission",
    "agentx.media.initial_attachments",
    # DEC-CLI-3: the blob store, the upload core and its reason codes load
    # with the first attachment; the permission race and wire with the first ask; the
    # task board and the command shell with the first background task; the
    # decision core with the first tool call; ``random`` not at all.
    "agentx.media.blobs",
    "agentx.messages.attachments",
    "agentx.messages.inbound_import",
    "agentx.messages.uploads",
    "agentx.messages.permission_race",
    "agentx.messages.tasks",
    "agentx.turns.background",
    "agentx.messages.permission_decisions",
    "agentx.messages.permission_wire",
    "agentx.messages.permission_updates",
    # DEC-PROFILE-2: the initialize field registry is the sdk profile's only.
    "agentx.actors.initialize_fields",
    "random",
    # DEC-CLI-3: with no path rule, no MCP server and no sandbox block, their
    # grammars are not loaded.
    "agentx.messages.path_rules",
    "agentx.messages.mcp.config",
    "agentx.messages.sandbox_policy",
    "agentx.mcp.client",
    "agentx.mcp.tools",
    "agentx.actors.mcp_manager",
    "agentx.config.price_catalog",
    "agentx.providers.http",
    "agentx.providers.anthropic",
    "agentx.providers.openai",
    "agentx.sessions.store.postgres",
    # DEC-CLI-3: no auth.json to parse, no credential stream to follow.
    "agentx.config.auth_json",
    "agentx.config.auth_schema",
    "agentx.messages.stream_guard",
    # DEC-CLI-3: no --post-turn-summaries, no replayed prior context.
    "agentx.messages.post_turn_summary",
    "agentx.sessions.prior_context",
)
#: One duplex session as an SDK drives it: initialize, a prompt, EOF.
SESSION_INPUT = (
    b'{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize"}}\n'
    b'{"type":"user","message":{"role":"user","content":"hello"},'
    b'"parent_tool_use_id":null,"session_id":""}\n'
)
DUPLEX = ("--input-format", "stream-json", "--output-format", "stream-json")
#: Not imported either when there is no auth.json (the built-in registry).
BUILTIN_NEVER = (*DISCOVERY_NEVER, "json", "agentx.config.auth_json", "agentx.config.auth_schema")
#: ``--version`` imports the CLI module and nothing of its own beyond it.
VERSION_NEVER = ("typing", "json", "ujson", "agentx.messages", "agentx.config.discovery")

AUTH_JSON = {
    "version": 2,
    "providers": [
        {
            "id": "claude",
            "type": "anthropic",
            "model": "claude-x",
            "endpoint": "http://127.0.0.1:9",
            "api_key": "sk-startup-test",
            "headers": {"X-Extra": "header-value"},
            "reasoning": {"efforts": ["low", "high"], "default": "low"},
            "pricing": {"input_per_mtok": 3, "output_per_mtok": 15},
            "default": True,
        },
        {"id": "offline", "type": "scripted", "model": "echo", "script": "turns.json"},
    ],
}


def run_main(
    home: Path, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> tuple[bytes, set[str]]:
    """Run the entry point with ``args`` (and ``env`` added to the
    environment); its stdout and every module it loaded."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        env=dict(os.environ) | {"AGENTX_HOME": str(home)} | (env or {}),
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules = done.stderr.decode("utf-8").rsplit("\n", 1)[-1]
    return done.stdout, set(ast.literal_eval(modules))


def loaded_from(modules: set[str], forbidden: tuple[str, ...]) -> list[str]:
    """The modules of ``modules`` that are, or sit under, a ``forbidden`` name."""
    return sorted(
        name
        for name in modules
        if any(name == cut or name.startswith(f"{cut}.") for cut in forbidden)
    )


@pytest.mark.parametrize(
    ("auth_json", "args", "forbidden"),
    [
        pytest.param(
            None,
            ("--list-providers", "--output-format", "json"),
            BUILTIN_NEVER,
            id="builtin-json",
        ),
        pytest.param(None, ("--list-providers",), BUILTIN_NEVER, id="builtin-text"),
        pytest.param(
            AUTH_JSON, ("--list-providers", "--output-format=json"), DISCOVERY_NEVER, id="auth-json"
        ),
        pytest.param(AUTH_JSON, ("--list-providers",), DISCOVERY_NEVER, id="auth-text"),
    ],
)
def test_discovery_imports_none_of_the_cut_modules(
    tmp_path: Path,
    auth_json: dict[str, object] | None,
    args: tuple[str, ...],
    forbidden: tuple[str, ...],
) -> None:
    if auth_json is not None:
        (tmp_path / "auth.json").write_text(json.dumps(auth_json), encoding="utf-8")
    stdout, modules = run_main(tmp_path, *args)
    expected_ids = ["local"] if auth_json is None else ["claude", "offline"]
    if "json" in " ".join(args):
        assert [p["id"] for p in json.loads(stdout)["providers"]] == expected_ids
    else:
        assert [line.split()[0] for line in stdout.decode().splitlines()[1:]] == expected_ids
    assert "agentx.config.registry" in modules  # the case really ran discovery
    assert loaded_from(modules, forbidden) == []


def test_version_imports_only_the_cli(tmp_path: Path) -> None:
    stdout, modules = run_main(tmp_path, "--version")
    assert stdout.startswith(b"agentx ")
    assert sorted(m for m in modules if m.startswith("agentx")) == ["agentx", "agentx.cli"]
    assert loaded_from(modules, VERSION_NEVER) == []


def test_the_cut_modules_are_real_module_names() -> None:
    """A misspelt entry would make the checks above pass vacuously."""
    names = BUILTIN_NEVER + VERSION_NEVER + SESSION_NEVER + SDK_SESSION_NEVER
    done = subprocess.run(
        [sys.executable, "-c", f"import {', '.join(names)}"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_importing_the_launcher_loads_none_of_the_heavy_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, agentx.launch; print(repr(sorted(sys.modules)))"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    modules = set(ast.literal_eval(done.stdout.decode("utf-8")))
    assert "agentx.actors.host" in modules
    assert loaded_from(modules, SESSION_NEVER) == []


#: The actor system past the writer: imported only once ``system/init`` is
#: with the writer (DEC-CLI-3; :mod:`agentx.actors.host_output`).
AFTER_INIT = (
    "agentx.actors.host_steps",
    "agentx.actors.host_turns",
    "agentx.actors.host_wiring",
    "agentx.actors.shutdown",
    "agentx.actors.broker",
    "agentx.actors.arbiter",
    "agentx.actors.supervisor",
    "agentx.actors.turn_runner",
    "agentx.actors.reader",
    "agentx.turns.engine",
    # The session policy is built by the control step; the MCP status table
    # loads only when servers are configured.
    "agentx.permissions.policy",
    "agentx.turns.contracts",
    "agentx.messages.mcp.status",
)

BEFORE_INIT = """
import sys
from agentx.actors import host_output
start_output = host_output.start_output

def observed(*args, **kwargs):
    sys.stderr.write("\\n" + repr(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
    return start_output(*args, **kwargs)

host_output.start_output = observed
import agentx.actors.host as host
host.start_output = observed
from agentx.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_system_init_is_written_before_the_rest_of_the_actor_system_loads(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BEFORE_INIT, *DUPLEX],
        input=SESSION_INPUT,
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "AGENTX_HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["subtype"] == "init"
    lines = [ln for ln in done.stderr.decode("utf-8").splitlines() if ln.startswith("[")]
    assert len(lines) == 1, done.stderr
    at_init = set(ast.literal_eval(lines[0]))
    assert "agentx.actors.writer" in at_init  # the control case
    assert loaded_from(at_init, AFTER_INIT) == []


def test_a_text_session_loads_none_of_the_heavy_modules(tmp_path: Path) -> None:
    """The real path: launch, system/init, initialize, one echo turn, EOF;
    the first start on a new runtime too (MOD-A14B waits for the first
    attachment: agentx.media.runtime_check)."""
    first, first_modules = run_main(tmp_path, *DUPLEX, stdin=SESSION_INPUT)
    assert not (tmp_path / "runtime-qualified").exists()  # the check did not run
    stdout, modules = run_main(tmp_path, *DUPLEX, stdin=SESSION_INPUT)
    for output, loaded in ((first, first_modules), (stdout, modules)):
        records = [json.loads(line) for line in output.splitlines()]
        assert records[0]["subtype"] == "init"
        assert "input_capabilities" in records[0]  # still advertised
        assert any(r.get("response", {}).get("request_id") == "init-1" for r in records)
        assert [r["result"] for r in records if r["type"] == "result"] == ["hello"]
        assert "agentx.turns" in loaded  # the control case: real work was done
        assert loaded_from(loaded, SESSION_NEVER) == []


#: What an SDK session with no MCP server never loads: the MCP SDK and its
#: web stack come with the first server (its SDK channel's types are for the
#: type checker only), asyncio and the MCP client with the manager's event
#: loop, which starts with the first server, Pillow with the first image
#: (DEC-CLI-3). With no MCP operation, no hook that runs and suggestions off:
#: the MCP manager and its cores, the hook runner and the hooks' verdicts,
#: ``CLAUDE_ENV_FILE``'s tempfile, and the suggester; with no "@" in the
#: prompt, the mention grammar.
SDK_SESSION_NEVER = (
    "agentx.messages.mentions",
    "agentx.actors.mcp_manager",
    "agentx.mcp.tools",
    "agentx.messages.mcp.status",
    "agentx.messages.mcp.search",
    "agentx.messages.mcp.sdk",
    "agentx.hooks.runner",
    "agentx.hooks.process",
    "agentx.actors.hook_callbacks",
    "agentx.messages.hooks.env_file",
    "agentx.messages.hooks.verdicts",
    "agentx.messages.permission_wire",
    "agentx.messages.permission_updates",
    "tempfile",
    "shutil",
    "agentx.turns.suggestions",
    "asyncio",
    "agentx.mcp.client",
    "mcp",
    "pydantic",
    "starlette",
    "uvicorn",
    "anyio",
    "httpx",
    "PIL",
    "pypdf",
    "agentx.mcp.sdk_channel",
    "agentx.media.admission",
)


@pytest.mark.parametrize("entrypoint", ["sdk-py", "sdk-ts"])
def test_an_sdk_session_without_servers_loads_no_mcp_sdk(tmp_path: Path, entrypoint: str) -> None:
    """The stock SDKs' entry point selects the sdk profile (DEC-PROFILE-2), whose
    MCP manager starts at once in case the client adds servers; with none
    added, none of the MCP SDK loads."""
    stdout, modules = run_main(
        tmp_path, *DUPLEX, stdin=SESSION_INPUT, env={"CLAUDE_CODE_ENTRYPOINT": entrypoint}
    )
    records = [json.loads(line) for line in stdout.splitlines()]
    assert [r["result"] for r in records if r["type"] == "result"] == ["hello"]
    assert "agentx.actors.mcp_deferred" in modules  # the control case: the sdk profile ran
    assert loaded_from(modules, SDK_SESSION_NEVER) == []


#: Runs the entry point and prints, to stderr, the modules loaded when the
#: first output chunk holding ``OBSERVED_RECORD`` (from the environment) is
#: handed to stdout.
AT_RECORD = """
import os, sys
import agentx.cli as cli
write_all = cli._write_all
marker = os.environ["OBSERVED_RECORD"].encode()
seen = []

def observed(fd, data):
    if not seen and marker in data:
        seen.append(sorted(sys.modules))
    return write_all(fd, data)

cli._write_all = observed
status = cli.main(sys.argv[1:])
sys.stderr.write("\\n" + repr(seen[0]) + "\\n")
sys.exit(status)
"""
#: What may be loaded when the ``initialize`` response is written, beyond
#: what the bare interpreter loads (DEC-CLI-3): agentx's and the libraries'
#: modules by name, the standard library's by top-level package. A module
#: that joins the start path must be added here, on purpose.
ALLOWED_FILE = Path(__file__).with_name("before_initialize.txt")
#: What may load besides, up to the first echo ``result`` of a text session
#: (DEC-CLI-3: the first turn's path), in the same form. A module that joins
#: the first turn's path must be added here, on purpose.
FIRST_RESULT_FILE = Path(__file__).with_name("before_first_result.txt")
#: What may load besides, before the ``initialize`` response of a session as
#: the stock SDKs spawn it (``CLAUDE_CODE_ENTRYPOINT=sdk-py``: the sdk
#: profile, DEC-PROFILE-2), in the same form. A module that joins the SDK's
#: start path must be added here, on purpose.
SDK_ALLOWED_FILE = Path(__file__).with_name("before_initialize_sdk.txt")
INITIALIZE_MARK = b'"request_id":"init-1"'
RESULT_MARK = b'{"type":"result"'


def _bench() -> Any:
    """bench/startup_bench.py, whose sdk-py client (argv, environment,
    ``initialize`` and prompt lines of the Python SDK's default ``query()``)
    these tests drive as the bench does."""
    if "startup_bench" in sys.modules:
        return sys.modules["startup_bench"]
    path = Path(__file__).resolve().parents[2] / "bench" / "startup_bench.py"
    spec = importlib.util.spec_from_file_location("startup_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["startup_bench"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _startup_names(modules: set[str]) -> set[str]:
    """agentx's and third-party modules by name, the stdlib's by top level."""
    return {
        name.split(".")[0] if name.split(".")[0] in sys.stdlib_module_names else name
        for name in modules
    }


def _allowed(*files: Path) -> set[str]:
    return {name for file in files for name in file.read_text(encoding="utf-8").split()}


@contextlib.contextmanager
def _program(
    program: str, argv: Sequence[str], home: Path, env: Mapping[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], IO[bytes], IO[bytes]]]:
    """``python -c program argv`` in ``home`` (its ``AGENTX_HOME``) with ``env``
    added, on pipes: the process with its stdin and stdout. Killed if it
    outlives 60 s, so a test never hangs on it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", program, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {}), "AGENTX_HOME": str(home)},
        cwd=home,
    )
    assert proc.stdin is not None and proc.stdout is not None
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        yield proc, proc.stdin, proc.stdout
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _finished(proc: subprocess.Popen[bytes]) -> bytes:
    """The process's stderr, once it has exited."""
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.wait(60)
    return err


def _loaded_at(home: Path, mark: bytes, client: Any = None) -> set[str]:
    """What a duplex session has loaded (beyond the bare interpreter) when it
    hands the record holding ``mark`` to stdout. Driven as an SDK does:
    ``initialize``, its response, then (for a later record) the prompt;
    stdin stays open until the observed record is read, so later work (a
    turn, the shutdown) cannot race the observation. ``client``: a
    :class:`bench.startup_bench.Client` (argv, environment and lines of a
    stock SDK) instead of the bench's own duplex client."""
    bare = subprocess.run(
        [sys.executable, "-c", "import sys; print(repr(sorted(sys.modules)))"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    interpreter = set(ast.literal_eval(bare.stdout.decode("utf-8")))
    initialize, prompt = SESSION_INPUT.splitlines(keepends=True)
    argv, extra_env, answered = DUPLEX, {}, INITIALIZE_MARK
    if client is not None:
        argv, extra_env = client.argv, client.env
        initialize, prompt, answered = client.initialize, client.prompt, client.request_id
    env = {**extra_env, "OBSERVED_RECORD": mark.decode()}
    with _program(AT_RECORD, argv, home, env) as (proc, stdin, stdout):
        stdin.write(initialize)
        stdin.flush()
        answer = b""
        for answer in stdout:
            if answered in answer and mark != answered:
                stdin.write(prompt)
                stdin.flush()
            elif mark in answer:
                break
        stdin.close()
        stdout.read()
        err = _finished(proc)
    assert proc.returncode == 0, err
    assert mark in answer
    line = err.decode("utf-8").rstrip("\n").rsplit("\n", 1)[-1]
    return _startup_names(set(ast.literal_eval(line)) - interpreter)


def _stale(loaded: set[str], allowed: set[str]) -> list[str]:
    """Listed agentx modules that did not load: a cut that left its line
    behind (the standard library's names vary with the platform and stay)."""
    return sorted(name for name in allowed - loaded if name.split(".")[0] == "agentx")


def test_what_loads_before_the_initialize_response_is_on_the_list(tmp_path: Path) -> None:
    loaded = _loaded_at(tmp_path, INITIALIZE_MARK)
    allowed = _allowed(ALLOWED_FILE)
    assert "agentx.actors.writer" in loaded  # the control case: a real start
    extra = sorted(loaded - allowed)
    assert extra == [], f"loaded before initialize, not in {ALLOWED_FILE.name}: {extra}"
    # The list stays exact for agentx's own modules: a module taken off the
    # start path leaves it too, so it cannot come back unnoticed.
    stale = _stale(loaded, allowed)
    assert stale == [], f"listed in {ALLOWED_FILE.name}, not loaded before initialize: {stale}"


def test_what_loads_before_an_sdk_sessions_initialize_response_is_on_the_lists(
    tmp_path: Path,
) -> None:
    """DEC-PROFILE-2, DEC-CLI-3: a session spawned as the Python SDK's default
    ``query()`` spawns it (the sdk profile, ``hooks: null``) loads before its
    ``initialize`` response only what the standalone list and the sdk list
    name; both lists stay exact for agentx's modules on this path."""
    client = _bench().SDK_PY
    loaded = _loaded_at(tmp_path, client.request_id, client)
    standalone, sdk = _allowed(ALLOWED_FILE), _allowed(SDK_ALLOWED_FILE)
    assert "agentx.actors.initialize_fields" in loaded  # the control case: the sdk profile
    assert not standalone & sdk, "a module is on both lists"
    extra = sorted(loaded - standalone - sdk)
    assert extra == [], f"loaded before an SDK's initialize, not on a list: {extra}"
    stale = _stale(loaded, standalone | sdk)
    assert stale == [], f"listed, not loaded before an SDK's initialize: {stale}"


def test_what_loads_before_the_first_result_is_on_the_lists(tmp_path: Path) -> None:
    """DEC-CLI-3: the first echo turn (every built-in tool and the Agent
    tool offered, none run) loads only what the two lists name."""
    loaded = _loaded_at(tmp_path, RESULT_MARK)
    at_initialize = _allowed(ALLOWED_FILE)
    first_turn = _allowed(FIRST_RESULT_FILE)
    assert "agentx.turns.model_call" in loaded  # the control case: a real turn
    assert not first_turn & at_initialize, "a module is on both lists"
    extra = sorted(loaded - at_initialize - first_turn)
    assert extra == [], f"loaded before the first result, not on a list: {extra}"
    stale = _stale(loaded, first_turn)
    assert stale == [], f"in {FIRST_RESULT_FILE.name}, not loaded by the first turn: {stale}"


#: Runs the entry point; once the first ``result`` is written, no module of
#: agentx can be imported any more, as when the package's files are gone (an
#: upgrade in place while the session runs).
GONE_AFTER_RESULT = """
import sys
import agentx.cli as cli
write_all = cli._write_all
gone = []

class Gone:
    def find_spec(self, name, path=None, target=None):
        if gone and name.split(".")[0] == "agentx":
            raise ModuleNotFoundError(f"No module named {name!r} (the files are gone)")
        return None

sys.meta_path.insert(0, Gone())

def observed(fd, data):
    write_all(fd, data)
    if b'{"type":"result"' in data:
        gone.append(True)

cli._write_all = observed
sys.exit(cli.main(sys.argv[1:]))
"""


def test_the_shutdown_imports_nothing_when_the_session_ends(tmp_path: Path) -> None:
    """DECISIONS section 8: the ordered shutdown is loaded at start; an
    ending whose imports would fail (the files gone) still runs every step
    and exits 0 with its records written. stdin ends after the result, as
    an SDK ends it, so the shutdown starts only once nothing can be imported."""
    initialize, prompt = SESSION_INPUT.splitlines(keepends=True)
    with _program(GONE_AFTER_RESULT, DUPLEX, tmp_path) as (proc, stdin, stdout):
        stdin.write(initialize)
        stdin.flush()
        lines = []
        for line in stdout:
            lines.append(line)
            if INITIALIZE_MARK in line:
                stdin.write(prompt)
                stdin.flush()
            elif line.startswith(RESULT_MARK):
                stdin.close()
        err = _finished(proc)
    assert proc.returncode == 0, err
    assert b"Traceback" not in err
    records = [json.loads(line) for line in lines]
    assert [r["result"] for r in records if r["type"] == "result"] == ["hello"]


MSGSPEC_FIRST = """
import sys
from agentx.cli import _import_msgspec
_import_msgspec()
assert "msgspec" in sys.modules
assert "typing_extensions" not in sys.modules  # not loaded for msgspec
import typing_extensions  # a later user (httpx, mcp) still gets it
from typing import NotRequired, TypedDict
import msgspec

class Part(TypedDict):
    text: str
    note: NotRequired[str]

class Record(msgspec.Struct, frozen=True):
    parts: list[Part]

got = msgspec.json.decode(b'{"parts": [{"text": "a"}]}', type=Record)
assert got.parts == [{"text": "a"}]
try:
    msgspec.json.decode(b'{"parts": [{"note": "n"}]}', type=Record)
except msgspec.ValidationError:
    print("ok")
"""


def test_msgspec_loads_without_typing_extensions_and_still_types() -> None:
    """DEC-CLI-3: msgspec's first import leaves typing_extensions out (it
    falls back to typing), and typed decoding still honours ``NotRequired``."""
    done = subprocess.run(
        [sys.executable, "-c", MSGSPEC_FIRST], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == b"ok"


COLLECTOR = """
import gc, sys
from agentx.cli import main
seen = []
import agentx.actors.host as host
run = host.Host.run

def observed(self, *, on_started=None):
    def started():
        seen.append(gc.isenabled())
        on_started()
        seen.append((gc.isenabled(), gc.get_freeze_count() > 1000))
    return run(self, on_started=started)

host.Host.run = observed
status = main(sys.argv[1:])
sys.stderr.write("\\n" + repr((status, seen, gc.isenabled())) + "\\n")
"""


def test_the_collector_is_off_during_the_start_and_back_on_after(tmp_path: Path) -> None:
    """DEC-CLI-3: the cyclic collector does not run while the session starts;
    once the host has started it is on again, the start's objects frozen."""
    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR, *DUPLEX],
        input=SESSION_INPUT,
        env={**os.environ, "AGENTX_HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    status, seen, after = ast.literal_eval(done.stderr.decode().strip().splitlines()[-1])
    assert status == 0
    assert seen == [False, (True, True)]
    assert after is True


@pytest.mark.parametrize(
    ("settings", "line", "loaded"),
    [
        pytest.param(
            {"sandbox": {"enabled": "yes"}},
            "sandbox.enabled must be a boolean",
            "agentx.messages.sandbox_policy",
            id="sandbox",
        ),
        pytest.param(
            {"mcpServers": {"x": {"command": 5}}},
            "MCP server x: command must be a non-empty string",
            "agentx.messages.mcp.config",
            id="mcp",
        ),
    ],
)
def test_a_settings_block_still_loads_its_grammar_and_is_refused_at_start(
    tmp_path: Path, settings: dict[str, Any], line: str, loaded: str
) -> None:
    """DEC-CLI-3 loads the sandbox and MCP grammars only for a source that
    has the block (DEC-SET-1, DEC-SET-2, DEC-PERM-BASH-5); a bad block is
    still exit 2 with one line before the protocol starts."""
    (tmp_path / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *DUPLEX],
        env=dict(os.environ) | {"AGENTX_HOME": str(tmp_path)},
        input=SESSION_INPUT,
        capture_output=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    err, modules = done.stderr.decode("utf-8").rsplit("\n", 1)
    assert err.strip().endswith(line)
    assert loaded in ast.literal_eval(modules)
