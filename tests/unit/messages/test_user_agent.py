"""The provider requests' User-Agent (DEC-CLI-5 client_app)."""

from __future__ import annotations

import pytest

from agentx.messages.user_agent import CLIENT_APP_ENV, MAX_CLIENT_APP, client_app, user_agent


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("my-app", "my-app"),
        ("my-app/1.2.3", "my-app/1.2.3"),
        ("@scope/pkg/0.1", "@scope/pkg/0.1"),
        ("a" * MAX_CLIENT_APP, "a" * MAX_CLIENT_APP),
        ("a" * (MAX_CLIENT_APP + 1), None),  # one past the limit
        ("my app", None),
        ("app (evil)", None),
        ("app\r\nX-Injected: 1", None),
        ("/etc/passwd", None),
        (".hidden", None),
        ("", None),
    ],
)
def test_client_app(value: str, expected: str | None) -> None:
    assert client_app({CLIENT_APP_ENV: value}) == expected


def test_user_agent() -> None:
    assert user_agent("0.1.0", {}) == "agentx/0.1.0"
    assert user_agent("0.1.0", {CLIENT_APP_ENV: "my-app/2"}) == "agentx/0.1.0 client-app/my-app/2"
    assert user_agent("0.1.0", {CLIENT_APP_ENV: "bad app"}) == "agentx/0.1.0"
