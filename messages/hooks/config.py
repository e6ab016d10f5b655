"""Hook definitions and matching (DEC-HOOK-1, DEC-HOOK-3).

Two transports define hooks. Settings (any source of DEC-SET-1) give command
hooks: ``{"<Event>": [{"matcher": M, "hooks": [{"type": "command",
"command": C, "timeout": S, "async": B}]}]}``. The ``initialize`` request of the ``sdk``
control profile (DEC-PROFILE-2) gives callback hooks: ``{"<Event>":
[{"matcher": M, "hookCallbackIds": [ID, ...], "timeout": S, "onFailure":
"continue"|"block"}]}``, each answered by the client through a
``hook_callback`` control request.

A matcher is compared with the field :data:`~agentx.messages.hooks.events.MATCHED_FIELD`
names, as Claude Code compares it: absent, empty or ``*`` matches every
value; a matcher of letters, digits, ``_`` and ``|`` only is a list of exact
names (``Edit|Write``); anything else is a regular expression searched in the
value (``^Notebook``, ``mcp__memory__.*``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from msgspec import Struct

from agentx.messages.frozen import FrozenDict
from agentx.messages.hooks.events import HOOK_EVENTS, MATCHED_FIELD

#: DEC-HOOK-1: a hook's deadline when its definition names none.
DEFAULT_TIMEOUT_S: Final = 60.0
#: A deadline longer than this is refused (a day; nothing waits without one).
MAX_TIMEOUT_S: Final = 86_400.0
_NAMES: Final = re.compile(r"[A-Za-z0-9_|]+")

OnFailure = Literal["continue", "block"]
#: Matcher members the TypeScript SDK 0.3.334 sends that agentx does not
#: implement: accepted while unset (null or false), refused otherwise.
_UNSET_ONLY: Final = frozenset({"whenUnanswered", "contextOnly", "replacedByFrame", "observesOnly"})
#: Events whose callbacks' ``onFailure: block`` is ignored, as in the SDKs.
NO_FAILURE_BLOCK: Final = frozenset({"Stop", "SubagentStop", "TaskCompleted", "TeammateIdle"})


class HookConfigError(ValueError):
    """A hook definition that cannot be used; the message names the member."""


class CommandHook(Struct, frozen=True, kw_only=True):
    """A settings command hook, run under ``/bin/sh -c`` (DEC-HOOK-2)."""

    command: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: ``async`` (or ``asyncRewake``): runs in the background, decides nothing.
    background: bool = False

    @property
    def name(self) -> str:
        """``hook_name`` of its records."""
        return self.command


class HttpHook(Struct, frozen=True, kw_only=True):
    """A settings http hook: the input POSTed to ``url``, the response body
    read as a command hook's stdout (:mod:`agentx.messages.hooks.http`)."""

    url: str
    #: Header name -> value as written (``$VAR`` not yet interpolated).
    headers: tuple[tuple[str, str], ...] = ()
    #: The variables a header value may interpolate.
    allowed_env_vars: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def name(self) -> str:
        """The URL without its user-info and query (they may hold secrets,
        and the name reaches WARN lines on stderr)."""
        head, _, _ = self.url.partition("?")
        scheme, sep, rest = head.partition("://")
        return scheme + sep + rest.rpartition("@")[2] if "@" in rest.split("/")[0] else head


class CallbackHook(Struct, frozen=True, kw_only=True):
    """An SDK callback hook, answered through ``hook_callback`` (DEC-PROFILE-2)."""

    callback_id: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: ``block``: a failure of this hook blocks what the event guards.
    on_failure: OnFailure = "continue"

    @property
    def name(self) -> str:
        return self.callback_id


HookSpec = CommandHook | HttpHook | CallbackHook


class HookGroup(Struct, frozen=True, kw_only=True):
    """One matcher of one event and its hooks, in definition order."""

    event: str
    matcher: str
    hooks: tuple[HookSpec, ...]


def check_matcher(matcher: object, where: str) -> str:
    """A valid matcher string (None means every value); raises :class:`HookConfigError`."""
    if matcher is None:
        return ""
    if not isinstance(matcher, str):
        raise HookConfigError(f"{where}.matcher must be a string")
    if not _simple(matcher):
        try:
            re.compile(matcher)
        except re.error:
            raise HookConfigError(f"{where}.matcher must be a regular expression") from None
    return matcher


def _simple(matcher: str) -> bool:
    return matcher in ("", "*") or _NAMES.fullmatch(matcher) is not None


def matches(matcher: str, value: str | None) -> bool:
    """DEC-HOOK-1: does ``matcher`` select an input whose matched field is ``value``?

    ``value`` None: the event ignores matchers.
    """
    if value is None or matcher in ("", "*"):
        return True
    if _NAMES.fullmatch(matcher):
        return value in matcher.split("|")
    return re.search(matcher, value) is not None


