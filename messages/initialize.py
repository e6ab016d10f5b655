"""The ``sdk`` profile's ``initialize`` (DEC-PROFILE-2, DEC-COMPAT-1, DEC-COMPAT-4).

Sans-IO. :data:`SDK_FIELDS` is the one catalog of the members the pinned
Agent SDKs put in ``initialize`` (Python ``claude-agent-sdk`` 0.2.189,
TypeScript ``@anthropic-ai/claude-agent-sdk`` 0.3.334), each with what it
asks for. :func:`plan_initialize` decides one request against the handlers
the host installed (``handled``: field name -> a pure check of the value):
every member is either handed to its handler or refused, and a refusal
names every refused member (never a silent drop). The members that spell
"nothing" (:func:`means_nothing`) are dropped first, as in the standalone
profile.

A refused ``initialize`` ends the session in the ``sdk`` profile (the
TypeScript SDK's ``query()`` goes on after a refused ``initialize``, so the
session must never run a turn without what it was sent): the shell writes
the correlated error, then :data:`REFUSED_STATUS` ends the session with
:func:`refusal_line` on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from msgspec import Struct

from agentx.messages.frozen import FrozenDict

#: DEC-PROFILE-2: the exit status of a session whose ``initialize`` was
#: refused (the usage status: the client asked for something agentx does not do).
REFUSED_STATUS: Final = 2

#: A handler's pure check of a member's value: None when it can be applied,
#: else a sentence saying what is wrong with it.
FieldCheck = Callable[[Any], str | None]

#: DEC-PROFILE-2: every ``initialize`` member the pinned SDKs send, with what it
#: asks for (the refusal sentence names it). A member not listed here is
#: refused as unknown; a listed one is refused until a handler is installed.
SDK_FIELDS: Final[Mapping[str, str]] = FrozenDict(
    {
        # Both SDKs.
        "hooks": "SDK callback hooks",
        "agents": "subagent definitions",
        "excludeDynamicSections": "a system prompt without the per-session sections",
        "systemPromptSnapshot": "a system prompt snapshot",
        "skills": "a skill allowlist",
        "forwardSubagentText": "forwarding subagent text",
        # The TypeScript SDK.
        "sdkMcpServers": "in-process SDK MCP servers",
        "sdkMcpServerConfigs": "settings of in-process SDK MCP servers",
        "sdkMcpServerManifests": "cached handshakes of in-process SDK MCP servers",
        "sdkMcpServerManifestsOrigin": "the origin of SDK MCP server manifests",
        "mcpServers": "MCP servers",
        "jsonSchema": "structured output with a JSON schema",
        "systemPrompt": "a custom system prompt",
        "appendSystemPrompt": "text appended to the system prompt",
        "planModeInstructions": "custom plan mode instructions",
        "appendSubagentSystemPrompt": "text appended to subagent system prompts",
        "toolAliases": "tool aliases",
        "codeRunningMcpTools": "MCP tools that run code",
        "title": "a session title",
        "webSearchIsolationExemptMcpServers": "web search isolation exemptions",
        "promptSuggestions": "prompt suggestions",
        "agentProgressSummaries": "agent progress summaries",
        "supportedDialogKinds": "client dialog kinds",
        "perTaskStopAffordance": "a per-task stop affordance",
        "rapidFollowupPreempt": "rapid follow-up preemption",
        "forwardNestedSubagentToolCalls": "forwarding nested subagent tool calls",
        "offersBypassSwitchBack": "a bypass-permissions switch back",
        "keepsBypassHeld": "holding bypass permissions",
        "workspaceTrust": "workspace trust",
        "plugins": "plugins",
        "managedSettings": "managed settings",
        "settings": "settings",
        "disallowedTools": "disallowed tools",
    }
)


def means_nothing(name: str, value: object) -> bool:
    """The clients' spellings of "nothing" in ``initialize``, dropped before
    any check: DEC-COMPAT-1's ``hooks: null``, and DEC-COMPAT-4's
    ``systemPrompt`` of ``""`` or ``[""]`` (the TypeScript Agent SDK's
    default) and an empty ``appendSystemPrompt`` (nothing to append)."""
    if name == "hooks":
        return value is None
    if name == "systemPrompt":
        return value == "" or (isinstance(value, tuple | list) and tuple(value) == ("",))
    return name == "appendSystemPrompt" and value == ""


def meaningful(payload: Mapping[str, Any]) -> FrozenDict:
    """``payload`` without the members that mean nothing."""
    return FrozenDict((k, v) for k, v in payload.items() if not means_nothing(k, v))


class Accepted(Struct, frozen=True, kw_only=True):
    """Every member has a handler whose check passed: apply ``fields`` (in
    the request's order) before answering, and before any turn runs."""

    fields: FrozenDict


class Refused(Struct, frozen=True, kw_only=True):
    """At least one member cannot be applied: nothing is applied; ``error``
    (the correlated error text) names every refused member."""

    names: tuple[str, ...]
    error: str


def plan_initialize(
    payload: Mapping[str, Any], *, handled: Mapping[str, FieldCheck]
) -> Accepted | Refused:
    """Decide one ``sdk``-profile ``initialize`` (DEC-PROFILE-2)."""
    fields = meaningful(payload)
    problems: list[tuple[str, str]] = []
    for name, value in fields.items():
        check = handled.get(name)
        if check is not None:
            wrong = check(value)
            if wrong is not None:
                problems.append((name, f"{name}: {wrong}"))
        elif name in SDK_FIELDS:
            problems.append((name, f"{name} ({SDK_FIELDS[name]}) is not supported by agentx"))
        else:
            problems.append((name, f"{name!r} is not an initialize field agentx knows"))
    if not problems:
        return Accepted(fields=fields)
    return Refused(
        names=tuple(name for name, _ in problems),
        error="initialize refused: " + "; ".join(text for _, text in problems),
    )


def refusal_line(refused: Refused) -> str:
    """The one stderr line of a session ended by a refused ``initialize``."""
    return f"{refused.error}; the session ends (status {REFUSED_STATUS}, DEC-PROFILE-2)"
