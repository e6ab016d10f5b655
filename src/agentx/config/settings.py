"""Settings sources and their merge (DEC-SET-1, DEC-SET-2, DEC-HOOK-1, DEC-CLI-5).

Sources, low to high: ``user`` (``$AGENTX_HOME/settings.json``), ``project``
(Claude Code's ``<cwd>/.claude/settings.json``, then ``<cwd>/.agentx/settings.json``),
``local`` (``<cwd>/.claude/settings.local.json``, then ``<cwd>/.agentx/settings.local.json``),
``flag`` (``--settings`` file or inline JSON, plus ``--allowedTools`` and
``--disallowedTools`` as allow/deny rules) and ``policy`` (``$AGENTX_POLICY``).
Objects merge recursively and the later source wins, except that
``permissions.allow|deny|ask`` concatenate; as deny rules beat every allow
rule and every mode (DEC-PERM-MODE), a policy deny cannot be overridden.
Each event's list under ``hooks`` concatenates too, as Claude Code merges
hooks (DEC-HOOK-1): a later source adds hooks and never removes one, so an
empty local ``PreToolUse`` list leaves a project guard in place.
``disableAllHooks`` turns hooks off as Claude Code does: set in the policy
source, nothing runs; set (after the merge) by any other source, only the
policy source's hooks still run.

Every file is decoded strictly: invalid JSON, NaN/Infinity, a duplicate
member, a top level that is not an object, or a wrong type for a known key
raises :class:`SettingsError`, whose message names the file and the key but
never quotes the content (the CLI exits 2). A missing user/project/local file
is simply absent; a missing policy file is an error (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from msgspec import Struct

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.permission_rules import (
    MODES,
    Mode,
    PermissionRules,
    RuleError,
    is_mode,
    parse_rule,
    rule_problem,
)
from agentx.messages.profiles import PROFILES
from agentx.messages.strict_json import StrictJSONError, loads_strict

if TYPE_CHECKING:
    from agentx.messages.hooks.config import HookSpec
    from agentx.messages.sandbox_policy import SandboxSettings

SourceName = Literal["user", "project", "local", "flag", "policy"]
#: The sources ``--setting-sources`` may select (DEC-CLI-5).
FILE_SOURCES: Final = frozenset({"user", "project", "local"})
RULE_LISTS: Final = ("allow", "deny", "ask")
#: DEC-SET-2: the top-level keys a settings source may hold.
#: DEC-SET-2: Claude Code's approval of the .mcp.json servers (messages/mcp/sources.py).
MCP_APPROVAL_KEYS: Final = (
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
)
KNOWN_KEYS: Final = (
    "permissions",
    "hooks",
    "disableAllHooks",
    "env",
    "mcpServers",
    "sandbox",
    "controlProfile",
    *MCP_APPROVAL_KEYS,
    # DEC-PROFILE-2: false in any source keeps file checkpoints off.
    "fileCheckpointingEnabled",
)
#: DEC-SET-2: the members of ``permissions``.
PERMISSION_KEYS: Final = (*RULE_LISTS, "defaultMode")
#: A flag source that is inline JSON or command-line rules has this as its path.
INLINE: Final = "flag"


class SettingsError(Exception):
    """A settings source that cannot be used (exit 2, DEC-SET-1)."""


class Source(Struct, frozen=True, kw_only=True):
    """One raw settings source, as ``get_settings`` reports it (DEC-PROFILE-1)."""

    name: SourceName
    path: str
    settings: FrozenDict


# --- strict decoding ----------------------------------------------------------


def _decode(data: bytes | str, where: str) -> FrozenDict:
    try:
        value = loads_strict(data)
    except StrictJSONError as exc:
        raise SettingsError(f"{where}: {exc.reason}{_position(data)}") from None
    if not isinstance(value, FrozenDict):
        raise SettingsError(f"{where}: settings must be a JSON object")
    _validate(value, where)
    _warn_unknown(value, where)
    return value


def _position(data: bytes | str) -> str:
    """Where a document stops being JSON: `` at line L, column C (reason)``, the
    standard decoder's own account, which names no content; "" when it parses."""
    import json  # noqa: PLC0415  (only on this error path)

    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        return f" at line {exc.lineno}, column {exc.colno} ({exc.msg.lower()})"
    except ValueError:
        return ""
    return ""


