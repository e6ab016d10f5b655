"""No child inherits a credential agentx holds (DEC-AUTH-3, DEC-HOOK-2)."""

from __future__ import annotations

import pytest

from agentx.tools.child_env import CREDENTIAL_VARIABLES, child_environment


@pytest.mark.parametrize("name", sorted(CREDENTIAL_VARIABLES))
def test_credential_variables_are_dropped_by_name(name: str) -> None:
    assert child_environment({name: "x", "PATH": "/bin"}) == {"PATH": "/bin"}


def test_a_value_holding_a_secret_is_dropped_whatever_its_name() -> None:
    env = {"MY_KEY": "Bearer sk-123", "EXACT": "sk-123", "PATH": "/bin", "OTHER": "sk-12"}
    assert child_environment(env, {"sk-123", ""}) == {"PATH": "/bin", "OTHER": "sk-12"}


def test_nothing_else_is_dropped() -> None:
    env = {"PATH": "/bin", "HOME": "/h", "ANTHROPIC_BASE_URL": "https://api.anthropic.com"}
    assert child_environment(env, {"sk-1"}) == env
