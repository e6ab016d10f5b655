"""Rate-limit windows read from response headers, and the ``rate_limit_event`` state."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from msgspec import Struct

from agentx.providers.base import RateLimit

if TYPE_CHECKING:
    import httpx


#: Utilization at or above which a rate-limit window reports ``warning``.
WARNING_UTILIZATION = 0.9


class LimitWindow(Struct, frozen=True, kw_only=True):
    """One rate-limit dimension read from response headers."""

    limit: float
    remaining: float
    resets_at: int | None


def rate_limit_state(windows: Iterable[LimitWindow], *, rejected: bool) -> RateLimit | None:
    """The ``rate_limit_event`` state for a response (spec "Core output records").

    ``rejected`` on a final 429; else ``warning`` when the most used window has
    less than 10% left, else ``allowed``. Utilization and reset time come from
    the most used window. None when there is no window and no rejection.
    """
    usable = [w for w in windows if w.limit > 0]
    if not usable and not rejected:
        return None
    worst = max(usable, key=lambda w: 1.0 - w.remaining / w.limit, default=None)
    utilization = None if worst is None else min(1.0, max(0.0, 1.0 - worst.remaining / worst.limit))
    if rejected:
        status: Literal["allowed", "warning", "rejected"] = "rejected"
    elif utilization is not None and utilization >= WARNING_UTILIZATION:
        status = "warning"
    else:
        status = "allowed"
    return RateLimit(
        status=status,
        resets_at=None if worst is None else worst.resets_at,
        utilization=utilization,
    )


def header_number(headers: httpx.Headers, name: str) -> float | None:
    """A numeric response header, or ``None`` when absent or not a number."""
    value = headers.get(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None