#: How much of an unknown key a warning quotes.
_KEY_SHOWN: Final = 40


def _warn_unknown(settings: Mapping[str, Any], where: str) -> None:
    """DEC-SET-2: an unknown key (``permisions``, ``permissions.alow``) is one
    WARN line naming it, its source and the closest known key; it is never
    silently dropped, and it changes nothing."""
    unknown: list[tuple[str, tuple[str, ...]]] = [
        (key, KNOWN_KEYS) for key in settings if key not in KNOWN_KEYS
    ]
    permissions = settings.get("permissions")
    if isinstance(permissions, Mapping):
        unknown += [
            (f"permissions.{key}", PERMISSION_KEYS)
            for key in permissions
            if key not in PERMISSION_KEYS
        ]
    if not unknown:
        return
    from difflib import get_close_matches  # noqa: PLC0415  (only when a key is unknown)

    from agentx.diagnostics import logger  # noqa: PLC0415

    for key, known in unknown:
        prefix, _, name = key.rpartition(".")
        shown = key if len(key) <= _KEY_SHOWN else key[:_KEY_SHOWN] + "..."
        close = get_close_matches(name, known, n=1, cutoff=0.75)
        hint = f' (did you mean "{prefix + "." if prefix else ""}{close[0]}"?)' if close else ""
        logger.warning('{}: unknown settings key "{}" is ignored{}', where, shown, hint)


def _read_optional(path: Path) -> FrozenDict | None:
    """A user/project/local file: absent means no source."""
    try:
        return _read(path)
    except FileNotFoundError:
        return None


def _read_required(path: Path) -> FrozenDict:
    """The ``--settings`` file or the policy: absent is an error (fail closed)."""
    try:
        return _read(path)
    except FileNotFoundError:
        raise SettingsError(f"{path}: settings file not found") from None


def _read(path: Path) -> FrozenDict:
    """A regular file of at most ``START_FILE_LIMITS["settings"]`` bytes
    (DECISIONS section 8: a link to ``/dev/zero`` or ``/dev/stdin`` is refused)."""
    try:
        raw = read_start_file(path, START_FILE_LIMITS["settings"], "settings")
    except FileNotFoundError:
        raise  # the callers decide whether absence is an error
    except StartFileError as exc:
        raise SettingsError(f"{path}: cannot read settings: {exc.problem}") from None
    return _decode(raw, str(path))


# --- validation of the known keys (DEC-SET-2, DEC-HOOK-1) -----------------------


def _fail(where: str, key: str, expected: str) -> SettingsError:
    return SettingsError(f"{where}: {key} must be {expected}")


def _validate(obj: Mapping[str, Any], where: str) -> None:
    permissions = obj.get("permissions")
    if permissions is not None:
        _validate_permissions(permissions, where)
    if "hooks" in obj:
        _validate_hooks(obj["hooks"], where)
    if not isinstance(obj.get("disableAllHooks", False), bool):
        raise _fail(where, "disableAllHooks", "a boolean")
    if not isinstance(obj.get("fileCheckpointingEnabled", False), bool):
        raise _fail(where, "fileCheckpointingEnabled", "a boolean")
    profile = obj.get("controlProfile")
    if profile is not None and profile not in PROFILES:
        raise _fail(where, "controlProfile", "one of " + ", ".join(PROFILES))
    env = obj.get("env")
    if env is not None and not (
        isinstance(env, Mapping) and all(isinstance(v, str) for v in env.values())
    ):
        raise _fail(where, "env", "an object of strings")
    if "mcpServers" in obj:
        # DEC-CLI-3: the MCP and sandbox grammars load only for a source that has the block.
        from agentx.messages.mcp.config import McpConfigError, parse_servers  # noqa: PLC0415

        try:
            parse_servers(obj["mcpServers"])
        except McpConfigError as exc:
            raise SettingsError(f"{where}: {exc}") from None
    if any(key in obj for key in MCP_APPROVAL_KEYS):
        from agentx.messages.mcp.sources import check_approval_keys  # noqa: PLC0415

        problem = check_approval_keys(obj)
        if problem is not None:
            raise SettingsError(f"{where}: {problem}")
    if "sandbox" in obj:
        from agentx.messages.sandbox_policy import SandboxSettingsError, parse_sandbox  # noqa: PLC0415

        try:
            parse_sandbox(obj["sandbox"])
        except SandboxSettingsError as exc:
            raise SettingsError(f"{where}: {exc}") from None


