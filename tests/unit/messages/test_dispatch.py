"""The inbound control dispatcher (spec "Control operations", DEC-PROFILE-1/2, DEC-COMPAT-1)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.dispatch import (
    EXTENDED_SUBTYPES,
    SET_MAX_THINKING_TOKENS_ERROR,
    SET_MODEL_ERROR,
    SET_PERMISSION_MODE_ERROR,
    STANDALONE_SUBTYPES,
    Drop,
    Perform,
    Reply,
    dispatch,
    installed_subtypes,
)
from agentx.messages.frozen import freeze
from agentx.messages.inbound_control import (
    ControlRequest,
    InvalidControlRequest,
    UncorrelatableControl,
)
from agentx.messages.profiles import Profile

PROFILES: tuple[Profile, ...] = ("standalone", "extended")

#: Spec "Control operations": every shared/reference row no profile here installs.
NEVER_INSTALLED = (
    "can_use_tool",
    "rewind_files",
    "seed_read_state",
    "hook_callback",
    # Routes to SDK-hosted MCP servers, which agentx does not have.
    "mcp_message",
    "reload_plugins",
    "elicitation",
    "end_session",
    "",
)


def request(subtype: str, payload: dict[str, Any] | None = None) -> ControlRequest:
    return ControlRequest(
        line=1, request_id="req-7", subtype=subtype, payload=freeze(payload or {})
    )


def error_reply(message: str) -> Reply:
    return Reply(
        record=freeze(
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": "req-7", "error": message},
            }
        )
    )


def unsupported(subtype: str) -> Reply:
    return error_reply(f'unsupported control request "{subtype}"')


def test_standalone_list_is_the_spec_list() -> None:
    assert installed_subtypes("standalone") == {
        "initialize",
        "interrupt",
        "get_context_usage",
        "mcp_status",
        "set_model",
        "set_permission_mode",
        "set_max_thinking_tokens",
    }
    assert installed_subtypes("standalone") == STANDALONE_SUBTYPES
    assert installed_subtypes("extended") == STANDALONE_SUBTYPES | {
        "cancel_async_message",
        "get_settings",
        "apply_flag_settings",
        "stop_task",
        "mcp_set_servers",
        "mcp_reconnect",
        "mcp_toggle",
    }


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("subtype", NEVER_INSTALLED)
def test_uninstalled_subtype_gets_the_generic_error(profile: Profile, subtype: str) -> None:
    assert dispatch(request(subtype, {"anything": 1}), profile=profile) == unsupported(subtype)


@pytest.mark.parametrize("subtype", sorted(EXTENDED_SUBTYPES))
def test_extended_members_are_unsupported_in_standalone(subtype: str) -> None:
    """DEC-PROFILE-1: standalone implements exactly the spec's list."""
    assert dispatch(request(subtype), profile="standalone") == unsupported(subtype)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("subtype", "payload", "expected"),
    [
        pytest.param("set_permission_mode", {}, SET_PERMISSION_MODE_ERROR, id="perm-mode-empty"),
        pytest.param(
            "set_permission_mode", {"mode": "plan"}, SET_PERMISSION_MODE_ERROR, id="perm-mode"
        ),
        pytest.param(
            "set_permission_mode",
            {"mode": 7, "extra": [1]},
            SET_PERMISSION_MODE_ERROR,
            id="perm-mode-any-payload",
        ),
        pytest.param("set_model", {}, SET_MODEL_ERROR, id="set-model-empty"),
        pytest.param("set_model", {"model": "gpt-x"}, SET_MODEL_ERROR, id="set-model-string"),
        pytest.param("set_model", {"model": None}, SET_MODEL_ERROR, id="set-model-null"),
        pytest.param(
            "set_max_thinking_tokens", {}, SET_MAX_THINKING_TOKENS_ERROR, id="thinking-empty"
        ),
        pytest.param(
            "set_max_thinking_tokens",
            {"max_thinking_tokens": None},
            SET_MAX_THINKING_TOKENS_ERROR,
            id="thinking-null",
        ),
        pytest.param(
            "set_max_thinking_tokens",
            {"max_thinking_tokens": 1024},
            SET_MAX_THINKING_TOKENS_ERROR,
            id="thinking-int",
        ),
    ],
)
def test_restart_errors(
    profile: Profile, subtype: str, payload: dict[str, Any], expected: str
) -> None:
    """Spec table rows: fixed correlated errors naming the restart path."""
    assert dispatch(request(subtype, payload), profile=profile) == error_reply(expected)


