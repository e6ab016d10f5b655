"""The session's ledger: what a transcript records besides the conversation
(DEC-STORE-1, WIRE-012).

Each turn that ends appends one ``turn`` entry with its result beside its
messages, in the same durable batch: when it started and ended (UTC, ISO
8601), how long it took, its subtype, model calls, usage, per-model usage
and cost. The entry is bookkeeping, never prior context: :func:`is_ledger`
tells the resume path to skip it, and :func:`stored_turns` reads it back for
``/cost`` after ``--resume`` and for ``agentx sessions show|list``.

Sans-IO: times come in as arguments (seconds since the epoch), entries in
and values out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from msgspec import Struct

from agentx.messages.accounting import TokenUsage
from agentx.messages.permission_rules import DecisionSource

TURN_ENTRY = "turn"
PERMISSION_ENTRY = "permission"
#: DEC-TURN-3: one message of a subagent's conversation (a sidechain).
SIDECHAIN_ENTRY = "sidechain"
#: Entry types that record the session rather than its conversation.
LEDGER_ENTRIES = frozenset({TURN_ENTRY, PERMISSION_ENTRY, SIDECHAIN_ENTRY})
#: Who settled a tool use's permission: a permission rule, the mode, a hook,
#: the host's answer, an interrupt, nobody to ask (DEC-EOF-2), or agentx
#: itself (no such tool, an input too large, a failed check).
DECIDERS = frozenset({"rule", "mode", "hook", "host", "interrupt", "no_channel", "agentx"})


def policy_decider(source: DecisionSource) -> str:
    """The ledger's ``decided_by`` for a decision of the permission policy:
    ``rule`` when a rule decided, ``mode`` for every step without one (the
    mode, the boundary, the sandbox, the call's grant), from the decision's
    own source (DEC-STORE-1, DEC-PERM-MODE)."""
    return "rule" if source == "rule" else "mode"


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
_MODEL_USAGE_KEYS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheCreationInputTokens": "cache_creation_input_tokens",
    "cacheReadInputTokens": "cache_read_input_tokens",
}


class LedgerError(ValueError):
    """A ledger entry of a shape this version does not read (the message
    names the member, never a value)."""


def iso_utc(seconds: float) -> str:
    """``seconds`` since the epoch as ISO 8601 UTC with milliseconds."""
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_ledger(entry: Mapping[str, Any]) -> bool:
    return entry.get("type") in LEDGER_ENTRIES


def sidechain_entry(
    message: Mapping[str, Any], *, agent_id: str, agent_type: str, parent_tool_use_id: str
) -> dict[str, Any]:
    """DEC-STORE-1, DEC-TURN-3: one message entry of a subagent's conversation,
    stored beside its parent's (Claude Code's sidechain), in the batch of the
    parent's turn; never replayed into the parent's history."""
    return {
        "type": SIDECHAIN_ENTRY,
        "agent_id": agent_id,
        "agent_type": agent_type,
        "parent_tool_use_id": parent_tool_use_id,
        "message": dict(message),
    }


def turn_entry(result: Mapping[str, Any], *, started_at: float, ended_at: float) -> dict[str, Any]:
    """The ``turn`` entry for a turn that ended with ``result`` (its record)."""
    return {
        "type": TURN_ENTRY,
        "result_uuid": result["uuid"],
        "started_at": iso_utc(started_at),
        "ended_at": iso_utc(ended_at),
        "duration_ms": result["duration_ms"],
        "duration_api_ms": result["duration_api_ms"],
        "subtype": result["subtype"],
        "num_turns": result["num_turns"],
        "total_cost_usd": result["total_cost_usd"],
        "usage": {key: result["usage"][key] for key in _USAGE_KEYS},
        "modelUsage": {
            model: {
                **{wire: usage[wire] for wire in _MODEL_USAGE_KEYS},
                "costUSD": usage["costUSD"],
            }
            for model, usage in result["modelUsage"].items()
        },
        "permission_denials": len(result["permission_denials"]),
    }


def permission_entry(
    *, tool_name: str, tool_use_id: str, behavior: str, decided_by: str, reason: str
) -> dict[str, Any]:
    """A ``permission`` entry: one tool use's settled permission and who settled
    it; ``reason`` names the rule or mode that decided, when one did."""
    return {
        "type": PERMISSION_ENTRY,
        "tool_name": tool_name,
        "tool_use_id": tool_use_id,
        "behavior": behavior,
        "decided_by": decided_by if decided_by in DECIDERS else "agentx",
        "reason": reason,
    }


class StoredDecision(Struct, frozen=True, kw_only=True):
    """A ``permission`` entry read back."""

    tool_name: str
    tool_use_id: str
    behavior: str
    decided_by: str
    reason: str


def read_decision(entry: Mapping[str, Any]) -> StoredDecision:
    """One ``permission`` entry; :class:`LedgerError` names what is wrong."""
    values = {}
    for key in ("tool_name", "tool_use_id", "behavior", "decided_by", "reason"):
        value = entry.get(key)
        if not isinstance(value, str):
            raise LedgerError(f"permission entry member {key!r} is not a string")
        values[key] = value
    return StoredDecision(**values)


def stored_decisions(entries: Iterable[Mapping[str, Any]]) -> tuple[StoredDecision, ...]:
    """Every ``permission`` entry of a transcript, in order."""
    return tuple(read_decision(entry) for entry in entries if entry.get("type") == PERMISSION_ENTRY)


class ModelSpend(Struct, frozen=True, kw_only=True):
    """One model's share of a stored turn."""

    model: str
    usage: TokenUsage
    cost_usd: float | None


