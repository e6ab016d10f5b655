"""The command line (DECISIONS section 9, DEC-CLI-1..5).

Parsing only: no heavy imports, so ``--version`` and ``--help`` stay fast.
Unknown flags, repeated single-use flags and bad values are usage errors
(exit 2, one sentence and a usage line on stderr, nothing on stdout;
DEC-CLI-4); ``--flag=value`` and ``--flag value`` are the same. The parser
and ``--help`` are both built from
:data:`~agentx.config.cli_flags.FLAGS`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from msgspec import Struct

from agentx.config.cli_flags import COMMANDS, FLAGS, Flag

if TYPE_CHECKING:
    from agentx.messages.permission_rules import Mode


class UsageError(Exception):
    """Bad command line: exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.HelpFormatter):
    """argparse builds a formatter for every option it adds (to check the
    option's metavar); agentx writes its own ``--help`` (:func:`help_text`),
    so the width is fixed instead of read from the terminal, which would
    import ``shutil`` and query the terminal once per option (start-up,
    DEC-CLI-3)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=100)


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


def build_parser(flags: Sequence[Flag] = FLAGS) -> argparse.ArgumentParser:
    """The parser of ``flags`` (every flag unless told), and the positionals."""
    # Values are checked in parse_args, so every message is agentx's own.
    p = _Parser(
        prog="agentx",
        add_help=False,
        allow_abbrev=False,
        exit_on_error=False,
        formatter_class=_Formatter,
    )
    for flag in flags:
        kwargs: dict[str, Any] = {"dest": flag.dest} if flag.dest else {}
        if flag.repeatable:
            p.add_argument(*flag.names, action="append", default=[], **kwargs)
        elif flag.value is None:
            p.add_argument(*flag.names, action=_Once, nargs=0, **kwargs)
        elif flag.value.startswith("["):
            p.add_argument(*flag.names, action=_Once, nargs="?", const="", **kwargs)
        else:
            p.add_argument(*flag.names, action=_Once, **kwargs)
    # Claude Code's SDK clients send ``--print -- PROMPT``.
    p.add_argument("positional", nargs="*")
    return p


def _named(argv: Sequence[str]) -> tuple[Flag, ...]:
    """The flags whose option strings ``argv`` can spell (start-up, DEC-CLI-3).

    argparse reads a token as an option only through the option strings it
    knows: the whole token, its part before ``=``, and for a single-dash
    token its first two characters, each of its characters as a combined
    short flag, and every option string the token begins. Registering the
    flags these spellings name (a superset of what is consulted) parses
    ``argv`` exactly as the parser of every flag does, without adding the
    other fifty (about 0.5 ms of ``add_argument``); flags absent here take
    their defaults from :func:`_defaults`.
    """
    spelled: set[str] = set()
    prefixes: list[str] = []
    for token in argv:
        if len(token) < 2 or token[0] != "-":
            continue
        spelled.add(token.split("=", 1)[0])
        if token[1] != "-":
            spelled.update(f"-{char}" for char in token[1:])
            prefixes.append(token)
    return tuple(
        flag
        for flag in FLAGS
        if any(name in spelled or name.startswith(tuple(prefixes)) for name in flag.names)
    )


def _defaults() -> argparse.Namespace:
    """Every flag's default, as the parser of every flag would set it: an
    empty list for a repeatable flag, else None."""
    return argparse.Namespace(**{_dest(flag): [] if flag.repeatable else None for flag in FLAGS})


def _sentence(error: argparse.ArgumentError) -> str:
    """argparse's own complaints, as sentences naming the flag."""
    names = (error.argument_name or "").split("/")
    flag = next((n for n in names if n.startswith("--")), names[0])
    if error.message == "expected one argument":
        return f"{flag} needs a value"
    if error.message.startswith("ignored explicit argument"):
        return f"{flag} takes no value"
    return f"{flag}: {error.message}"


def _dest(flag: Flag) -> str:
    long_name = next(n for n in flag.names if n.startswith("--"))
    return flag.dest or long_name[2:].replace("-", "_")