def test_restart_error_texts_are_the_spec_rows() -> None:
    assert SET_PERMISSION_MODE_ERROR == (
        "live permission-mode mutation is unavailable; start a new session with --permission-mode"
    )
    assert SET_MODEL_ERROR == "provider and model are process-fixed; restart with --provider <id>"
    assert SET_MAX_THINKING_TOKENS_ERROR == (
        "provider-declared reasoning effort is not a mutable thinking-token budget"
    )


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("subtype", "payload", "expected"),
    [
        pytest.param(
            "set_model", {"model": 3}, "set_model model must be a string or null", id="model-int"
        ),
        pytest.param(
            "set_model", {"foo": 1}, "'foo' is not a field of set_model", id="set-model-extra"
        ),
        pytest.param(
            "set_max_thinking_tokens",
            {"max_thinking_tokens": True},
            "max_thinking_tokens must be an integer or null",
            id="thinking-bool",
        ),
        pytest.param(
            "set_max_thinking_tokens",
            {"max_thinking_tokens": "10"},
            "max_thinking_tokens must be an integer or null",
            id="thinking-string",
        ),
        pytest.param(
            "set_max_thinking_tokens",
            {"max_thinking_tokens": 1, "x": 2},
            "set_max_thinking_tokens takes only max_thinking_tokens",
            id="thinking-extra",
        ),
        pytest.param(
            "interrupt", {"reason": "x"}, "reason is not a field of this request", id="interrupt"
        ),
        pytest.param(
            "mcp_status", {"b": 1, "a": 2}, "a is not a field of this request", id="mcp-status"
        ),
        pytest.param(
            "get_context_usage", {"z": None}, "z is not a field of this request", id="ctx-usage"
        ),
        pytest.param(
            "initialize",
            {"hooks": {}},
            "initialize takes no fields; 'hooks' is rejected",
            id="init-hooks-object",
        ),
        pytest.param(
            "initialize",
            {"hooks": False},
            "initialize takes no fields; 'hooks' is rejected",
            id="init-hooks-false",
        ),
        pytest.param(
            "initialize",
            {"hooks": None, "sdkMcpServers": ["a"]},
            "initialize takes no fields; 'sdkMcpServers' is rejected",
            id="init-null-hooks-plus-other",
        ),
        pytest.param(
            "initialize",
            {"systemPrompt": [""], "sdkMcpServers": ["a"]},
            "initialize takes no fields; 'sdkMcpServers' is rejected",
            id="init-empty-prompt-plus-other",
        ),
        pytest.param(
            "initialize",
            {"agents": None},
            "initialize takes no fields; 'agents' is rejected",
            id="init-null-agents",
        ),
    ],
)
def test_field_errors(
    profile: Profile, subtype: str, payload: dict[str, Any], expected: str
) -> None:
    assert dispatch(request(subtype, payload), profile=profile) == error_reply(expected)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("subtype", "payload", "fields"),
    [
        pytest.param("initialize", {}, {}, id="init-fieldless"),
        pytest.param("initialize", {"hooks": None}, {}, id="init-null-hooks-dropped"),
        pytest.param("initialize", {"systemPrompt": ""}, {}, id="init-empty-prompt"),
        pytest.param("initialize", {"systemPrompt": [""]}, {}, id="init-ts-sdk-prompt"),
        pytest.param("initialize", {"appendSystemPrompt": ""}, {}, id="init-empty-append"),
        pytest.param(
            "initialize",
            {"hooks": None, "systemPrompt": [""], "appendSystemPrompt": ""},
            {},
            id="init-all-nothing",
        ),
        pytest.param("interrupt", {}, {}, id="interrupt"),
        pytest.param("get_context_usage", {}, {}, id="ctx-usage"),
        pytest.param("mcp_status", {}, {}, id="mcp-status"),
    ],
)
def test_standalone_operations_are_performed(
    profile: Profile, subtype: str, payload: dict[str, Any], fields: dict[str, Any]
) -> None:
    """DEC-COMPAT-1: ``hooks: null`` is "no hooks", DEC-COMPAT-4: ``""``/``[""]``
    is "no system prompt"; neither reaches the shell."""
    assert dispatch(request(subtype, payload), profile=profile) == Perform(
        request_id="req-7", subtype=subtype, fields=freeze(fields)
    )


