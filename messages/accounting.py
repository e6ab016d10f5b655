"""Usage and cost accounting for one turn (WIRE-012, DECISIONS section 11).

Cost is known only when the provider profile declares ``pricing``; then it is
``input_per_mtok * input_tokens / 1e6 + output_per_mtok * output_tokens / 1e6``
(a declared zero price gives numeric 0). Without pricing every cost is JSON
null, for the total and for each model's ``costUSD``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentx.messages.frozen import FrozenDict
from agentx.messages.pricing import Pricing

# Pricing is defined in agentx.messages.pricing (start-up, issue 4) and
# re-exported here for the turn accounting's users.
__all__ = ["Pricing", "TokenUsage", "TurnAccounting", "cost_usd"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def to_wire(self) -> dict[str, int]:
        """The result's aggregate ``usage`` object."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


def cost_usd(pricing: Pricing | None, usage: TokenUsage) -> float | None:
    """WIRE-012: None (JSON null) when pricing is unknown, else the computed cost."""
    if pricing is None:
        return None
    return (
        pricing.input_per_mtok * usage.input_tokens + pricing.output_per_mtok * usage.output_tokens
    ) / 1_000_000


class TurnAccounting:
    """Accumulates usage per model over the model calls of one turn."""

    def __init__(self, pricing: Pricing | None) -> None:
        self._pricing = pricing
        self._per_model: dict[str, TokenUsage] = {}

    def add(self, model: str, usage: TokenUsage) -> None:
        self._per_model[model] = self._per_model.get(model, TokenUsage()) + usage

    @property
    def total(self) -> TokenUsage:
        total = TokenUsage()
        for usage in self._per_model.values():
            total = total + usage
        return total

    def total_cost_usd(self) -> float | None:
        if self._pricing is None:
            return None
        costs = [cost_usd(self._pricing, usage) for usage in self._per_model.values()]
        return sum(c for c in costs if c is not None)

    def model_usage(self) -> FrozenDict:
        """The result's ``modelUsage`` map (per-model ``costUSD`` null when
        unknown), built frozen: a record value needs no deep copy."""
        return FrozenDict(
            (
                model,
                FrozenDict(
                    inputTokens=usage.input_tokens,
                    outputTokens=usage.output_tokens,
                    cacheReadInputTokens=usage.cache_read_input_tokens,
                    cacheCreationInputTokens=usage.cache_creation_input_tokens,
                    costUSD=cost_usd(self._pricing, usage),
                ),
            )
            for model, usage in self._per_model.items()
        )
