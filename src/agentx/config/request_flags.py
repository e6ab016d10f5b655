"""How every request of the process is asked, from the command line (DEC-CLI-5).

``--thinking``, ``--max-thinking-tokens``, ``--thinking-display``,
``--task-budget`` and ``--betas`` become one
:class:`~agentx.providers.base.RequestOptions`, checked against the selected
provider's type at start, as Claude Code's SDKs pass them (the Python SDK
turns ``thinking={"type": "enabled", "budget_tokens": N}`` into
``--max-thinking-tokens N``, adaptive and disabled into ``--thinking``):

- ``--thinking`` wins over ``--max-thinking-tokens``; ``enabled`` without a
  budget takes :data:`DEFAULT_THINKING_BUDGET`; ``--max-thinking-tokens 0``
  alone means disabled, ``N`` alone means enabled with budget ``N``.
- ``anthropic``: sent as the Messages API's ``thinking`` (a budget is at
  least :data:`MIN_THINKING_BUDGET`, the API's own floor), the task budget
  as ``output_config.task_budget`` with its beta, ``--betas`` as
  ``anthropic-beta``.
- ``openai`` and ``azure_openai`` take reasoning effort (``--effort``) and
  nothing else: ``--thinking adaptive`` (the model decides, as it does
  anyway) is accepted; a thinking budget, ``disabled``, a display, a task
  budget or betas are refused with a sentence naming the flag, never dropped.
- ``scripted`` (offline) accepts them all; it sends nothing anywhere.

``--fallback-model`` names a second model of the selected provider (never a
provider switch), other than ``--model``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from agentx.config.models import validate_model
from agentx.config.registry import ProviderDescriptor, RegistryError
from agentx.providers.base import RequestOptions, Thinking, ThinkingMode

#: ``--thinking enabled`` without ``--max-thinking-tokens``.
DEFAULT_THINKING_BUDGET = 10_000
#: The Messages API's least ``budget_tokens``.
MIN_THINKING_BUDGET = 1024


def request_options(
    desc: ProviderDescriptor,
    *,
    thinking: str | None,
    max_thinking_tokens: int | None,
    thinking_display: str | None,
    task_budget: int | None,
    betas: Sequence[str],
) -> RequestOptions:
    """The options every request carries; :class:`RegistryError` for a flag
    the selected provider cannot take."""
    chosen = _thinking(thinking, max_thinking_tokens, thinking_display)
    if desc.type in ("openai", "azure_openai"):
        _only_effort(desc, chosen, thinking_display, task_budget, betas)
        return RequestOptions()
    if (
        desc.type == "anthropic"
        and chosen is not None
        and chosen.budget_tokens is not None
        and chosen.budget_tokens < MIN_THINKING_BUDGET
    ):
        raise RegistryError(
            f"--max-thinking-tokens must be at least {MIN_THINKING_BUDGET} "
            "for an Anthropic provider (or 0 to disable thinking)"
        )
    return RequestOptions(thinking=chosen, betas=tuple(betas), task_budget=task_budget)


def fallback_model(
    desc: ProviderDescriptor, requested: str | None, environ: Mapping[str, str]
) -> str | None:
    """``--fallback-model``: a model the selected provider serves, not its own."""
    if requested is None:
        return None
    try:
        model = validate_model(desc, requested, environ)
    except RegistryError:
        raise RegistryError(
            "--fallback-model: the selected provider does not serve the requested model "
            "(a fallback never switches provider)"
        ) from None
    if model == desc.model:
        raise RegistryError("--fallback-model must differ from the model the session runs")
    return model


def _thinking(mode: str | None, budget: int | None, display: str | None) -> Thinking | None:
    shown: Literal["summarized", "omitted"] | None = None
    if display is not None:
        shown = "summarized" if display == "summarized" else "omitted"
    chosen: ThinkingMode
    if mode == "disabled" or (mode is None and budget == 0):
        return Thinking(mode="disabled")
    if mode == "adaptive":
        chosen = "adaptive"
    elif mode == "enabled" or budget is not None:
        chosen = "enabled"
        budget = budget or DEFAULT_THINKING_BUDGET
    else:
        if display is not None:
            raise RegistryError("--thinking-display needs --thinking or --max-thinking-tokens")
        return None
    return Thinking(
        mode=chosen, budget_tokens=budget if chosen == "enabled" else None, display=shown
    )


def _only_effort(
    desc: ProviderDescriptor,
    chosen: Thinking | None,
    display: str | None,
    task_budget: int | None,
    betas: Sequence[str],
) -> None:
    refused = (
        ("--thinking", chosen is not None and chosen.mode != "adaptive"),
        ("--thinking-display", display is not None),
        ("--task-budget", task_budget is not None),
        ("--betas", bool(betas)),
    )
    for flag, given in refused:
        if given:
            raise RegistryError(
                f"{flag}: the selected provider (type {desc.type}) takes reasoning effort "
                "(--effort), not a thinking budget, display, task budget or beta headers"
            )