def _check_choices(ns: argparse.Namespace) -> None:
    for flag in FLAGS:
        value = getattr(ns, _dest(flag))
        if flag.choices and value is not None and value not in flag.choices:
            allowed = ", ".join(flag.choices)
            one = len(flag.choices) == 1
            rule = f"must be {allowed}" if one else f"must be one of {allowed}"
            raise UsageError(f"{flag.names[0]} {rule}, not {value!r}")


def _positive_int(flag: str, text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"{flag} must be a whole number of at least 1, not {text!r}")
    return value


def _count(flag: str, text: str | None, *, least: int) -> int | None:
    """A whole number of tokens of at least ``least``."""
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise UsageError(f"{flag} must be a whole number of at least {least}, not {text!r}")
    return value


def _budget(flag: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{flag} must be a positive number of US dollars, not {text!r}")
    return value


class Options(Struct, frozen=True, kw_only=True):
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
    #: DEC-CLI-5 ``--fork-session``: resume a copy under a new id.
    fork_session: bool
    #: DEC-CLI-5 ``--resume-session-at`` / ``--resume-drops-turn``: a resume up to a message.
    resume_session_at: str | None
    resume_drops_turn: str | None
    #: DEC-STORE-1 ``--session-mirror``: transcript entries mirrored on stdout.
    session_mirror: bool
    #: DEC-STORE-1: the session store URL (else ``AGENTX_SESSION_STORE``, else the files).
    session_store: str | None
    include_partial_messages: bool
    #: DEC-HOOK-4: the hook records of every event, not only PermissionRequest's.
    include_hook_events: bool
    replay_user_messages: bool
    max_turns: int | None
    max_budget_usd: float | None
    verbose: bool
    #: DECISIONS section 8: ``text`` or ``json`` diagnostics, and where they go.
    log_format: str | None
    log_file: str | None
    #: ``--debug``: DEBUG lines and tracebacks on stderr (DECISIONS section 8).
    debug: bool
    #: DEC-PROFILE-2: None when not given (settings and environment decide).
    control_profile: str | None
    #: DEC-PROFILE-2 ``--await-initialize``: prompts wait for ``initialize``.
    await_initialize: bool
    prompt_suggestions: bool
    post_turn_summaries: bool
    system_prompt: str | None
    system_prompt_file: str | None
    append_system_prompt: str | None
    #: DEC-CLI-5: the environment block in the first prompt, not the system prompt.
    exclude_dynamic_sections: bool
    #: DEC-CLI-5: the structured output schema, as given (checked at launch).
    json_schema: str | None
    #: DEC-CLI-5: ``--agents`` JSON as given (checked at launch) and the
    #: text appended to every subagent's system prompt.
    agents: str | None
    append_subagent_system_prompt: str | None
    model: str | None
    effort: str | None
    #: DEC-CLI-5: the model and how it is asked (one block, :mod:`agentx.config.request_flags`).
    fallback_model: str | None
    thinking: str | None
    max_thinking_tokens: int | None
    thinking_display: str | None
    task_budget: int | None
    betas: tuple[str, ...]
    setting_sources: tuple[str, ...]
    allowed_tools: tuple[str, ...]
    disallowed_tools: tuple[str, ...]
    tools: tuple[str, ...] | None
    add_dirs: tuple[str, ...]
    #: DEC-CLI-7: ``--mcp-config`` values (JSON text or a file), in order.
    mcp_config: tuple[str, ...]
    strict_mcp_config: bool
    #: ``--permission-prompt-tool``: None/"stdio" (can_use_tool) or ``mcp__server__tool``.
    permission_prompt_tool: str | None
    version: bool
    help: bool


def _list(text: str | None) -> tuple[str, ...]:
    """A comma- or whitespace-separated list, split only outside parentheses,
    so ``"Bash(git commit:*) Read"`` is two rules, as Claude Code reads it
    (DEC-CLI-5)."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text or "":
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            items.append("".join(current))
            current.clear()
        else:
            current.append(ch)
    items.append("".join(current))
    return tuple(item for item in items if item)


def _prompt_tool(text: str | None) -> str | None:
    """``--permission-prompt-tool``: ``stdio`` (the control channel) or an MCP
    tool's ``mcp__<server>__<tool>`` name, as Claude Code takes it."""
    if text is None or text == "stdio":
        return None
    server, _, tool = text.removeprefix("mcp__").partition("__")
    if not text.startswith("mcp__") or not server or not tool:
        raise UsageError(
            f'--permission-prompt-tool must be "stdio" or mcp__<server>__<tool>, not {text!r}'
        )
    return text


SETTING_SOURCES = ("user", "project", "local")
UNEXPECTED = "unexpected argument; a prompt goes after -p"


def _prompt(ns: argparse.Namespace) -> str | None:
    """The ``-p`` prompt: its value, or the one positional after ``--print``
    (Claude Code's SDK clients send ``--print -- PROMPT``)."""
    prompt: str | None = ns.print if ns.print else None
    if ns.positional:
        if ns.print is None or prompt is not None or len(ns.positional) != 1:
            raise UsageError(UNEXPECTED)
        prompt = ns.positional[0] or None
    return prompt


def _check_combinations(
    ns: argparse.Namespace, *, input_format: str, output_format: str, prompt: str | None
) -> None:
    """Flags that need, or exclude, one another (DEC-CLI-4, DEC-CLI-5), and
    the ``--setting-sources`` list, checked in this order."""
    if ns.attach and prompt is None:
        raise UsageError("--attach is only valid with -p PROMPT")
    if input_format == "stream-json" and prompt is not None:
        raise UsageError("a -p PROMPT cannot be combined with --input-format stream-json")
    if ns.include_partial_messages and output_format != "stream-json":
        raise UsageError("--include-partial-messages requires --output-format stream-json")
    if ns.replay_user_messages and input_format != "stream-json":
        raise UsageError("--replay-user-messages requires --input-format stream-json")
    if ns.await_initialize and input_format != "stream-json":
        raise UsageError("--await-initialize requires --input-format stream-json")
    if ns.setting_sources is not None and not set(_list(ns.setting_sources)) <= set(
        SETTING_SOURCES
    ):
        raise UsageError("--setting-sources takes a list of user, project, local")
    if ns.resume is not None and ns.continue_:
        raise UsageError("--resume and --continue are exclusive")
    if ns.fork_session and ns.resume is None and not ns.continue_:
        raise UsageError("--fork-session requires --resume or --continue")
    if ns.resume_session_at is not None and ns.resume is None and not ns.continue_:
        raise UsageError("--resume-session-at requires --resume or --continue")
    if ns.resume_session_at == "":
        raise UsageError("--resume-session-at needs the uuid of a message")
    if ns.resume_drops_turn is not None and ns.resume_session_at is None:
        raise UsageError("--resume-drops-turn requires --resume-session-at")
    if ns.resume_drops_turn == "":
        # The SDKs forward an empty value so that it is refused, never ignored.
        raise UsageError("--resume-drops-turn needs the uuid of the prompt whose turn is dropped")
    if ns.session_id is not None and ns.continue_ and not ns.fork_session:
        # DEC-CLI-5: --continue picks the session; --session-id names a new
        # one, which only a fork of it can be.
        raise UsageError("--session-id and --continue are exclusive")
    if ns.no_session_persistence and (ns.resume is not None or ns.continue_):
        raise UsageError("--no-session-persistence cannot resume a session")
    if ns.session_mirror and output_format != "stream-json":
        raise UsageError("--session-mirror requires --output-format stream-json")
    if ns.session_mirror and ns.no_session_persistence:
        raise UsageError("--session-mirror cannot be combined with --no-session-persistence")


def parse_args(argv: Sequence[str]) -> Options:
    """Parse and cross-check the command line; raises :class:`UsageError`."""
    try:
        ns, unknown = build_parser(_named(argv)).parse_known_args(list(argv), _defaults())
    except argparse.ArgumentError as exc:
        raise UsageError(_sentence(exc)) from None
    if unknown and unknown[0].startswith("-"):
        name = unknown[0].split("=", 1)[0]
        # DEC-CLI-4: Claude Code's options agentx does not take are named as
        # such (the table loads only on this error path).
        from agentx.config.claude_flags import refusal  # noqa: PLC0415

        raise UsageError(refusal(name) or f"unknown option {name}")
    if unknown:
        raise UsageError(UNEXPECTED)
    _check_choices(ns)
    input_format = ns.input_format or "text"
    output_format = ns.output_format or "text"
    prompt = _prompt(ns)
    _check_combinations(ns, input_format=input_format, output_format=output_format, prompt=prompt)
    sources = _list(ns.setting_sources) if ns.setting_sources is not None else SETTING_SOURCES
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
        fork_session=bool(ns.fork_session),
        resume_session_at=ns.resume_session_at,
        resume_drops_turn=ns.resume_drops_turn,
        session_mirror=bool(ns.session_mirror),
        no_session_persistence=bool(ns.no_session_persistence),
        session_store=ns.session_store,
        include_partial_messages=bool(ns.include_partial_messages),
        include_hook_events=bool(ns.include_hook_events),
        replay_user_messages=bool(ns.replay_user_messages),
        max_turns=_positive_int("--max-turns", ns.max_turns),
        max_budget_usd=_budget("--max-budget-usd", ns.max_budget_usd),
        verbose=bool(ns.verbose),
        log_format=ns.log_format,
        log_file=ns.log_file,
        debug=bool(ns.debug),
        control_profile=ns.control_profile,
        await_initialize=bool(ns.await_initialize),
        prompt_suggestions=bool(ns.prompt_suggestions),
        post_turn_summaries=bool(ns.post_turn_summaries),
        system_prompt=ns.system_prompt,
        system_prompt_file=ns.system_prompt_file,
        append_system_prompt=ns.append_system_prompt,
        exclude_dynamic_sections=bool(ns.exclude_dynamic_system_prompt_sections),
        json_schema=ns.json_schema,
        agents=ns.agents,
        append_subagent_system_prompt=ns.append_subagent_system_prompt,
        model=ns.model,
        effort=ns.effort,
        fallback_model=ns.fallback_model,
        thinking=ns.thinking,
        max_thinking_tokens=_count("--max-thinking-tokens", ns.max_thinking_tokens, least=0),
        thinking_display=ns.thinking_display,
        task_budget=_count("--task-budget", ns.task_budget, least=1),
        betas=_list(ns.betas),
        setting_sources=sources,
        allowed_tools=_list(ns.allowed_tools),
        disallowed_tools=_list(ns.disallowed_tools),
        tools=_list(ns.tools) if ns.tools is not None else None,
        add_dirs=tuple(ns.add_dir),
        mcp_config=tuple(ns.mcp_config),
        strict_mcp_config=bool(ns.strict_mcp_config),
        permission_prompt_tool=_prompt_tool(ns.permission_prompt_tool),
        version=bool(ns.version),
        help=bool(ns.help),
    )


#: The usage line after a usage error (DEC-CLI-4).
USAGE = "usage: agentx [options] [command] [prompt]; agentx --help lists the options\n"


def _invocation(flag: Flag) -> str:
    names = ", ".join(flag.names)
    return names if flag.value is None else f"{names} {flag.value}"


def help_text() -> str:
    """``agentx --help``: grouped as ``claude --help`` groups its own (usage,
    arguments, options, commands), one line per flag and command."""
    rows = [(_invocation(flag), flag.help) for flag in FLAGS]
    width = max(len(left) for left, _ in (*rows, *COMMANDS)) + 2

    def table(entries: Sequence[tuple[str, str]]) -> list[str]:
        return [f"  {left.ljust(width)}{right}" for left, right in entries]

    lines = [
        "Usage: agentx [options] [command] [prompt]",
        "",
        "agentx - a host for the Structured SDK Wire Protocol: -p/--print runs one prompt;",
        "--input-format stream-json --output-format stream-json is the duplex protocol",
        "",
        "Arguments:",
        *table([("prompt", "The prompt for -p/--print (after -p, or after --)")]),
        "",
        "Options:",
        *table(rows),
        "",
        "Commands:",
        *table(COMMANDS),
    ]
    return "\n".join(lines) + "\n"
