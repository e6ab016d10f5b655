"""A session's hooks (DECISIONS section 3): where the definitions come from,
the fields every input carries, and one call to fire an event.

:class:`HookDefinitions` holds the groups of both transports: the command
hooks of the live settings (``apply_flag_settings`` may change them) and the
callback hooks ``initialize`` registered (DEC-PROFILE-2). :class:`SessionHooks`
fires an event: it builds the input (DEC-HOOK-2), selects the hooks whose
matcher fits (DEC-HOOK-1), runs them in parallel (DEC-HOOK-3), writes one
WARN line per hook that failed, shows each hook's ``systemMessage`` to the
user (:data:`ShowMessage`), gives ``SessionStart`` command hooks their
``CLAUDE_ENV_FILE`` (:mod:`agentx.hooks.env_file`), and returns the combined
:class:`~agentx.messages.hooks.aggregate.EventOutcome`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentx.diagnostics import logger
from agentx.messages.frozen import FrozenDict
from agentx.messages.hooks.aggregate import NOTHING, EventOutcome, bounded, combine
from agentx.messages.hooks.config import (
    CommandHook,
    HookGroup,
    HookSpec,
    select,
    settings_groups,
)
from agentx.messages.hooks.events import Common, event_input, matched_value
from agentx.once import Once

if TYPE_CHECKING:
    # DEC-CLI-3: the runner (the hook process, the callback port) and the
    # env file's folder are built with the first hook that runs, so they are
    # for the type checker only here.
    from agentx.hooks.env_file import SessionEnvFile
    from agentx.hooks.runner import HookRunner


def _never() -> bool:
    return False


#: Shows a hook's ``systemMessage`` to the user: ``(event, message, quiet)``;
#: ``quiet`` when no record may follow (SessionEnd, WIRE-004).
ShowMessage = Callable[[str, str, bool], None]


def message_lines(literals: frozenset[str]) -> ShowMessage:
    """The standalone profile's way to show a ``systemMessage``: one INFO line
    (its stdout keeps the spec's records, as for ``system/api_retry``), with
    every credential literal of the union replaced (DEC-AUTH-3) here as well
    as by the CLI's diagnostics (``LazyLogger.redact_with``), which an
    embedding application's own loguru sink does not have. The
    redactor is built by the first message (DEC-CLI-3; building it twice on
    two threads is harmless)."""
    redactors: list[Callable[[str], str]] = []

    def show(event: str, message: str, quiet: bool) -> None:
        if not redactors:
            from agentx.providers.errors import Redactor  # noqa: PLC0415 - only with a message

            redactors.append(Redactor(tuple(literals)))
        logger.info("{} hook message: {}", event, redactors[0](message))

    return show


class HookDefinitions:
    """The hook groups of both transports, settings first."""

    def __init__(self, settings_hooks: Callable[[], Mapping[str, Any]]) -> None:
        self._settings_hooks = settings_hooks
        self._lock = threading.Lock()
        self._seen: Mapping[str, Any] | None = None
        self._from_settings: tuple[HookGroup, ...] = ()
        self._callbacks: tuple[HookGroup, ...] = ()

    def set_callbacks(self, groups: tuple[HookGroup, ...]) -> None:
        """``initialize``'s callback hooks (DEC-PROFILE-2)."""
        with self._lock:
            self._callbacks = groups

    def groups(self) -> tuple[HookGroup, ...]:
        current = self._settings_hooks()
        with self._lock:
            # Settings.hooks is built per call: an equal object reuses the groups.
            if self._seen is None or current != self._seen:
                self._seen = current
                self._from_settings = settings_groups(current)
            return (*self._from_settings, *self._callbacks)


class SessionHooks:
    """Fires the events of one session; see the module docstring.

    ``runner`` builds the :class:`~agentx.hooks.runner.HookRunner` the first
    time a hook runs (DEC-CLI-3: a session whose events select no hook never
    loads it); it is built once."""

    def __init__(
        self,
        *,
        runner: Callable[[], HookRunner],
        definitions: HookDefinitions,
        common: Callable[[], Common],
        include_events: bool,
        start_source: str,
        show: ShowMessage,
        env_file: SessionEnvFile | None = None,
    ) -> None:
        self._runner = Once(runner)
        self._definitions = definitions
        self._common = common
        self._records = include_events
        self._show = show
        self._env_file = env_file
        #: ``SessionStart``'s source when the session begins (startup or resume).
        self.start_source = start_source

    @property
    def definitions(self) -> HookDefinitions:
        return self._definitions

    def show(self, event: str, message: str) -> None:
        """A ``systemMessage`` of a hook run outside :meth:`fire` (the
        permission race's PermissionRequest hooks), shown as every other."""
        self._show(event, bounded(message), False)

    def specs(self, event: str, value: str) -> tuple[HookSpec, ...]:
        """The hooks of both transports ``event`` selects for ``value``."""
        return select(self._definitions.groups(), event, value)

    def _built_runner(self) -> HookRunner:
        """The runner, built by the first hook to run (any thread)."""
        return self._runner.get()

    def _collect_background(self, quiet: bool) -> None:
        """``async`` hooks that ended since the last firing: a failure is one
        WARN line, a ``systemMessage`` is shown; nothing else they said has
        an effect (what their event guarded went on without them). Before the
        first hook ran there is no runner and nothing in the background."""
        runner = self._runner.peek()
        if runner is None:
            return
        for event, spec, verdict in runner.poll_background():
            if verdict.failure is not None:
                logger.warning("{} async hook {!r} failed: {}", event, spec.name, verdict.failure)
            elif verdict.system_message:
                self._show(event, bounded(verdict.system_message), quiet)

    def fire(
        self,
        event: str,
        fields: Mapping[str, Any],
        *,
        cancelled: Callable[[], bool] = _never,
        quiet: bool = False,
    ) -> EventOutcome:
        """Run every hook of ``event`` that matches and combine their verdicts.

        ``quiet``: write no hook records even with ``--include-hook-events``
        (SessionEnd: nothing follows the final ``idle``, WIRE-004)."""
        self._collect_background(quiet)
        hook_input = event_input(event, self._common(), fields)
        specs = select(self._definitions.groups(), event, matched_value(event, hook_input))
        if not specs:
            return NOTHING
        env_file = self._env_file if event == "SessionStart" else None
        if env_file is not None and not any(isinstance(h, CommandHook) for h in specs):
            env_file = None
        try:
            verdicts = self._built_runner().run(
                specs,
                FrozenDict(hook_input),
                records=self._records and not quiet,
                cancelled=cancelled,
                extra_env=env_file.prepare() if env_file is not None else None,
            )
        finally:
            if env_file is not None:
                env_file.collect()
        for spec, verdict in zip(specs, verdicts, strict=True):
            if verdict.failure is not None:
                logger.warning("{} hook {!r} failed: {}", event, spec.name, verdict.failure)
        outcome = combine(verdicts)
        for message in outcome.system_messages:
            self._show(event, message, quiet)
        return outcome