@pytest.mark.parametrize(
    ("subtype", "payload"),
    [
        pytest.param("cancel_async_message", {"message_uuid": "u-1"}, id="cancel-async"),
        pytest.param("stop_task", {"task_id": "t-1"}, id="stop-task"),
        pytest.param("apply_flag_settings", {"settings": {"model": "m"}}, id="apply-flags"),
        pytest.param("apply_flag_settings", {"settings": {}}, id="apply-empty-flags"),
        pytest.param("get_settings", {}, id="get-settings"),
    ],
)
def test_extended_operations_are_performed(subtype: str, payload: dict[str, Any]) -> None:
    assert dispatch(request(subtype, payload), profile="extended") == Perform(
        request_id="req-7", subtype=subtype, fields=freeze(payload)
    )


@pytest.mark.parametrize(
    ("subtype", "payload", "expected"),
    [
        pytest.param(
            "cancel_async_message",
            {},
            "cancel_async_message takes exactly a string message_uuid",
            id="cancel-missing",
        ),
        pytest.param(
            "cancel_async_message",
            {"message_uuid": 1},
            "cancel_async_message takes exactly a string message_uuid",
            id="cancel-not-string",
        ),
        pytest.param(
            "cancel_async_message",
            {"message_uuid": "u", "x": 1},
            "cancel_async_message takes exactly a string message_uuid",
            id="cancel-extra",
        ),
        pytest.param("stop_task", {}, "stop_task takes exactly a string task_id", id="stop-none"),
        pytest.param(
            "stop_task",
            {"task_id": None},
            "stop_task takes exactly a string task_id",
            id="stop-null",
        ),
        pytest.param(
            "apply_flag_settings",
            {"settings": ["a"]},
            "apply_flag_settings takes exactly a settings object",
            id="flags-array",
        ),
        pytest.param(
            "apply_flag_settings",
            {},
            "apply_flag_settings takes exactly a settings object",
            id="flags-missing",
        ),
        pytest.param(
            "get_settings",
            {"scope": "user"},
            "scope is not a field of this request",
            id="get-extra",
        ),
    ],
)
def test_extended_field_errors(subtype: str, payload: dict[str, Any], expected: str) -> None:
    assert dispatch(request(subtype, payload), profile="extended") == error_reply(expected)


@pytest.mark.parametrize("profile", PROFILES)
def test_an_invalid_request_gets_its_correlated_error(profile: Profile) -> None:
    """DECISIONS section 1: the request id is recoverable, the request is not."""
    record = InvalidControlRequest(line=3, request_id="req-7", error="request must be an object")
    assert dispatch(record, profile=profile) == error_reply("request must be an object")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_record_without_a_request_id_is_dropped_with_a_diagnostic(profile: Profile) -> None:
    record = UncorrelatableControl(line=9, reason="request_id must be a string")
    assert dispatch(record, profile=profile) == Drop(
        diagnostic="line 9: control record dropped: request_id must be a string"
    )