def _validate_permissions(permissions: object, where: str) -> None:
    if not isinstance(permissions, Mapping):
        raise _fail(where, "permissions", "an object")
    for kind in RULE_LISTS:
        rules = permissions.get(kind)
        if rules is None:
            continue
        if not isinstance(rules, tuple) or not all(isinstance(r, str) for r in rules):
            raise _fail(where, f"permissions.{kind}", "an array of strings")
        for index, rule in enumerate(rules):
            _check_rule(rule, f"{where}: permissions.{kind}[{index}]")
    mode = permissions.get("defaultMode")
    if mode is not None and not is_mode(mode):
        raise _fail(where, "permissions.defaultMode", "one of " + ", ".join(MODES))


#: How much of a refused rule its error line quotes.
_RULE_SHOWN: Final = 80


def _check_rule(text: str, where: str) -> None:
    """DEC-SET-2: a rule that does not parse, or can match nothing, is refused
    with one line naming it and its source; never a silent no-op."""
    shown = repr(text if len(text) <= _RULE_SHOWN else text[:_RULE_SHOWN] + "...")
    try:
        problem = rule_problem(parse_rule(text))
    except RuleError:
        raise SettingsError(f"{where} must be a permission rule, not {shown}") from None
    if problem is not None:
        raise SettingsError(f"{where}: the rule {shown} can never match: {problem}")


def _validate_hooks(hooks: object, where: str) -> None:
    # Loaded only when a source defines hooks (DEC-CLI-3: start-up imports).
    from agentx.messages.hooks.config import HookConfigError, check_matcher  # noqa: PLC0415
    from agentx.messages.hooks.events import HOOK_EVENTS  # noqa: PLC0415

    if not isinstance(hooks, Mapping):
        raise _fail(where, "hooks", "an object")
    for event, groups in hooks.items():
        key = f"hooks.{event}"
        if event not in HOOK_EVENTS:
            # DEC-HOOK-1: a misspelt event would never run, without a word.
            raise _fail(where, key, "named after a hook event")
        if not isinstance(groups, tuple):
            raise _fail(where, key, "an array")
        for g, group in enumerate(groups):
            gkey = f"{key}[{g}]"
            if not isinstance(group, Mapping):
                raise _fail(where, gkey, "an object")
            try:
                check_matcher(group.get("matcher"), gkey)
            except HookConfigError as exc:
                raise SettingsError(f"{where}: {exc}") from None
            commands = group.get("hooks")
            if not isinstance(commands, tuple):
                raise _fail(where, f"{gkey}.hooks", "an array")
            for c, hook in enumerate(commands):
                _validate_hook(hook, where, f"{gkey}.hooks[{c}]")


#: The members of a command and of an http hook agentx applies; Claude
#: Code's ``statusMessage`` only labels a spinner, so it is accepted and unused.
_HOOK_MEMBERS = {
    "command": frozenset({"type", "command", "timeout", "async", "asyncRewake", "statusMessage"}),
    "http": frozenset({"type", "url", "headers", "allowedEnvVars", "timeout", "statusMessage"}),
}