class StoredTurn(Struct, frozen=True, kw_only=True):
    """A ``turn`` entry read back."""

    started_at: str
    ended_at: str
    duration_ms: int
    duration_api_ms: int
    subtype: str
    num_turns: int
    total_cost_usd: float | None
    usage: TokenUsage
    models: tuple[ModelSpend, ...]
    permission_denials: int


def _int(entry: Mapping[str, Any], key: str) -> int:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LedgerError(f"turn entry member {key!r} is not a count")
    return value


def _str(entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise LedgerError(f"turn entry member {key!r} is not a string")
    return value


def _cost(entry: Mapping[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise LedgerError(f"turn entry member {key!r} is not a cost")
    return float(value)


def _usage(value: Any, keys: Mapping[str, str]) -> TokenUsage:
    if not isinstance(value, Mapping):
        raise LedgerError("turn entry usage is not an object")
    return TokenUsage(**{field: _int(value, wire) for wire, field in keys.items()})


def read_turn(entry: Mapping[str, Any]) -> StoredTurn:
    """One ``turn`` entry; :class:`LedgerError` names what is wrong."""
    models = entry.get("modelUsage")
    if not isinstance(models, Mapping):
        raise LedgerError("turn entry member 'modelUsage' is not an object")
    spends = []
    for model, usage in models.items():
        if not isinstance(usage, Mapping):
            raise LedgerError("turn entry modelUsage member is not an object")
        spends.append(
            ModelSpend(
                model=str(model),
                usage=_usage(usage, _MODEL_USAGE_KEYS),
                cost_usd=_cost(usage, "costUSD"),
            )
        )
    return StoredTurn(
        started_at=_str(entry, "started_at"),
        ended_at=_str(entry, "ended_at"),
        duration_ms=_int(entry, "duration_ms"),
        duration_api_ms=_int(entry, "duration_api_ms"),
        subtype=_str(entry, "subtype"),
        num_turns=_int(entry, "num_turns"),
        total_cost_usd=_cost(entry, "total_cost_usd"),
        usage=_usage(entry.get("usage"), {key: key for key in _USAGE_KEYS}),
        models=tuple(spends),
        permission_denials=_int(entry, "permission_denials"),
    )


def stored_turns(entries: Iterable[Mapping[str, Any]]) -> tuple[StoredTurn, ...]:
    """Every ``turn`` entry of a transcript, in order."""
    return tuple(read_turn(entry) for entry in entries if entry.get("type") == TURN_ENTRY)


def total_cost(turns: Iterable[StoredTurn]) -> float | None:
    """The sum of the turns' costs; None when any is unknown (WIRE-012)."""
    costs = [turn.total_cost_usd for turn in turns]
    if any(cost is None for cost in costs):
        return None
    return sum(cost for cost in costs if cost is not None)


def first_prompt(entries: Iterable[Mapping[str, Any]], words: int = 8) -> str | None:
    """The opening ``words`` words of the first user message's text, or None."""
    for entry in entries:
        if entry.get("type") != "message" or entry.get("role") != "user":
            continue
        for block in entry.get("content") or ():
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = str(block.get("text", ""))
                opening = text.split()
                if opening:
                    shown = " ".join(opening[:words])
                    return shown + (" ..." if len(opening) > words else "")
    return None


__all__ = [
    "DECIDERS",
    "LEDGER_ENTRIES",
    "PERMISSION_ENTRY",
    "SIDECHAIN_ENTRY",
    "TURN_ENTRY",
    "LedgerError",
    "ModelSpend",
    "StoredDecision",
    "StoredTurn",
    "first_prompt",
    "is_ledger",
    "iso_utc",
    "permission_entry",
    "read_decision",
    "read_turn",
    "sidechain_entry",
    "stored_decisions",
    "stored_turns",
    "total_cost",
    "turn_entry",
]