SYSTEM_PROMPT_ERROR = (
    "initialize cannot set systemPrompt; start agentx with --system-prompt or "
    "--append-system-prompt"
)
APPEND_PROMPT_ERROR = (
    "initialize cannot set appendSystemPrompt; start agentx with --system-prompt or "
    "--append-system-prompt"
)


def prompt_warning(members: str) -> str:
    return (
        f"initialize: the system prompt the client sent ({members}) was not applied; agentx "
        "takes it from its command line: pass --system-prompt or --append-system-prompt "
        "(the SDK's extraArgs)"
    )


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("payload", "error", "members"),
    [
        pytest.param({"systemPrompt": "x"}, SYSTEM_PROMPT_ERROR, "systemPrompt", id="string"),
        pytest.param({"systemPrompt": ["x"]}, SYSTEM_PROMPT_ERROR, "systemPrompt", id="list"),
        # One past the "no custom prompt" spellings: still a prompt the client sent.
        pytest.param({"systemPrompt": ["", ""]}, SYSTEM_PROMPT_ERROR, "systemPrompt", id="two"),
        pytest.param({"systemPrompt": [" "]}, SYSTEM_PROMPT_ERROR, "systemPrompt", id="blank"),
        pytest.param({"systemPrompt": []}, SYSTEM_PROMPT_ERROR, "systemPrompt", id="empty-list"),
        pytest.param({"systemPrompt": None}, SYSTEM_PROMPT_ERROR, "systemPrompt", id="null"),
        pytest.param(
            {"appendSystemPrompt": "be brief"},
            APPEND_PROMPT_ERROR,
            "appendSystemPrompt",
            id="append",
        ),
        pytest.param(
            {"systemPrompt": [""], "appendSystemPrompt": "be brief"},
            APPEND_PROMPT_ERROR,
            "appendSystemPrompt",
            id="default-prompt-plus-append",
        ),
        pytest.param(
            {"systemPrompt": "x", "appendSystemPrompt": "y"},
            SYSTEM_PROMPT_ERROR,
            "systemPrompt, appendSystemPrompt",
            id="both",
        ),
        pytest.param(
            {"sdkMcpServers": ["a"], "systemPrompt": "x"},
            SYSTEM_PROMPT_ERROR,
            "systemPrompt",
            id="prompt-plus-other",
        ),
    ],
)
def test_initialize_system_prompt_is_an_error_with_a_warning(
    profile: Profile, payload: dict[str, Any], error: str, members: str
) -> None:
    """DEC-COMPAT-4: a system prompt in ``initialize`` is the correlated error,
    and the shell writes one WARN saying it was not applied and what to use."""
    expected = error_reply(error)
    assert dispatch(request("initialize", payload), profile=profile) == Reply(
        record=expected.record, warning=prompt_warning(members)
    )


@pytest.mark.parametrize("profile", PROFILES)
def test_other_initialize_errors_carry_no_warning(profile: Profile) -> None:
    action = dispatch(request("initialize", {"agents": {}}), profile=profile)
    assert isinstance(action, Reply) and action.warning is None


# -- DEC-PROFILE-2: the sdk profile --------------------------------------------------


def test_sdk_profile_installs_the_extended_list() -> None:
    """A superset of extended: every extended row is installed, and the
    SDKs' ``rewind_files``."""
    assert installed_subtypes("sdk") == installed_subtypes("extended") | {"rewind_files"}