def _validate_hook(hook: object, where: str, key: str) -> None:
    from agentx.messages.hooks.config import HookConfigError, check_timeout  # noqa: PLC0415

    if not isinstance(hook, Mapping) or not isinstance(hook.get("type"), str):
        raise _fail(where, key, 'an object with "type": "command" or "http"')
    kind = hook["type"]
    # DEC-HOOK-1: a member that would change when or what runs (Claude
    # Code's ``args``, ``if``, ``once``, ``shell``, ``onFailure``) is refused
    # by name, never ignored without a word.
    unknown = sorted(set(hook) - _HOOK_MEMBERS.get(kind, hook.keys()))
    if unknown:
        raise SettingsError(f"{where}: {key}.{unknown[0][:40]} is not supported by agentx")
    if kind == "http":
        _validate_http_hook(hook, where, key)
        return
    if kind != "command":
        # DEC-HOOK-1: Claude Code's "prompt" and "agent" hooks need a model call.
        raise SettingsError(f'{where}: {key}.type "{kind[:40]}" is not supported by agentx')
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _fail(where, f"{key}.command", "a non-empty string")
    try:
        check_timeout(hook.get("timeout"), key)
    except HookConfigError as exc:
        raise SettingsError(f"{where}: {exc}") from None
    for flag in ("async", "asyncRewake"):
        if not isinstance(hook.get(flag, False), bool):
            raise _fail(where, f"{key}.{flag}", "a boolean")


def _validate_http_hook(hook: Mapping[str, Any], where: str, key: str) -> None:
    """DECISIONS section 3: an http hook's url, headers, allowedEnvVars, timeout."""
    from agentx.messages.hooks.config import HookConfigError, check_timeout  # noqa: PLC0415
    from agentx.messages.hooks.http import check_url  # noqa: PLC0415

    problem = check_url(hook.get("url"))
    if problem is not None:
        raise _fail(where, f"{key}.url", problem.removeprefix("must be "))
    headers = hook.get("headers", FrozenDict())
    if not isinstance(headers, Mapping) or not all(
        isinstance(v, str) and "\n" not in v and "\r" not in v for v in headers.values()
    ):
        raise _fail(where, f"{key}.headers", "an object of one-line strings")
    allowed = hook.get("allowedEnvVars", ())
    if not isinstance(allowed, tuple) or not all(isinstance(n, str) for n in allowed):
        raise _fail(where, f"{key}.allowedEnvVars", "an array of strings")
    try:
        check_timeout(hook.get("timeout"), key)
    except HookConfigError as exc:
        raise SettingsError(f"{where}: {exc}") from None


# --- merge ----------------------------------------------------------------------


def _merge(base: Mapping[str, Any], top: Mapping[str, Any], *, path: str = "") -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        here = f"{path}.{key}" if path else key
        old = merged.get(key)
        # DEC-SET-2: a server of a later source replaces the whole entry.
        if isinstance(old, Mapping) and isinstance(value, Mapping) and path != "mcpServers":
            merged[key] = _merge(old, value, path=here)
        elif isinstance(old, tuple) and (
            here in {f"permissions.{k}" for k in RULE_LISTS} or path == "hooks"
        ):
            # DEC-SET-1 rule arrays; DEC-HOOK-1 each event's hook list.
            merged[key] = old + value
        else:
            merged[key] = value
    return merged


def merge_sources(sources: Iterable[Source]) -> FrozenDict:
    """The effective settings: recursive merge, later wins, rule arrays and
    each event's hook list concatenate."""
    merged: dict[str, Any] = {}
    for source in sources:
        merged = _merge(merged, source.settings)
    result: FrozenDict = freeze(merged)
    return result


