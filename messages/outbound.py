"""Builders for the ordinary outbound records (spec "Core output records",
"System and lifecycle events"; DECISIONS section 11 for field names).

Every ordinary session record carries ``session_id`` and ``uuid``; the caller
supplies both (ids are injected, never generated here). Records are frozen
(:class:`FrozenDict` with tuples) so no actor can change what the writer sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from agentx.messages.frozen import FrozenDict, FrozenJSON, freeze

SessionState = Literal["idle", "running", "requires_action"]

#: WIRE-004 / DEC-TURN-2 vocabulary.
SESSION_STATES: tuple[SessionState, ...] = ("idle", "running", "requires_action")

ResultSubtype = Literal[
    "success",
    "error_during_execution",
    "error_max_turns",
    "error_max_budget_usd",
    "error_max_structured_output_retries",
]


def session_state_changed(state: SessionState, *, session_id: str, uuid: str) -> FrozenDict:
    """``system/session_state_changed`` (DEC-TURN-2)."""
    return FrozenDict(
        type="system",
        subtype="session_state_changed",
        state=state,
        uuid=uuid,
        session_id=session_id,
    )


def status(value: Literal["compacting"] | None, *, session_id: str, uuid: str) -> FrozenDict:
    """``system/status``: ``compacting`` while a compaction runs, then null."""
    return FrozenDict(
        type="system", subtype="status", status=value, uuid=uuid, session_id=session_id
    )


def compact_boundary(metadata: Mapping[str, Any], *, session_id: str, uuid: str) -> FrozenDict:
    """``system/compact_boundary`` (WIRE-005): ``compact_metadata`` holds the
    trigger, ``pre_tokens`` and the optional ``preserved_segment`` ids."""
    return FrozenDict(
        type="system",
        subtype="compact_boundary",
        compact_metadata=freeze(metadata),
        uuid=uuid,
        session_id=session_id,
    )


def api_retry(
    *,
    attempt: int,
    max_retries: int,
    retry_delay_ms: int,
    error_status: int | None,
    error: str,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    """``system/api_retry``: a provider request failed and is retried after
    ``retry_delay_ms`` (Claude Code's SDKAPIRetryMessage; the standalone
    profile never writes it, spec "System and lifecycle events")."""
    return FrozenDict(
        type="system",
        subtype="api_retry",
        attempt=attempt,
        max_retries=max_retries,
        retry_delay_ms=retry_delay_ms,
        error_status=error_status,
        error=error,
        uuid=uuid,
        session_id=session_id,
    )


def model_fallback(
    *, from_model: str, to_model: str, reason: str, session_id: str, uuid: str
) -> FrozenDict:
    """``system/model_fallback``: the model was overloaded or unavailable after
    its retries, and the request is retried on ``--fallback-model``, which
    serves the rest of the session (DEC-CLI-5)."""
    return FrozenDict(
        type="system",
        subtype="model_fallback",
        from_model=from_model,
        to_model=to_model,
        reason=reason,
        uuid=uuid,
        session_id=session_id,
    )


def informational(content: str, *, level: str, session_id: str, uuid: str) -> FrozenDict:
    """``system/informational``: a line shown to the user, as Claude Code
    writes a hook's ``systemMessage`` (DECISIONS section 3; the TypeScript
    SDK's ``SDKInformationalMessage``); ``level`` is info, notice,
    suggestion or warning."""
    return FrozenDict(
        type="system",
        subtype="informational",
        content=content,
        level=level,
        uuid=uuid,
        session_id=session_id,
    )


def local_command_output(content: str, *, session_id: str, uuid: str) -> FrozenDict:
    """``system/local_command_output``: a slash command's answer (DEC-TURN-1)."""
    return FrozenDict(
        type="system",
        subtype="local_command_output",
        content=content,
        uuid=uuid,
        session_id=session_id,
    )