@pytest.mark.parametrize("subtype", [s for s in NEVER_INSTALLED if s != "rewind_files"])
def test_sdk_profile_uninstalled_subtype_gets_the_generic_error(subtype: str) -> None:
    assert dispatch(request(subtype, {"anything": 1}), profile="sdk") == unsupported(subtype)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param({}, id="fieldless"),
        pytest.param({"hooks": None}, id="hooks-null"),
        pytest.param({"systemPrompt": [""]}, id="ts-default-prompt"),
        pytest.param({"hooks": {"PreToolUse": []}}, id="hooks"),
        pytest.param({"systemPrompt": "x", "agents": {}}, id="prompt-and-agents"),
        pytest.param({"madeUp": 1}, id="unknown"),
    ],
)
def test_sdk_initialize_is_performed_with_its_meaningful_fields(payload: dict[str, Any]) -> None:
    """The fields are planned against the host's handlers (never answered here);
    the spellings of "nothing" are already dropped."""
    expected = {k: v for k, v in payload.items() if k not in ("hooks", "systemPrompt")}
    expected |= {k: v for k, v in payload.items() if k == "hooks" and v is not None}
    expected |= {k: v for k, v in payload.items() if k == "systemPrompt" and v != [""]}
    assert dispatch(request("initialize", payload), profile="sdk") == Perform(
        request_id="req-7", subtype="initialize", fields=freeze(expected)
    )


@pytest.mark.parametrize(
    ("subtype", "payload"),
    [
        ("set_permission_mode", {"mode": "acceptEdits"}),
        ("set_permission_mode", {"mode": "plan"}),
        ("set_model", {"model": "m"}),
        ("set_model", {"model": None}),
        ("set_model", {}),
    ],
)
def test_sdk_live_controls_are_performed(subtype: str, payload: dict[str, Any]) -> None:
    """DEC-PROFILE-2: live in the sdk profile, never the restart errors."""
    assert dispatch(request(subtype, payload), profile="sdk") == Perform(
        request_id="req-7", subtype=subtype, fields=freeze(payload)
    )


@pytest.mark.parametrize(
    ("subtype", "payload", "expected"),
    [
        (
            "set_permission_mode",
            {},
            "set_permission_mode takes exactly a mode, one of default, acceptEdits, plan, "
            "bypassPermissions, dontAsk, auto",
        ),
        (
            "set_permission_mode",
            {"mode": "yolo"},
            "set_permission_mode takes exactly a mode, one of default, acceptEdits, plan, "
            "bypassPermissions, dontAsk, auto",
        ),
        (
            "set_permission_mode",
            {"mode": "plan", "extra": 1},
            "set_permission_mode takes exactly a mode, one of default, acceptEdits, plan, "
            "bypassPermissions, dontAsk, auto",
        ),
        ("set_model", {"model": 7}, "set_model model must be a string or null"),
        ("set_model", {"provider": "p"}, "'provider' is not a field of set_model"),
    ],
)
def test_sdk_live_control_field_errors(
    subtype: str, payload: dict[str, Any], expected: str
) -> None:
    assert dispatch(request(subtype, payload), profile="sdk") == error_reply(expected)


def test_sdk_keeps_set_max_thinking_tokens_restart_error() -> None:
    assert dispatch(
        request("set_max_thinking_tokens", {"max_thinking_tokens": 5}), profile="sdk"
    ) == error_reply(SET_MAX_THINKING_TOKENS_ERROR)


@pytest.mark.parametrize(
    "payload",
    [
        {"user_message_id": "u-1"},
        {"user_message_id": "u-1", "dry_run": True},
        {"user_message_id": "u-1", "dry_run": False},
        {"user_message_id": "u-1", "dry_run": None},
    ],
)
def test_sdk_profile_performs_rewind_files(payload: dict[str, Any]) -> None:
    """DEC-PROFILE-2: as the Python SDK (no dry_run) and the TS SDK send it."""
    assert dispatch(request("rewind_files", payload), profile="sdk") == Perform(
        request_id="req-7", subtype="rewind_files", fields=freeze(payload)
    )


REWIND_SHAPE = "rewind_files takes a string user_message_id and an optional boolean dry_run"


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"user_message_id": 5},
        {"user_message_id": "u", "dry_run": "yes"},
        {"user_message_id": "u", "extra": 1},
    ],
)
def test_sdk_profile_rewind_files_checks_its_fields(payload: dict[str, Any]) -> None:
    assert dispatch(request("rewind_files", payload), profile="sdk") == error_reply(REWIND_SHAPE)