class Settings(Struct, frozen=True, kw_only=True):
    """The ordered sources and their effective merge."""

    sources: tuple[Source, ...]
    effective: FrozenDict

    @property
    def rules(self) -> PermissionRules:
        """Every source's rules in source order (the concatenation of DEC-SET-1),
        each ``/`` and ``~/`` path pattern rooted for its source (DEC-PERM-PATH)."""
        home = _home()
        rules = PermissionRules()
        for source in self.sources:
            perms = source.settings.get("permissions", FrozenDict())
            rules += PermissionRules.parse(
                allow=perms.get("allow", ()),
                deny=perms.get("deny", ()),
                ask=perms.get("ask", ()),
                root=_root(source),
                home=home,
            )
        return rules

    @property
    def sandbox(self) -> SandboxSettings:
        """The merged ``sandbox`` block (each source was checked on load)."""
        from agentx.messages.sandbox_policy import SandboxSettingsError, parse_sandbox  # noqa: PLC0415

        try:
            return parse_sandbox(self.effective.get("sandbox"))
        except SandboxSettingsError as exc:
            raise SettingsError(f"settings: {exc}") from None

    @property
    def default_mode(self) -> Mode | None:
        mode = self.effective.get("permissions", FrozenDict()).get("defaultMode")
        return mode if is_mode(mode) else None

    @property
    def control_profile(self) -> str | None:
        """DEC-PROFILE-2: the ``controlProfile`` key (checked to be a profile)."""
        profile = self.effective.get("controlProfile")
        return profile if isinstance(profile, str) else None

    @property
    def env(self) -> FrozenDict:
        env: FrozenDict = self.effective.get("env", FrozenDict())
        return env

    @property
    def mcp_servers(self) -> FrozenDict:
        """DEC-SET-2: the merged ``mcpServers``, name -> server configuration.

        Raises :class:`SettingsError` when the merge names too many servers.
        With none configured the MCP grammar is not loaded (DEC-CLI-3).
        """
        servers = self.effective.get("mcpServers")
        if servers is None:
            return FrozenDict()
        from agentx.messages.mcp.config import McpConfigError, parse_servers  # noqa: PLC0415

        try:
            return parse_servers(servers)
        except McpConfigError as exc:
            raise SettingsError(f"settings: {exc}") from None

    @property
    def mcp_scopes(self) -> FrozenDict:
        """DEC-SET-1: each MCP server's scope, the source whose entry won (``mcp_status``)."""
        scopes = {
            name: source.name
            for source in self.sources
            for name in source.settings.get("mcpServers", FrozenDict())
        }
        return FrozenDict(scopes)

    @property
    def hooks(self) -> FrozenDict:
        """DEC-HOOK-1: the hooks that run (event -> matcher groups): every
        source's lists concatenated in source order, under ``disableAllHooks``
        as Claude Code reads it (see the module docstring)."""
        policy = [s for s in self.sources if s.name == "policy"]
        if any(s.settings.get("disableAllHooks") is True for s in policy):
            return FrozenDict()
        running = policy if self.effective.get("disableAllHooks") is True else self.sources
        merged: dict[str, Any] = {}
        for source in running:
            for event, groups in source.settings.get("hooks", FrozenDict()).items():
                merged[event] = merged.get(event, ()) + tuple(groups)
        hooks: FrozenDict = freeze(merged)
        return hooks

    def hooks_for(self, event: str, value: str) -> tuple[HookSpec, ...]:
        """The command hooks of ``event`` whose matcher selects ``value`` (DEC-HOOK-1)."""
        if not self.hooks:
            return ()
        from agentx.messages.hooks.config import select, settings_groups  # noqa: PLC0415

        return select(settings_groups(self.hooks), event, value)

    def apply_flag_settings(self, settings: Mapping[str, Any]) -> Settings:
        """Merge ``settings`` into the flag layer (``apply_flag_settings``, DEC-PROFILE-1).

        Raises :class:`SettingsError` when the object breaks the known keys' types.
        """
        frozen: FrozenDict = freeze(settings)
        _validate(frozen, "apply_flag_settings")
        if has_http_hook(frozen.get("hooks")):
            # DEC-AUTH-3: an http hook's header values join the credential
            # union before the first record; one added now could not.
            raise SettingsError("apply_flag_settings: http hooks come only from settings files")
        current = next((s for s in self.sources if s.name == "flag"), None)
        flag = Source(
            name="flag",
            path=INLINE if current is None else current.path,
            settings=freeze(_merge(current.settings if current else {}, frozen)),
        )
        others = [s for s in self.sources if s.name != "flag"]
        position = next((i for i, s in enumerate(others) if s.name == "policy"), len(others))
        sources = (*others[:position], flag, *others[position:])
        return Settings(sources=sources, effective=merge_sources(sources))


