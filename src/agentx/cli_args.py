"""The command line (DECISIONS section 9, DEC-CLI-1..5).

Parsing only: no heavy imports, so ``--version`` and ``--help`` stay fast.
Unknown flags, repeated single-use flags and bad values are usage errors
(exit 2, a usage line on stderr, nothing on stdout; DEC-CLI-4);
``--flag=value`` and ``--flag value`` are the same.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from agentx.messages.permission_rules import Mode


class UsageError(Exception):
    """Bad command line: exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Once(argparse.Action):
    """A single-use option: a second occurrence is a usage error."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        seen: set[str] = namespace.__dict__.setdefault("_seen", set())
        if self.dest in seen:
            raise UsageError(f"{option_string} may be given only once")
        seen.add(self.dest)
        setattr(namespace, self.dest, True if self.nargs == 0 else values)


def _flag(parser: argparse.ArgumentParser, *names: str, **kwargs: Any) -> None:
    parser.add_argument(*names, action=_Once, **kwargs)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError
    return value


def _budget(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="agentx", add_help=False, allow_abbrev=False)
    _flag(p, "--input-format", choices=("text", "stream-json"))
    _flag(p, "--output-format", choices=("text", "json", "stream-json"))
    _flag(p, "-p", "--print", dest="print", nargs="?", const="", metavar="PROMPT")
    p.add_argument("--attach", action="append", default=[], metavar="PATH")
    _flag(p, "--provider", metavar="ID")
    _flag(
        p,
        "--permission-mode",
        choices=("default", "acceptEdits", "plan", "bypassPermissions"),
    )
    _flag(p, "--settings", metavar="FILE_OR_JSON")
    _flag(p, "--resume", metavar="SESSION_ID")
    _flag(p, "--session-id", metavar="UUID")
    _flag(p, "--continue", dest="continue_", nargs=0)
    _flag(p, "--no-session-persistence", nargs=0)
    _flag(p, "--session-store", metavar="URL")
    _flag(p, "--include-partial-messages", nargs=0)
    _flag(p, "--replay-user-messages", nargs=0)
    _flag(p, "--max-turns", type=_positive_int)
    _flag(p, "--max-budget-usd", type=_budget)
    _flag(p, "--verbose", nargs=0)
    _flag(p, "--control-profile", choices=("standalone", "extended"))
    _flag(p, "--prompt-suggestions", nargs=0)
    _flag(p, "--post-turn-summaries", nargs=0)
    _flag(p, "--system-prompt", metavar="S")
    _flag(p, "--system-prompt-file", metavar="P")
    _flag(p, "--append-system-prompt", metavar="S")
    _flag(p, "--permission-prompt-tool", choices=("stdio",))
    _flag(p, "--model", metavar="M")
    _flag(p, "--effort", metavar="E")
    _flag(p, "--setting-sources", metavar="LIST")
    _flag(p, "--allowedTools", "--allowed-tools", dest="allowed_tools", metavar="LIST")
    _flag(p, "--disallowedTools", "--disallowed-tools", dest="disallowed_tools", metavar="LIST")
    _flag(p, "--tools", metavar="LIST")
    p.add_argument("--add-dir", action="append", default=[], metavar="DIR")
    _flag(p, "--version", "-v", nargs=0)
    _flag(p, "--help", "-h", nargs=0)
    # Claude Code's SDK clients send ``--print -- PROMPT``.
    p.add_argument("positional", nargs="*", help=argparse.SUPPRESS)
    return p


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    input_format: str
    output_format: str
    prompt: str | None
    print_mode: bool
    attach: tuple[str, ...]
    provider: str | None
    permission_mode: Mode | None
    settings: str | None
    resume: str | None
    session_id: str | None
    continue_: bool
    no_session_persistence: bool
    #: DEC-STORE-1: the session store URL (else ``AGENTX_SESSION_STORE``, else the files).
    session_store: str | None
    include_partial_messages: bool
    replay_user_messages: bool
    max_turns: int | None
    max_budget_usd: float | None
    verbose: bool
    control_profile: str
    prompt_suggestions: bool
    post_turn_summaries: bool
    system_prompt: str | None
    system_prompt_file: str | None
    append_system_prompt: str | None
    model: str | None
    effort: str | None
    setting_sources: tuple[str, ...]
    allowed_tools: tuple[str, ...]
    disallowed_tools: tuple[str, ...]
    tools: tuple[str, ...] | None
    add_dirs: tuple[str, ...]
    version: bool
    help: bool


def _list(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(item.strip() for item in text.replace(" ", ",").split(",") if item.strip())


SETTING_SOURCES = ("user", "project", "local")


def parse_args(argv: Sequence[str]) -> Options:
    """Parse and cross-check the command line; raises :class:`UsageError`."""
    ns = build_parser().parse_args(list(argv))
    input_format = ns.input_format or "text"
    output_format = ns.output_format or "text"
    prompt = ns.print if ns.print else None
    if ns.positional:
        if ns.print is None or prompt is not None or len(ns.positional) != 1:
            raise UsageError("unexpected argument; a prompt goes after -p")
        prompt = ns.positional[0] or None
    if ns.attach and prompt is None:
        raise UsageError("--attach is only valid with -p PROMPT")
    if input_format == "stream-json" and prompt is not None:
        raise UsageError("a -p PROMPT cannot be combined with --input-format stream-json")
    if ns.include_partial_messages and output_format != "stream-json":
        raise UsageError("--include-partial-messages requires --output-format stream-json")
    if ns.replay_user_messages and input_format != "stream-json":
        raise UsageError("--replay-user-messages requires --input-format stream-json")
    sources = _list(ns.setting_sources) if ns.setting_sources is not None else SETTING_SOURCES
    if not set(sources) <= set(SETTING_SOURCES):
        raise UsageError("--setting-sources takes a list of user, project, local")
    if ns.resume is not None and ns.continue_:
        raise UsageError("--resume and --continue are exclusive")
    if ns.session_id is not None and ns.continue_:
        # DEC-CLI-5: --continue picks the session; --session-id names a new one.
        raise UsageError("--session-id and --continue are exclusive")
    if ns.no_session_persistence and (ns.resume is not None or ns.continue_):
        raise UsageError("--no-session-persistence cannot resume a session")
    return Options(
        input_format=input_format,
        output_format=output_format,
        prompt=prompt,
        print_mode=ns.print is not None,
        attach=tuple(ns.attach),
        provider=ns.provider,
        permission_mode=ns.permission_mode,
        settings=ns.settings,
        resume=ns.resume,
        session_id=ns.session_id,
        continue_=bool(ns.continue_),
        no_session_persistence=bool(ns.no_session_persistence),
        session_store=ns.session_store,
        include_partial_messages=bool(ns.include_partial_messages),
        replay_user_messages=bool(ns.replay_user_messages),
        max_turns=ns.max_turns,
        max_budget_usd=ns.max_budget_usd,
        verbose=bool(ns.verbose),
        control_profile=ns.control_profile or "standalone",
        prompt_suggestions=bool(ns.prompt_suggestions),
        post_turn_summaries=bool(ns.post_turn_summaries),
        system_prompt=ns.system_prompt,
        system_prompt_file=ns.system_prompt_file,
        append_system_prompt=ns.append_system_prompt,
        model=ns.model,
        effort=ns.effort,
        setting_sources=sources,
        allowed_tools=_list(ns.allowed_tools),
        disallowed_tools=_list(ns.disallowed_tools),
        tools=_list(ns.tools) if ns.tools is not None else None,
        add_dirs=tuple(ns.add_dir),
        version=bool(ns.version),
        help=bool(ns.help),
    )


USAGE = """\
usage: agentx [--input-format text|stream-json] [--output-format text|json|stream-json]
              [-p|--print [PROMPT]] [--attach PATH]... [--provider ID]
              [--permission-mode default|acceptEdits|plan|bypassPermissions]
              [--settings FILE_OR_JSON] [--resume SESSION_ID] [--session-id UUID]
              [--include-partial-messages] [--replay-user-messages]
              [--max-turns N] [--max-budget-usd X] [--verbose] [--no-session-persistence]
              [--control-profile standalone|extended]
              [--prompt-suggestions] [--post-turn-summaries]
       agentx --list-providers [--output-format text|json] [--]
       agentx --version | --help
"""
