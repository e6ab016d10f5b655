"""Usage and cost accounting for one turn (WIRE-012, DECISIONS section 11).

Cost is known only when the provider profile declares ``pricing``; then it is
``input_per_mtok * input_tokens / 1e6 + output_per_mtok * output_tokens / 1e6``
(a declared zero price gives numeric 0). With ``"pricing": "catalog"`` each
request is priced by the catalog on its own tokens (tiered prices depend on
one request's input). Without pricing every cost is JSON null, for the total
and for each model's ``costUSD``.

WIRE-012: a request whose usage the provider did not report (no usage at
all), or that the catalog cannot price, makes its model's ``costUSD`` and
the turn's ``total_cost_usd`` null: never a partial sum that looks known.
"""

from __future__ import annotations

from msgspec import Struct

from agentx.messages.frozen import FrozenDict
from agentx.messages.pricing import Pricing

# Pricing is defined in agentx.messages.pricing (start-up, WIRE-026) and
# re-exported here for the turn accounting's users.
__all__ = ["Pricing", "TokenUsage", "TurnAccounting", "cost_usd"]


class TokenUsage(Struct, frozen=True, kw_only=True):
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
    if pricing.catalog is not None:
        return pricing.catalog.cost(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
        )
    return (
        pricing.input_per_mtok * usage.input_tokens + pricing.output_per_mtok * usage.output_tokens
    ) / 1_000_000


class TurnAccounting:
    """Accumulates usage per model over the model calls of one turn."""

    def __init__(self, pricing: Pricing | None) -> None:
        self._pricing = pricing
        self._per_model: dict[str, TokenUsage] = {}
        #: Per model, the sum of each request's own cost; None once one is unknown.
        self._costs: dict[str, float | None] = {}

    def add(self, model: str, usage: TokenUsage | None) -> None:
        """One request's usage; None when the provider reported none (WIRE-012)."""
        self._per_model[model] = self._per_model.get(model, TokenUsage()) + (usage or TokenUsage())
        prior = self._costs.get(model, 0.0)
        cost = None if usage is None else cost_usd(self._pricing, usage)
        self._costs[model] = None if prior is None or cost is None else prior + cost

    def add_prior(self, model: str, usage: TokenUsage, cost: float | None) -> None:
        """A stored turn's share for ``model`` (``/cost`` after ``--resume``):
        its usage, and the cost it was reported with (None: unknown, WIRE-012).
        Declared rates price the totals again, so the sum is the same as
        pricing each turn while the profile's prices stay as they were."""
        self._per_model[model] = self._per_model.get(model, TokenUsage()) + usage
        prior = self._costs.get(model, 0.0)
        self._costs[model] = None if prior is None or cost is None else prior + cost

    def absorb(self, other: TurnAccounting) -> None:
        """Another accounting's usage and costs join this one (a subagent's
        model calls join its parent turn's, WIRE-012: an unknown cost stays
        unknown)."""
        for model, usage in other._per_model.items():
            self.add_prior(model, usage, other._costs[model])

    def _model_cost(self, model: str) -> float | None:
        if self._costs[model] is None or self._pricing is None:
            return None
        if self._pricing.catalog is not None:
            return self._costs[model]
        # Declared rates are linear: priced on the totals, as the rule reads.
        return cost_usd(self._pricing, self._per_model[model])

    @property
    def total(self) -> TokenUsage:
        total = TokenUsage()
        for usage in self._per_model.values():
            total = total + usage
        return total

    def total_cost_usd(self) -> float | None:
        if self._pricing is None:
            return None
        costs = [self._model_cost(model) for model in self._per_model]
        if any(cost is None for cost in costs):
            return None
        return sum(cost for cost in costs if cost is not None)

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
                    costUSD=self._model_cost(model),
                ),
            )
            for model, usage in self._per_model.items()
        )
