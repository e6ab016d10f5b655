"""What a turn accumulates and the one ``result`` it ends with (DEC-TURN-1,
WIRE-012, DEC-COMPAT-3), the session's spend for ``/cost``, and the result of
a user record that never became a turn (DECISIONS section 1)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from msgspec import Struct, field

from agentx.messages import outbound, record_limit
from agentx.messages.accounting import Pricing, TokenUsage, TurnAccounting
from agentx.messages.frozen import FrozenDict
from agentx.messages.session_ledger import StoredTurn
from agentx.providers.base import Usage

if TYPE_CHECKING:
    from agentx.messages.structured_output import StructuredTurn

INTERRUPTED = "Interrupted by user"


class TurnState(Struct):
    """What one turn accumulates for its ``result`` record."""

    accounting: TurnAccounting
    started: float
    #: Wall-clock start (seconds since the epoch) for the turn's ledger entry.
    started_at: float = 0.0
    api_seconds: float = 0.0
    num_turns: int = 0
    denials: list[FrozenDict] = field(default_factory=list)
    final_text: str = ""
    stop_reason: str | None = None
    subtype: outbound.ResultSubtype = "success"
    errors: list[str] = field(default_factory=list)
    auto_compacted: bool = False
    #: A Stop hook made this turn go on once already (DECISIONS section 3).
    stop_hook_active: bool = False
    #: ``continue: false`` from a hook: the turn ends after this step (DEC-HOOK-3).
    hook_stop: str | None = None
    #: ``--json-schema``: this turn's retries and payload (a new count each turn).
    structured: StructuredTurn | None = None


class SessionSpend:
    """Session totals for ``/cost`` (every model call, summaries included);
    ``/clear`` starts them afresh."""

    __slots__ = ("_pricing", "accounting", "api_seconds")

    def __init__(self, pricing: Pricing | None) -> None:
        self._pricing = pricing
        self.accounting = TurnAccounting(pricing)
        self.api_seconds = 0.0

    def reset(self) -> None:
        self.accounting = TurnAccounting(self._pricing)
        self.api_seconds = 0.0

    def restore(self, turns: Iterable[StoredTurn]) -> None:
        """A resumed session's stored turns join the totals."""
        for turn in turns:
            self.api_seconds += turn.duration_api_ms / 1000
            for spend in turn.models:
                self.accounting.add_prior(spend.model, spend.usage, spend.cost_usd)


def token_usage(usage: Usage) -> TokenUsage:
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
        cache_read_input_tokens=usage.cache_read_input_tokens,
    )


def turn_result(
    st: TurnState, *, now: float, session_id: str, uuid: str, prompt_uuid: str | None
) -> FrozenDict:
    """The turn's one result, capped to one line (DEC-COMPAT-3)."""
    acct = st.accounting
    record = outbound.result(
        subtype=st.subtype,
        is_error=st.subtype != "success",
        duration_ms=int((now - st.started) * 1000),
        duration_api_ms=int(st.api_seconds * 1000),
        num_turns=st.num_turns,
        result_text=st.final_text,
        stop_reason=st.stop_reason,
        total_cost_usd=acct.total_cost_usd(),
        usage=acct.total.to_wire(),
        model_usage=acct.model_usage(),
        permission_denials=tuple(st.denials),
        errors=tuple(st.errors),
        session_id=session_id,
        uuid=uuid,
        prompt_uuid=prompt_uuid,
        structured_output=st.structured.payload if st.structured is not None else None,
    )
    return record_limit.cap_result(record)


def input_error_result(
    reason: str,
    *,
    pricing: Pricing | None,
    session_id: str,
    uuid: str,
    prompt_uuid: str | None = None,
) -> FrozenDict:
    """DECISIONS section 1: a semantically invalid user record's one result.

    No model call ran, so the cost is the profile's known zero when it
    declares pricing and null otherwise (WIRE-012).
    """
    return outbound.result(
        subtype="error_during_execution",
        is_error=True,
        duration_ms=0,
        duration_api_ms=0,
        num_turns=0,
        result_text=None,
        stop_reason=None,
        total_cost_usd=TurnAccounting(pricing).total_cost_usd(),
        usage=TokenUsage().to_wire(),
        model_usage={},
        permission_denials=(),
        errors=(f"input_error: {reason}",),
        session_id=session_id,
        uuid=uuid,
        prompt_uuid=prompt_uuid,
    )
