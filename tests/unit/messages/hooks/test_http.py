"""Http hooks, sans-IO: URL check, header interpolation, secret values
(DECISIONS section 3, DEC-AUTH-3)."""

from __future__ import annotations

import pytest

from agentx.messages.hooks.config import HttpHook, select, settings_groups
from agentx.messages.hooks.http import check_url, header_literals, interpolate, resolved_headers

ENV = {"TOKEN": "t0k", "OTHER": "o", "EMPTY": ""}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Bearer $TOKEN", "Bearer t0k"),
        ("Bearer ${TOKEN}!", "Bearer t0k!"),
        ("$OTHER-${OTHER}", "-"),  # not allowed: empty
        ("$MISSING", ""),
        ("$$TOKEN", "$t0k"),
        ("plain", "plain"),
        ("${TOKEN", "${TOKEN"),
    ],
)
def test_interpolate_only_allowed_variables(value: str, expected: str) -> None:
    assert interpolate(value, ("TOKEN", "MISSING"), ENV) == expected


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("http://127.0.0.1:8080/hook", True),
        ("https://hooks.example.com/x?y=1", True),
        ("ftp://example.com/", False),
        ("file:///etc/passwd", False),
        ("http:///nohost", False),
        ("http://h/a b", False),
        ("http://h/\r\nX: y", False),
        ("", False),
        (7, False),
    ],
)
def test_check_url(url: object, ok: bool) -> None:
    assert (check_url(url) is None) is ok


def test_resolved_headers_leave_the_length_to_the_client() -> None:
    headers = (("Content-Length", "1"), ("transfer-encoding", "x"), ("X-A", "$TOKEN"))
    assert resolved_headers(headers, ("TOKEN",), ENV) == {"X-A": "t0k"}


def test_header_literals_are_the_secret_values_sent() -> None:
    hook = {
        "type": "http",
        "url": "http://h/",
        "headers": {
            "Authorization": "Bearer $TOKEN",
            "X-Api-Key": "written-out-key",
            "X-Not-Allowed": "$OTHER",
            "Content-Type": "application/json",
            "X-Empty": "$EMPTY",
        },
        "allowedEnvVars": ["TOKEN", "EMPTY"],
    }
    assert header_literals(hook, ENV) == {"t0k", "written-out-key"}


def test_an_http_hook_url_runs_once_and_is_named_without_its_secrets() -> None:
    hooks = {
        "PreToolUse": (
            {"hooks": ({"type": "http", "url": "http://u:p@h/x?k=v"},)},
            {"hooks": ({"type": "http", "url": "http://u:p@h/x?k=v", "timeout": 5},)},
        )
    }
    (spec,) = select(settings_groups(hooks), "PreToolUse", "Bash")
    assert isinstance(spec, HttpHook)
    assert spec.name == "http://h/x"