def assistant(
    message: Mapping[str, Any],
    *,
    parent_tool_use_id: str | None,
    session_id: str,
    uuid: str,
    error: str | None = None,
) -> FrozenDict:
    """``assistant``: an API assistant message (section 11), optional error category."""
    record: dict[str, Any] = {
        "type": "assistant",
        "message": freeze(message),
        "parent_tool_use_id": parent_tool_use_id,
        "uuid": uuid,
        "session_id": session_id,
    }
    if error is not None:
        record["error"] = error
    return FrozenDict(record)


def api_assistant_message(
    *,
    message_id: str,
    model: str,
    content: tuple[FrozenJSON, ...],
    stop_reason: str | None,
    usage: Mapping[str, int],
) -> FrozenDict:
    """The API message inside ``assistant`` (DEC-COMPAT-3: always ``model`` and list content)."""
    return FrozenDict(
        id=message_id,
        type="message",
        role="assistant",
        model=model,
        content=content,
        stop_reason=stop_reason,
        stop_sequence=None,
        usage=FrozenDict(usage),
    )


def user_echo(
    message: Mapping[str, Any],
    *,
    session_id: str,
    uuid: str,
    parent_tool_use_id: str | None = None,
    is_replay: bool = False,
    is_synthetic: bool = False,
    tool_use_result: FrozenJSON = None,
    priority: str | None = None,
    timestamp: str | None = None,
) -> FrozenDict:
    """``user``: a tool result or a replay acknowledgement (isReplay, WIRE-017/022)."""
    record: dict[str, Any] = {
        "type": "user",
        "message": freeze(message),
        "parent_tool_use_id": parent_tool_use_id,
        "uuid": uuid,
        "session_id": session_id,
    }
    if is_replay:
        record["isReplay"] = True
    if is_synthetic:
        record["isSynthetic"] = True
    if tool_use_result is not None:
        record["tool_use_result"] = tool_use_result
    if priority is not None:
        record["priority"] = priority
    if timestamp is not None:
        record["timestamp"] = timestamp
    return FrozenDict(record)


def tool_result_block(tool_use_id: str, content: str, *, is_error: bool) -> FrozenDict:
    """A ``tool_result`` content block (section 11)."""
    return FrozenDict(
        type="tool_result", tool_use_id=tool_use_id, content=content, is_error=is_error
    )


def result(
    *,
    subtype: ResultSubtype,
    is_error: bool,
    duration_ms: int,
    duration_api_ms: int,
    num_turns: int,
    result_text: str | None,
    stop_reason: str | None,
    total_cost_usd: float | None,
    usage: Mapping[str, int],
    model_usage: Mapping[str, Mapping[str, Any]],
    permission_denials: tuple[FrozenJSON, ...],
    errors: tuple[str, ...],
    session_id: str,
    uuid: str,
    prompt_uuid: str | None = None,
    structured_output: FrozenDict | None = None,
) -> FrozenDict:
    """``result`` success or error (spec "Success result"/"Error result", WIRE-012).

    ``structured_output`` is the validated payload of a ``--json-schema``
    turn; only a success carries it (DEC-CLI-5).

    ``total_cost_usd`` and each ``costUSD`` are JSON null when pricing is
    unknown and a number only when known (a declared zero price gives 0).
    The error form carries ``errors``; success carries the ``result`` text.
    """
    record: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": num_turns,
    }
    if subtype == "success":
        record["result"] = result_text if result_text is not None else ""
        if structured_output is not None:
            record["structured_output"] = structured_output
    record["stop_reason"] = stop_reason
    record["total_cost_usd"] = total_cost_usd
    record["usage"] = FrozenDict(usage)
    record["modelUsage"] = freeze(model_usage)
    record["permission_denials"] = permission_denials
    if subtype != "success":
        record["errors"] = errors
    if prompt_uuid is not None:
        record["prompt_uuid"] = prompt_uuid
    record["uuid"] = uuid
    record["session_id"] = session_id
    return FrozenDict(record)