def check_timeout(value: object, where: str) -> float:
    """A positive number of seconds, at most :data:`MAX_TIMEOUT_S`."""
    if value is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise HookConfigError(f"{where}.timeout must be a positive number of seconds")
    if not 0 < value <= MAX_TIMEOUT_S:
        raise HookConfigError(f"{where}.timeout must be a positive number of seconds")
    return float(value)


def settings_groups(hooks: Mapping[str, Any]) -> tuple[HookGroup, ...]:
    """The command hook groups of a validated settings ``hooks`` object."""
    return tuple(
        HookGroup(
            event=event,
            matcher=group.get("matcher") or "",
            hooks=tuple(_settings_hook(hook) for hook in group.get("hooks", ())),
        )
        for event, groups in hooks.items()
        for group in groups
    )


def _settings_hook(hook: Mapping[str, Any]) -> HookSpec:
    timeout_s = float(hook.get("timeout", DEFAULT_TIMEOUT_S))
    if hook.get("type") == "http":
        return HttpHook(
            url=hook["url"],
            headers=tuple(hook.get("headers", FrozenDict()).items()),
            allowed_env_vars=tuple(hook.get("allowedEnvVars", ())),
            timeout_s=timeout_s,
        )
    return CommandHook(
        command=hook["command"],
        timeout_s=timeout_s,
        background=hook.get("async") is True or hook.get("asyncRewake") is True,
    )


def initialize_groups(hooks: object) -> tuple[HookGroup, ...]:
    """The callback hook groups of ``initialize``'s ``hooks`` (DEC-PROFILE-2).

    ``None`` is no hooks. Raises :class:`HookConfigError` naming the member
    that breaks the shape (an unknown event, a matcher that is not a
    regular expression, an id that is not a non-empty string, a duplicate id).
    """
    if hooks is None:
        return ()
    if not isinstance(hooks, Mapping):
        raise HookConfigError("hooks must be an object")
    seen: set[str] = set()
    found: list[HookGroup] = []
    for event, groups in hooks.items():
        where = f"hooks.{event}"
        if event not in HOOK_EVENTS:
            raise HookConfigError(f"{where} is not a hook event")
        if groups is None:
            continue
        if not isinstance(groups, tuple | list):
            raise HookConfigError(f"{where} must be an array")
        for index, group in enumerate(groups):
            found.append(_callback_group(event, group, f"{where}[{index}]", seen))
    return tuple(found)


def _callback_group(event: str, group: object, where: str, seen: set[str]) -> HookGroup:
    if not isinstance(group, Mapping):
        raise HookConfigError(f"{where} must be an object")
    unknown = sorted(
        name
        for name in set(group) - {"matcher", "hookCallbackIds", "timeout", "onFailure"}
        if name not in _UNSET_ONLY or group[name] not in (None, False)
    )
    if unknown:
        raise HookConfigError(f"{where}.{unknown[0]} is not supported")
    matcher = check_matcher(group.get("matcher"), where)
    timeout_s = check_timeout(group.get("timeout"), where)
    on_failure = group.get("onFailure", "continue")
    if on_failure is None:
        on_failure = "continue"
    if on_failure not in ("continue", "block"):
        raise HookConfigError(f'{where}.onFailure must be "continue" or "block"')
    ids = group.get("hookCallbackIds")
    if not isinstance(ids, tuple | list):
        raise HookConfigError(f"{where}.hookCallbackIds must be an array")
    hooks: list[HookSpec] = []
    for callback_id in ids:
        if not isinstance(callback_id, str) or not callback_id:
            raise HookConfigError(f"{where}.hookCallbackIds must hold non-empty strings")
        if callback_id in seen:
            raise HookConfigError(f"{where}.hookCallbackIds repeats {callback_id!r}")
        seen.add(callback_id)
        hooks.append(
            CallbackHook(callback_id=callback_id, timeout_s=timeout_s, on_failure=on_failure)
        )
    return HookGroup(event=event, matcher=matcher, hooks=tuple(hooks))


def select(groups: Iterable[HookGroup], event: str, value: str | None) -> tuple[HookSpec, ...]:
    """The hooks that run for one firing of ``event`` (DEC-HOOK-3), in
    definition order; an identical command (or http hook URL) defined twice
    runs once, as in Claude Code."""
    if event not in MATCHED_FIELD:
        value = None
    chosen: list[HookSpec] = []
    seen: set[tuple[str, str]] = set()
    for group in groups:
        if group.event != event or not matches(group.matcher, value):
            continue
        for hook in group.hooks:
            key = _identity(hook)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            chosen.append(hook)
    return tuple(chosen)


def _identity(hook: HookSpec) -> tuple[str, str] | None:
    """What makes two settings hooks the same one (None: callbacks are never merged)."""
    if isinstance(hook, CommandHook):
        return ("command", hook.command)
    if isinstance(hook, HttpHook):
        return ("http", hook.url)
    return None