def has_http_hook(hooks: object) -> bool:
    """Does a ``hooks`` object define an http hook (DECISIONS section 3)?"""
    if not isinstance(hooks, Mapping):
        return False
    return any(
        isinstance(hook, Mapping) and hook.get("type") == "http"
        for groups in hooks.values()
        for group in groups
        for hook in group.get("hooks", ())
    )


def _root(source: Source) -> str | None:
    """Where a ``/`` path pattern of ``source`` is rooted, as Claude Code roots
    it: the folder of the user settings file; the project (the session cwd,
    ``None``) for the project, local, flag and policy sources."""
    if source.name == "user":
        return str(Path(source.path).parent)
    if source.name in ("project", "local"):
        return str(Path(source.path).parent.parent)
    return None


def _home() -> str | None:
    """The home directory a ``~/`` path pattern names."""
    try:
        return str(Path.home())
    except RuntimeError:  # no HOME and no passwd entry: ``~/`` rules fail closed
        return None


def _flag_source(
    flag: str | None, allowed_tools: Sequence[str], disallowed_tools: Sequence[str]
) -> Source | None:
    settings: FrozenDict = FrozenDict()
    path = INLINE
    if flag is not None:
        if flag.lstrip().startswith("{"):
            settings = _decode(flag, "--settings")
        else:
            path = flag
            settings = _read_required(Path(flag))
    extra = {
        kind: tuple(rules)
        for kind, rules in (("allow", allowed_tools), ("deny", disallowed_tools))
        if rules
    }
    for kind, rules in extra.items():
        for rule in rules:
            _check_rule(rule, "--allowedTools" if kind == "allow" else "--disallowedTools")
    if extra:
        settings = freeze(_merge(settings, {"permissions": extra}))
    if flag is None and not extra:
        return None
    return Source(name="flag", path=path, settings=settings)


def load_settings(
    *,
    home: Path,
    cwd: Path,
    flag: str | None = None,
    policy_path: str | None = None,
    sources: Iterable[str] = FILE_SOURCES,
    allowed_tools: Sequence[str] = (),
    disallowed_tools: Sequence[str] = (),
) -> Settings:
    """Read every source of DEC-SET-1 and merge them.

    ``sources`` is ``--setting-sources``: which of user/project/local load
    (all by default); the flag and policy sources always apply.
    """
    wanted = set(sources)
    unknown = sorted(wanted - FILE_SOURCES)
    if unknown:
        raise SettingsError(f"--setting-sources: unknown source {unknown[0]!r}")
    candidates: tuple[tuple[SourceName, Path], ...] = (
        ("user", home / "settings.json"),
        # Claude Code's project and local files load too, each just below
        # agentx's own file of the same source (which wins on a conflict).
        ("project", cwd / ".claude" / "settings.json"),
        ("project", cwd / ".agentx" / "settings.json"),
        ("local", cwd / ".claude" / "settings.local.json"),
        ("local", cwd / ".agentx" / "settings.local.json"),
    )
    loaded: list[Source] = []
    for name, path in candidates:
        if name in wanted:
            settings = _read_optional(path)
            if settings is not None:
                loaded.append(Source(name=name, path=str(path), settings=settings))
    flag_source = _flag_source(flag, allowed_tools, disallowed_tools)
    if flag_source is not None:
        loaded.append(flag_source)
    if policy_path:
        policy = _read_required(Path(policy_path))
        loaded.append(Source(name="policy", path=policy_path, settings=policy))
    ordered = tuple(loaded)
    return Settings(sources=ordered, effective=merge_sources(ordered))
