"""Prompt suggestions (``--prompt-suggestions``, DEC-TURN-5, WIRE-010).

After a successful result the provider is asked, through the session's own
:class:`~agentx.providers.base.ProviderClient`, for the user's likely next
prompt: one model call over the conversation so far plus a fixed short
instruction, no tools run (the tool specs are still declared, since the
history may hold tool uses). The first non-blank line of the answer, bounded,
becomes the ``prompt_suggestion`` record. A cancel (an interrupt or a new
prompt), a provider error or an empty answer yields no suggestion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from agentx.diagnostics import logger
from agentx.providers.base import (
    Cancelled,
    CancelToken,
    Message,
    ModelRequest,
    ProviderClient,
    ProviderError,
    TextBlock,
    TextDelta,
    ToolSpec,
)

#: The fixed instruction of the suggestion call.
INSTRUCTION: Final = (
    "Predict the next message the user is most likely to send in this conversation. "
    "Answer with that message alone, in the user's voice, on one line, without quotes "
    "or explanation."
)
#: Characters kept of a suggestion.
MAX_SUGGESTION_CHARS: Final = 300
#: Output tokens the suggestion call may use.
MAX_SUGGESTION_TOKENS: Final = 256


class PromptSuggester:
    """Builds the suggestion call from the live history (read when called)."""

    def __init__(
        self,
        *,
        provider: ProviderClient,
        model: str,
        system: Callable[[], str],
        tools: tuple[ToolSpec, ...],
        effort: str | None,
        history: Callable[[], tuple[Message, ...]],
    ) -> None:
        self._provider = provider
        self._model = model
        self._system = system
        self._tools = tools
        self._effort = effort
        self._history = history

    def __call__(self, cancel: CancelToken) -> str | None:
        request = ModelRequest(
            model=self._model,
            system=self._system(),
            messages=(
                *self._history(),
                Message(role="user", content=(TextBlock(text=INSTRUCTION),)),
            ),
            tools=self._tools,
            effort=self._effort,
            max_tokens=MAX_SUGGESTION_TOKENS,
            purpose="prompt_suggestion",
        )
        pieces: list[str] = []
        try:
            for item in self._provider.stream(request, cancel):
                if isinstance(item, TextDelta):
                    pieces.append(item.text)
                elif isinstance(item, ProviderError):
                    logger.warning("prompt suggestion skipped: provider {}", item.category)
                    return None
        except Cancelled:
            return None
        except Exception:  # a failed suggestion never affects the session
            logger.exception("prompt suggestion failed")
            return None
        if cancel.is_set():
            return None
        return first_line("".join(pieces))


def first_line(text: str) -> str | None:
    """The first non-blank line, stripped and bounded; None when there is none."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if not line:
        return None
    return line if len(line) <= MAX_SUGGESTION_CHARS else line[: MAX_SUGGESTION_CHARS - 1] + "…"


__all__ = ["INSTRUCTION", "MAX_SUGGESTION_CHARS", "PromptSuggester", "first_line"]
