"""The sdk profile's ``initialize`` core and the profile choice (DEC-PROFILE-2)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.frozen import freeze
from agentx.messages.initialize import (
    REFUSED_STATUS,
    SDK_FIELDS,
    Accepted,
    FieldCheck,
    Refused,
    plan_initialize,
    refusal_line,
)
from agentx.messages.profiles import PROFILES, choose_profile


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict | type(freeze({}))) else "must be an object"


HANDLED: dict[str, FieldCheck] = {"agents": _object}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param({}, Accepted(fields=freeze({})), id="fieldless"),
        pytest.param({"hooks": None}, Accepted(fields=freeze({})), id="hooks-null"),
        pytest.param({"systemPrompt": ""}, Accepted(fields=freeze({})), id="prompt-empty"),
        pytest.param({"systemPrompt": [""]}, Accepted(fields=freeze({})), id="prompt-ts-default"),
        pytest.param({"appendSystemPrompt": ""}, Accepted(fields=freeze({})), id="append-empty"),
        pytest.param(
            {"agents": {"a": {}}, "hooks": None},
            Accepted(fields=freeze({"agents": {"a": {}}})),
            id="handled",
        ),
        pytest.param(
            {"agents": []},
            Refused(names=("agents",), error="initialize refused: agents: must be an object"),
            id="handled-bad-value",
        ),
        pytest.param(
            {"hooks": {"PreToolUse": []}},
            Refused(
                names=("hooks",),
                error="initialize refused: hooks (SDK callback hooks) is not supported by agentx",
            ),
            id="known-unhandled",
        ),
        pytest.param(
            {"systemPrompt": ["", ""]},
            Refused(
                names=("systemPrompt",),
                error="initialize refused: systemPrompt (a custom system prompt) is not "
                "supported by agentx",
            ),
            id="prompt-one-past-nothing",
        ),
        pytest.param(
            {"hooks": None, "madeUp": 1},
            Refused(
                names=("madeUp",),
                error="initialize refused: 'madeUp' is not an initialize field agentx knows",
            ),
            id="unknown",
        ),
        pytest.param(
            {"agents": {}, "skills": ["s"], "jsonSchema": {}},
            Refused(
                names=("skills", "jsonSchema"),
                error="initialize refused: skills (a skill allowlist) is not supported by "
                "agentx; jsonSchema (structured output with a JSON schema) is not supported "
                "by agentx",
            ),
            id="every-refused-member-is-named",
        ),
    ],
)
def test_plan_initialize(payload: dict[str, Any], expected: Accepted | Refused) -> None:
    assert plan_initialize(freeze(payload), handled=HANDLED) == expected


@pytest.mark.parametrize("name", sorted(SDK_FIELDS))
def test_every_known_field_is_refused_without_a_handler(name: str) -> None:
    """Never a silent drop: each SDK field is applied or refused by name."""
    plan = plan_initialize(freeze({name: {"x": 1}}), handled={})
    assert isinstance(plan, Refused) and plan.names == (name,)
    assert name in plan.error


@pytest.mark.parametrize("name", sorted(SDK_FIELDS))
def test_every_known_field_is_applied_with_a_handler(name: str) -> None:
    plan = plan_initialize(freeze({name: {"x": 1}}), handled={name: lambda value: None})
    assert plan == Accepted(fields=freeze({name: {"x": 1}}))


def test_refusal_line_names_the_status() -> None:
    refused = Refused(names=("hooks",), error="initialize refused: hooks ...")
    assert REFUSED_STATUS == 2
    assert refusal_line(refused) == (
        "initialize refused: hooks ...; the session ends (status 2, DEC-PROFILE-2)"
    )


@pytest.mark.parametrize(
    ("flag", "setting", "entrypoint", "expected"),
    [
        (None, None, None, "standalone"),
        (None, None, "sdk-py", "sdk"),
        (None, None, "sdk-ts", "sdk"),
        (None, None, "sdk-", "sdk"),
        (None, None, "sdk", "standalone"),  # one short of the prefix
        (None, None, "cli", "standalone"),
        (None, None, "SDK-py", "standalone"),
        (None, "extended", "sdk-py", "extended"),  # the setting wins over the environment
        ("standalone", "sdk", "sdk-ts", "standalone"),  # the flag wins over both
        ("sdk", None, None, "sdk"),
        (None, "sdk", None, "sdk"),
    ],
)
def test_choose_profile(
    flag: str | None, setting: str | None, entrypoint: str | None, expected: str
) -> None:
    assert choose_profile(flag, setting, entrypoint) == expected


def test_choose_profile_rejects_a_name_that_is_no_profile() -> None:
    with pytest.raises(ValueError, match="'full' is not a control profile"):
        choose_profile("full", None, None)
    assert PROFILES == ("standalone", "extended", "sdk")
