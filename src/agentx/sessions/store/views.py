"""What ``agentx sessions list|show|export`` print (DEC-STORE-5, DEC-STORE-1).

Pure renderings of sessions read back from a store: a row per session for
``list`` (its header, last activity, turn count and the first prompt's
opening words), a session's header and turns for ``show`` (each turn's start,
duration, cost and result, from the ledger entries of
:mod:`agentx.messages.session_ledger`), and the JSONL document of
``export`` (a header line, then every entry as stored). Text or JSON; a
caller writes them through its output guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msgspec import Struct

from agentx.messages.encode import encode_record
from agentx.messages.frozen import thaw
from agentx.messages.resume_point import rewound
from agentx.messages.session_ledger import (
    StoredDecision,
    StoredTurn,
    first_prompt,
    stored_decisions,
    stored_turns,
    total_cost,
)
from agentx.sessions.store.header import SessionHeader
from agentx.sessions.store.jsonl import Transcript

LIST_COLUMNS = (
    "SESSION",
    "CREATED",
    "LAST_ACTIVITY",
    "TURNS",
    "PROVIDER",
    "MODEL",
    "CWD",
    "FIRST_PROMPT",
)


class SessionSummary(Struct, frozen=True, kw_only=True):
    """One session as ``list`` and ``show`` see it."""

    header: SessionHeader
    turns: tuple[StoredTurn, ...]
    first_prompt: str | None
    decisions: tuple[StoredDecision, ...] = ()

    @property
    def created_at(self) -> str:
        return self.header.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    @property
    def last_activity(self) -> str:
        """The end of its last turn, else its creation."""
        return self.turns[-1].ended_at if self.turns else self.created_at


def summarize(transcript: Transcript) -> SessionSummary:
    """A stored session's summary; a malformed ledger entry raises
    :class:`~agentx.messages.session_ledger.LedgerError`."""
    # DEC-CLI-5: the branch a resume would read (every recorded cut applied).
    entries = rewound(transcript.entries)
    return SessionSummary(
        header=transcript.header,
        turns=stored_turns(entries),
        first_prompt=first_prompt(entries),
        decisions=stored_decisions(entries),
    )


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _flat(text: str | None) -> str:
    """One cell: no tabs or line breaks inside a tab-separated row."""
    return " ".join((text or "").split())


def list_row(summary: SessionSummary) -> dict[str, Any]:
    h = summary.header
    return {
        "session_id": h.session_id,
        "created_at": summary.created_at,
        "last_activity": summary.last_activity,
        "turns": len(summary.turns),
        "provider": h.provider_id,
        "model": h.model,
        "cwd": h.cwd,
        "first_prompt": summary.first_prompt,
    }


def render_list(summaries: Sequence[SessionSummary], *, as_json: bool) -> bytes:
    """``sessions list``: a header row and a tab-separated row per session,
    or one JSON array."""
    rows = [list_row(summary) for summary in summaries]
    if as_json:
        return encode_record({"sessions": rows})
    lines = ["\t".join(LIST_COLUMNS)]
    lines.extend(
        "\t".join(_flat(str(v) if v is not None else "") for v in r.values()) for r in rows
    )
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def _turn_row(turn: StoredTurn) -> dict[str, Any]:
    return {
        "started_at": turn.started_at,
        "ended_at": turn.ended_at,
        "duration_ms": turn.duration_ms,
        "subtype": turn.subtype,
        "model_calls": turn.num_turns,
        "total_cost_usd": turn.total_cost_usd,
        "usage": turn.usage.to_wire(),
        "permission_denials": turn.permission_denials,
    }


def render_show(summary: SessionSummary, *, as_json: bool) -> bytes:
    """``sessions show``: the header, then each turn and the totals."""
    document = {**list_row(summary), "total_cost_usd": total_cost(summary.turns)}
    decisions = [
        {
            "tool_name": d.tool_name,
            "tool_use_id": d.tool_use_id,
            "behavior": d.behavior,
            "decided_by": d.decided_by,
            "reason": d.reason,
        }
        for d in summary.decisions
    ]
    if as_json:
        return encode_record(
            {
                **document,
                "turn_log": [_turn_row(t) for t in summary.turns],
                "permission_decisions": decisions,
            }
        )
    lines = [
        f"session {summary.header.session_id}",
        f"  created: {summary.created_at}",
        f"  last activity: {summary.last_activity}",
        f"  provider: {summary.header.provider_id} ({summary.header.model})",
        f"  cwd: {summary.header.cwd or ''}",
        f"  first prompt: {_flat(summary.first_prompt)}",
        f"  turns: {len(summary.turns)}, total cost {_cost(document['total_cost_usd'])}",
    ]
    for number, turn in enumerate(summary.turns, start=1):
        denied = f", {turn.permission_denials} denied" if turn.permission_denials else ""
        lines.append(
            f"  turn {number}: {turn.started_at} {turn.duration_ms} ms, {turn.subtype}, "
            f"{turn.num_turns} model call{'s' if turn.num_turns != 1 else ''}, "
            f"{_cost(turn.total_cost_usd)}{denied}"
        )
    for d in summary.decisions:
        why = f" ({_flat(d.reason)})" if d.reason else ""
        lines.append(f"  permission: {d.tool_name} {d.behavior} by {d.decided_by}{why}")
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def export_lines(transcript: Transcript) -> list[bytes]:
    """``sessions export``: the header as one line, then each entry as stored."""
    h = transcript.header
    header = {
        "type": "session_header",
        "session_id": h.session_id,
        "created_at": h.created_at.isoformat(),
        "provider": h.provider_id,
        "provider_type": h.provider_type,
        "model": h.model,
        "cwd": h.cwd,
    }
    return [encode_record(header), *(encode_record(thaw(e)) for e in transcript.entries)]


__all__ = [
    "LIST_COLUMNS",
    "SessionSummary",
    "export_lines",
    "list_row",
    "render_list",
    "render_show",
    "summarize",
]
