"""The hook event records (DEC-HOOK-4), as Claude Code writes them with
``--include-hook-events``: ``system/hook_started`` when a hook starts,
``system/hook_progress`` as its output arrives (bounded), and one
``system/hook_response`` when it ends, with outcome success, error or
cancelled."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct

ResponseOutcome = Literal["success", "error", "cancelled"]


class HookIdentity(Struct, frozen=True, kw_only=True):
    """Who a record is about: ``hook_id`` (unique in the session), the
    hook's name (its command or callback id) and its event."""

    hook_id: str
    hook_name: str
    hook_event: str

    def record(self, subtype: str) -> dict[str, Any]:
        return {
            "type": "system",
            "subtype": subtype,
            "hook_id": self.hook_id,
            "hook_name": self.hook_name,
            "hook_event": self.hook_event,
        }


def hook_started(who: HookIdentity, *, session_id: str, uuid: str) -> dict[str, Any]:
    return {**who.record("hook_started"), "uuid": uuid, "session_id": session_id}


def hook_progress(
    who: HookIdentity, *, stdout: str, stderr: str, session_id: str, uuid: str
) -> dict[str, Any]:
    return {
        **who.record("hook_progress"),
        "stdout": stdout,
        "stderr": stderr,
        "output": stdout + stderr,
        "uuid": uuid,
        "session_id": session_id,
    }


def hook_response(
    who: HookIdentity,
    *,
    outcome: ResponseOutcome,
    stdout: str,
    stderr: str,
    exit_code: int | None,
    session_id: str,
    uuid: str,
) -> dict[str, Any]:
    record = who.record("hook_response")
    record.update({"output": stdout + stderr, "stdout": stdout, "stderr": stderr})
    if exit_code is not None:
        record["exit_code"] = exit_code
    record.update({"outcome": outcome, "uuid": uuid, "session_id": session_id})
    return record
