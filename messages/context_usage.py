"""``get_context_usage`` data (spec "Control operations": categories, tokens,
colors, totals, maximum and display grid data).

Sans-IO: the caller supplies token estimates per category and the profile's
window; this core shapes the response and the 10x10 grid the client draws.
"""

from __future__ import annotations

from agentx.messages.frozen import FrozenDict

#: Token estimate used throughout agentx: about four characters a token.
CHARS_PER_TOKEN = 4
GRID_SIDE = 10

_COLORS = {
    "System prompt": "promptBorder",
    "System tools": "inactive",
    "Messages": "purple",
    "Free space": "promptBorder",
}


def estimate_tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def context_usage(
    *, system_tokens: int, tools_tokens: int, messages_tokens: int, max_tokens: int, model: str
) -> FrozenDict:
    """The response payload; ``Free space`` is what remains of ``max_tokens``."""
    used = system_tokens + tools_tokens + messages_tokens
    free = max(max_tokens - used, 0)
    amounts = (
        ("System prompt", system_tokens),
        ("System tools", tools_tokens),
        ("Messages", messages_tokens),
        ("Free space", free),
    )
    categories = tuple(
        FrozenDict(name=name, tokens=tokens, color=_COLORS[name]) for name, tokens in amounts
    )
    return FrozenDict(
        categories=categories,
        totalTokens=used,
        maxTokens=max_tokens,
        rawMaxTokens=max_tokens,
        percentage=round(100 * used / max_tokens, 2) if max_tokens else 0,
        gridRows=_grid(amounts, max_tokens),
        model=model,
    )


def _grid(
    amounts: tuple[tuple[str, int], ...], max_tokens: int
) -> tuple[tuple[FrozenDict, ...], ...]:
    """GRID_SIDE x GRID_SIDE squares, each owned by the category that fills it."""
    cells: list[FrozenDict] = []
    per_cell = max_tokens / (GRID_SIDE * GRID_SIDE) if max_tokens else 0
    for name, tokens in amounts:
        count = round(tokens / per_cell) if per_cell else 0
        cells.extend(
            FrozenDict(color=_COLORS[name], isFilled=name != "Free space", categoryName=name)
            for _ in range(count)
        )
    cells = cells[: GRID_SIDE * GRID_SIDE]
    while len(cells) < GRID_SIDE * GRID_SIDE:
        cells.append(
            FrozenDict(color=_COLORS["Free space"], isFilled=False, categoryName="Free space")
        )
    return tuple(tuple(cells[row * GRID_SIDE : (row + 1) * GRID_SIDE]) for row in range(GRID_SIDE))
