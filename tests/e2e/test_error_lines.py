"""Errors that say what to fix, each on its exact line (DECISIONS section 8,
DEC-AUTH-1, DEC-AUTH-3, DEC-SET-1, DEC-SET-2, DEC-EOF-2).

Every line names the member or key and the cause, in the format's own
words, and never a configured value or an unknown member's name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.agentx_process import log_lines, run_once, write_auth, write_script

OPENAI = {"id": "gw", "type": "openai", "model": "gpt-5", "endpoint": "http://127.0.0.1:9/v1"}


# --- DEC-AUTH-1: an unknown member suggests the closest known one ---------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("apikey", "api_key", id="missing-underscore"),
        pytest.param("api-key", "api_key", id="dash"),
        pytest.param("API_KEY", "api_key", id="case"),
        pytest.param("endpont", "endpoint", id="typo"),
        pytest.param("timeout", "timeout_ms", id="prefix"),
    ],
)
def test_an_unknown_member_suggests_the_closest_known_member(
    home: Path, name: str, expected: str
) -> None:
    entry = {k: v for k, v in OPENAI.items() if k != expected} | {name: "sk-secret-value-1234"}
    write_auth(home, [entry])
    proc = run_once(["--list-providers"], b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    position = list(entry).index(name) + 1
    assert proc.stderr.decode() == (
        f"agentx: auth.json: providers[0][member {position}]: unknown member; "
        f'did you mean "{expected}"?\n'
    )
    # Neither the unknown name nor its value is echoed.
    assert f'"{name}"' not in proc.stderr.decode() and b"sk-secret" not in proc.stderr


def test_an_unknown_member_like_no_known_one_gets_no_suggestion(home: Path) -> None:
    write_auth(home, [OPENAI | {"sk-live-0123456789abcdef": "x"}])
    proc = run_once(["--list-providers"], b"", home=home)
    assert proc.returncode == 2
    assert proc.stderr.decode() == "agentx: auth.json: providers[0][member 5]: unknown member\n"


# --- DEC-AUTH-3: a credential inside public metadata names member and cause -----


def test_a_short_key_found_in_public_metadata_is_called_too_short(home: Path) -> None:
    write_auth(home, [OPENAI | {"api_key": "gpt"}])
    for args in (["--list-providers"], ["-p", "hi"]):
        proc = run_once(args, b"", home=home)
        assert proc.returncode == 2 and proc.stdout == b""
        assert log_lines(proc.stderr) == [
            'agentx: api_key of provider "gw": it is too short (3 characters) and occurs '
            "in the public provider metadata (id, model, description); set the real value, "
            "or rename the public one"
        ]


def test_a_key_contained_in_a_public_value_says_so(home: Path) -> None:
    key = "key-0123456789"
    write_auth(home, [OPENAI | {"model": f"model-{key}", "api_key": key}])
    proc = run_once(["-p", "hi"], b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    assert log_lines(proc.stderr) == [
        'agentx: api_key of provider "gw": it is contained in a public value of the '
        "provider metadata (id, model, description); set the real value, or rename the "
        "public one"
    ]


def test_a_header_value_is_named_as_a_header_without_its_name(home: Path) -> None:
    write_auth(home, [OPENAI | {"headers": {"X-Tenant-Token": "gw"}}])
    proc = run_once(["--list-providers"], b"", home=home)
    assert proc.returncode == 2
    line = proc.stderr.decode()
    assert line.startswith('agentx: a headers value of provider "gw": it is too short (2 ')
    assert "X-Tenant-Token" not in line


def test_a_key_at_the_short_limit_is_called_contained(home: Path) -> None:
    """Seven characters is too short; eight is a real key that happens to be inside."""
    for key, cause in (("gpt-5-m", "too short (7 characters)"), ("gpt-5-mi", "contained")):
        write_auth(home, [OPENAI | {"model": "gpt-5-mini", "api_key": key}])
        proc = run_once(["--list-providers"], b"", home=home)
        assert proc.returncode == 2
        assert cause in proc.stderr.decode()


# --- DEC-SET-2: unknown settings keys are one WARN line each -------------------


def test_unknown_settings_keys_are_one_warn_line_each_naming_key_and_source(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "work"
    (project / ".agentx").mkdir(parents=True)
    (project / ".agentx" / "settings.json").write_text('{"permisions": {}}')
    proc = run_once(
        ["-p", "hi", "--settings", '{"permissions": {"alow": ["Read"]}, "zzz": 1}'],
        b"",
        home=home,
        cwd=project,
    )
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in log_lines(proc.stderr) if "settings key" in line]
    assert warnings == [
        f"agentx: WARNING: {project / '.agentx' / 'settings.json'}: unknown settings key "
        '"permisions" is ignored (did you mean "permissions"?)',
        'agentx: WARNING: --settings: unknown settings key "zzz" is ignored',
        'agentx: WARNING: --settings: unknown settings key "permissions.alow" is ignored '
        '(did you mean "permissions.allow"?)',
    ]


def test_known_settings_keys_warn_nothing(home: Path) -> None:
    settings = (
        '{"permissions": {"allow": ["Read"], "deny": [], "ask": [], "defaultMode": "default"},'
        ' "env": {}, "hooks": {}, "mcpServers": {}, "sandbox": {}, "controlProfile": "standalone"}'
    )
    proc = run_once(["-p", "hi", "--settings", settings], b"", home=home)
    assert proc.returncode == 0
    assert not [line for line in log_lines(proc.stderr) if "settings key" in line]


# --- DEC-SET-1: --settings JSON errors give line and column -------------------


def test_inline_settings_json_error_gives_line_and_column(home: Path) -> None:
    proc = run_once(["-p", "hi", "--settings", '{"permissions": {"allow": [}}'], b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == (
        "agentx: --settings: invalid JSON at line 1, column 28 (expecting value)\n"
    )


def test_settings_file_json_error_gives_line_and_column(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{\n  "permissions": {}\n  "env": {}\n}\n')
    proc = run_once(["-p", "hi", "--settings", str(path)], b"", home=home)
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        f"agentx: {path}: invalid JSON at line 3, column 3 (expecting ',' delimiter)\n"
    )


# --- DEC-EOF-2: -p denies a tool for want of a channel in one line -------------


@pytest.mark.parametrize(
    ("tool", "tool_input", "mode"),
    [
        pytest.param("Bash", {"command": "touch made"}, "bypassPermissions", id="bash"),
        pytest.param("Write", {"file_path": "made", "content": "x"}, "acceptEdits", id="write"),
    ],
)
def test_print_mode_names_the_denied_call_and_the_flags_that_allow_it(
    home: Path, tmp_path: Path, tool: str, tool_input: dict[str, str], mode: str
) -> None:
    turns = [{"steps": [{"tool_use": {"name": tool, "input": tool_input}}]}, {"steps": []}]
    script = write_script(home / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work = tmp_path / "work"
    work.mkdir()
    proc = run_once(["-p", "go", "--output-format", "json"], b"", home=home, cwd=work)
    assert not (work / "made").exists()
    (denial,) = json.loads(proc.stdout)["permission_denials"]
    lines = [line for line in log_lines(proc.stderr) if "denied" in line]
    assert lines == [
        f"agentx: WARNING: {tool} call {denial['tool_use_id']} was denied: it needs "
        f'permission and no permission channel is open; allow it with --allowedTools "{tool}" '
        f"or --permission-mode {mode}, or a PermissionRequest hook, or answer permission "
        "prompts over --input-format stream-json --output-format stream-json"
    ]
    # The input is not repeated: it may hold anything.
    assert b"touch made" not in proc.stderr and b'"made"' not in proc.stderr


def test_print_mode_with_the_suggested_flag_runs_the_call(home: Path, tmp_path: Path) -> None:
    turns = [{"steps": [{"tool_use": {"name": "Bash", "input": {"command": "touch made"}}}]}]
    script = write_script(home / "script.json", [*turns, {"steps": []}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work = tmp_path / "work"
    work.mkdir()
    proc = run_once(["-p", "go", "--allowedTools", "Bash"], b"", home=home, cwd=work)
    assert proc.returncode == 0 and (work / "made").exists()
    assert not [line for line in log_lines(proc.stderr) if "denied" in line]


# --- DEC-AUTH-3: api_key_env takes the key from the environment ---------------


def _key_env_entry(home: Path, **extra: str) -> None:
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", **extra}])


def test_api_key_env_value_joins_the_credential_union(home: Path) -> None:
    """The scripted provider echoes the prompt: a prompt holding the key read
    from the environment is refused by the guards, which it is not without
    ``api_key_env``."""
    secret = "gw-secret-0123456789"
    env = {"MY_GATEWAY_KEY": secret}
    _key_env_entry(home)
    plain = run_once(["-p", f"say {secret}"], b"", home=home, env=env)
    assert plain.returncode == 0 and plain.stdout.decode().strip() == f"say {secret}"
    _key_env_entry(home, api_key_env="MY_GATEWAY_KEY")
    proc = run_once(["-p", f"say {secret}"], b"", home=home, env=env)
    assert proc.returncode != 0 and b"configured credential" in proc.stderr
    assert secret.encode() not in proc.stdout + proc.stderr
    ok = run_once(["-p", "say hello"], b"", home=home, env=env)
    assert ok.returncode == 0 and ok.stdout.decode().strip() == "say hello"


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_api_key_env_unset_fails_naming_member_and_variable(home: Path, value: str | None) -> None:
    _key_env_entry(home, api_key_env="MY_GATEWAY_KEY")
    env = {} if value is None else {"MY_GATEWAY_KEY": value}
    proc = run_once(["-p", "hi"], b"", home=home, env=env)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == (
        "agentx: auth.json: providers[0].api_key_env: "
        "the environment variable MY_GATEWAY_KEY is not set or empty\n"
    )


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        pytest.param(
            {"api_key": "k", "api_key_env": "V"},
            "api_key and api_key_env exclude each other; keep one",
            id="both",
        ),
        pytest.param({"api_key_env": "1BAD"}, "must be an environment variable name", id="name"),
    ],
)
def test_api_key_env_is_validated(home: Path, extra: dict[str, str], problem: str) -> None:
    _key_env_entry(home, **extra)
    proc = run_once(["--list-providers"], b"", home=home)
    assert proc.returncode == 2
    assert proc.stderr.decode() == f"agentx: auth.json: providers[0].api_key_env: {problem}\n"


# --- DEC-AUTH-2: the endpoint is the API's base URL -----------------------------


@pytest.mark.parametrize("endpoint", ["https://api.example.com/v1", "https://x.example/a/v1/"])
def test_an_anthropic_endpoint_ending_in_v1_is_a_start_up_error(home: Path, endpoint: str) -> None:
    write_auth(home, [{"id": "a", "type": "anthropic", "model": "m", "endpoint": endpoint}])
    proc = run_once(["--list-providers"], b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode() == (
        "agentx: auth.json: providers[0].endpoint: an anthropic endpoint is the base URL "
        "without /v1 (agentx adds /v1/messages); remove the trailing /v1\n"
    )


def test_an_anthropic_endpoint_without_v1_is_accepted(home: Path) -> None:
    endpoint = "https://api.example.com/v1beta"
    write_auth(home, [{"id": "a", "type": "anthropic", "model": "m", "endpoint": endpoint}])
    assert run_once(["--list-providers"], b"", home=home).returncode == 0


@pytest.mark.parametrize(
    ("endpoint", "said"),
    [
        ("http://127.0.0.1:9", "connection refused"),
        ("http://no-such-host.invalid", "name not resolved"),
    ],
    ids=["refused", "unresolved"],
)
def test_an_unreachable_provider_says_what_happened_and_names_it(
    home: Path, endpoint: str, said: str
) -> None:
    """A refused connection or a failed name lookup is not the server's error:
    the result says which, and which provider, never the endpoint (DEC-AUTH-3a)."""
    write_auth(
        home,
        [
            {
                "id": "far",
                "type": "anthropic",
                "model": "m",
                "api_key": "sk-unreachable-test-1",
                "endpoint": endpoint,
            }
        ],
    )
    done = run_once(["-p", "hi", "--output-format", "json"], b"", home=home)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["errors"][-1] == f'unknown: provider "far": {said}'
    assert endpoint.encode() not in done.stdout + done.stderr