def stream_event(
    event: FrozenJSON, *, parent_tool_use_id: str | None, session_id: str, uuid: str
) -> FrozenDict:
    """``stream_event``: one raw model stream event (--include-partial-messages)."""
    return FrozenDict(
        type="stream_event",
        event=event,
        parent_tool_use_id=parent_tool_use_id,
        uuid=uuid,
        session_id=session_id,
    )


def control_response_success(request_id: str, payload: FrozenJSON = None) -> FrozenDict:
    """Correlated success; ``payload`` None means no operation payload (WIRE-010)."""
    response: dict[str, Any] = {"subtype": "success", "request_id": request_id}
    if payload is not None:
        response["response"] = payload
    return FrozenDict(type="control_response", response=FrozenDict(response))


def control_response_error(request_id: str, error: str) -> FrozenDict:
    """Correlated error response for an inbound control request."""
    return FrozenDict(
        type="control_response",
        response=FrozenDict(subtype="error", request_id=request_id, error=error),
    )


def unsupported_control(request_id: str, subtype: str) -> FrozenDict:
    """The generic correlated error for an uninstalled subtype (spec "Control operations")."""
    return control_response_error(request_id, f'unsupported control request "{subtype}"')


def rate_limit_event(
    status: str,
    *,
    session_id: str,
    uuid: str,
    resets_at: int | None = None,
    utilization: float | None = None,
) -> FrozenDict:
    """``rate_limit_event`` with allowed/warning/rejected state."""
    info: dict[str, Any] = {"status": status}
    if resets_at is not None:
        info["resetsAt"] = resets_at
    if utilization is not None:
        info["utilization"] = utilization
    return FrozenDict(
        type="rate_limit_event", rate_limit_info=FrozenDict(info), uuid=uuid, session_id=session_id
    )


def tool_use_summary(
    summary: str, preceding_tool_use_ids: tuple[str, ...], *, session_id: str, uuid: str
) -> FrozenDict:
    """``tool_use_summary`` after a batch of tool uses."""
    return FrozenDict(
        type="tool_use_summary",
        summary=summary,
        preceding_tool_use_ids=preceding_tool_use_ids,
        uuid=uuid,
        session_id=session_id,
    )


def tool_progress(
    *,
    tool_use_id: str,
    tool_name: str,
    parent_tool_use_id: str | None,
    elapsed_time_seconds: float,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    """``tool_progress`` for a tool running longer than a second."""
    return FrozenDict(
        type="tool_progress",
        tool_use_id=tool_use_id,
        tool_name=tool_name,
        parent_tool_use_id=parent_tool_use_id,
        elapsed_time_seconds=elapsed_time_seconds,
        uuid=uuid,
        session_id=session_id,
    )


def prompt_suggestion(suggestion: str, *, session_id: str, uuid: str) -> FrozenDict:
    """``prompt_suggestion``: the predicted next prompt (``--prompt-suggestions``)."""
    return FrozenDict(
        type="prompt_suggestion", suggestion=suggestion, uuid=uuid, session_id=session_id
    )


PostTurnStatus = Literal["blocked", "waiting", "completed", "review_ready", "failed"]


def post_turn_summary(
    *,
    summarizes_uuid: str,
    status_category: PostTurnStatus,
    status_detail: str,
    is_noteworthy: bool,
    title: str,
    description: str,
    recent_action: str,
    needs_action: str,
    artifact_urls: tuple[str, ...],
    session_id: str,
    uuid: str,
) -> FrozenDict:
    """``system/post_turn_summary`` (``--post-turn-summaries``; Claude Code's field names)."""
    return FrozenDict(
        type="system",
        subtype="post_turn_summary",
        summarizes_uuid=summarizes_uuid,
        status_category=status_category,
        status_detail=status_detail,
        is_noteworthy=is_noteworthy,
        title=title,
        description=description,
        recent_action=recent_action,
        needs_action=needs_action,
        artifact_urls=artifact_urls,
        uuid=uuid,
        session_id=session_id,
    )
