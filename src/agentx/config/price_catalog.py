"""``"pricing": "catalog"`` (DEC-AUTH-2, WIRE-012): list prices from ``genai-prices``.

``genai-prices`` (the pydantic team's maintained catalog; its price data is
packaged with it, so nothing is fetched at run time) prices a request for an
exact provider id and model reference. The provider id is the profile's type
(``anthropic``, ``openai``, ``azure_openai`` -> ``azure``); the model is the
profile's ``model``. A model the catalog does not know, or a request whose
tokens it cannot price completely, costs None (JSON null): no guess, no
partial price. The library takes about 160 ms to import, so it is imported
on the first priced request, never at start-up.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Final

from agentx.diagnostics import logger

#: agentx provider type -> the catalog's provider id.
CATALOG_PROVIDERS: Final = {"anthropic": "anthropic", "openai": "openai", "azure_openai": "azure"}


class GenaiPricesCatalog:
    """A :class:`~agentx.messages.pricing.CatalogPrice` for one provider and model."""

    def __init__(self, provider_type: str, model: str) -> None:
        self._provider = CATALOG_PROVIDERS.get(provider_type)
        self._model = model
        self._lock = threading.Lock()
        self._unknown_logged = False

    def cost(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_creation_input_tokens: int,
        cache_read_input_tokens: int,
    ) -> float | None:
        if self._provider is None:
            return None
        import genai_prices  # noqa: PLC0415 - lazy: ~160 ms, only when catalog pricing is used

        usage = genai_prices.Usage(
            # The catalog's input_tokens is the whole prompt, cache tokens included.
            input_tokens=input_tokens + cache_creation_input_tokens + cache_read_input_tokens,
            cache_write_tokens=cache_creation_input_tokens,
            cache_read_tokens=cache_read_input_tokens,
            output_tokens=output_tokens,
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # an unpriceable usage key: no partial price
                price: Any = genai_prices.calc_price(usage, self._model, provider_id=self._provider)
        except (LookupError, ValueError, UserWarning):
            self._note_unknown()
            return None
        return float(price.total_price)

    def _note_unknown(self) -> None:
        with self._lock:
            if self._unknown_logged:
                return
            self._unknown_logged = True
        logger.warning(
            "the price catalog has no complete price for model {} of provider {}; cost is null",
            self._model,
            self._provider,
        )
