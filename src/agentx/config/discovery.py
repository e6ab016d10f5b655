"""Prelaunch provider discovery: ``agentx --list-providers`` (WIRE-026).

One ordinary document on stdout, never the NDJSON protocol: no init record,
no provider or session construction. JSON output is
``{"version":1,"providers":[...]}`` plus a newline, every element in the
closed WIRE-024 shape with ``selected: false``. The exact final bytes are
checked against the complete credential union (DEC-AUTH-3) before the first
write; any registry, projection or safety failure writes nothing to stdout
and exits 2 with a credential-free stderr diagnostic (DECISIONS section 8).
A writer failure exits 3 (the output failure status) without retry.

This path imports no pykka, Pillow, pypdf or httpx: it only reads auth.json.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from agentx.config.catalog import assert_catalog_safe, providers_catalog
from agentx.config.env_registry import environment_secrets, resolve_registry
from agentx.config.home import agentx_home
from agentx.config.registry import (
    RegistryError,
    credential_literals,
    literal_members,
    routing_literals,
)
from agentx.messages.encode import encode_record
from agentx.messages.guard import CredentialValidator

OutputFormat = Literal["text", "json"]

#: The discovery document's own version; auth.json's version 2 is another protocol.
DISCOVERY_VERSION = 1
USAGE = "usage: agentx --list-providers [--output-format text|json] [--]"
EXIT_OK = 0
EXIT_USAGE_OR_REGISTRY = 2
EXIT_OUTPUT_FAILED = 3

_FORMATS: Mapping[str, OutputFormat] = {"text": "text", "json": "json"}
_SELECTOR = "--list-providers"
_FORMAT_OPTION = "--output-format"


class UsageError(ValueError):
    """The command line is outside the grammar (DEC-CLI-4: exit 2, nothing on stdout).

    The message names the offending option but never echoes an operand,
    which could be a prompt or a secret.
    """


def _unexpected(arg: str, index: int) -> str:
    name = arg.partition("=")[0]
    if name.startswith("-") and name.lstrip("-").replace("-", "").isalnum():
        return f"{name} is not accepted with {_SELECTOR}"
    return f"unexpected argument {index + 1}"


def parse_list_providers_args(args: Sequence[str]) -> OutputFormat:
    """Parse the WIRE-026 grammar; ``args`` excludes the program name.

    ``--list-providers`` is required, ``--output-format text|json`` (or
    ``--output-format=json``) is optional, each at most once and in either
    order; a bare ``--`` is accepted only as the last argument. Anything else,
    ``--help``, ``--version`` and a prompt included, raises :class:`UsageError`.
    The default format is ``text`` (DEC-CLI-2).
    """
    selector = False
    output: OutputFormat | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            if index != len(args) - 1:
                raise UsageError("-- must be the last argument")
        elif arg == _SELECTOR:
            if selector:
                raise UsageError(f"{_SELECTOR} given twice")
            selector = True
        elif arg == _FORMAT_OPTION or arg.startswith(f"{_FORMAT_OPTION}="):
            if output is not None:
                raise UsageError(f"{_FORMAT_OPTION} given twice")
            if arg == _FORMAT_OPTION:
                if index + 1 == len(args):
                    raise UsageError(f"{_FORMAT_OPTION} needs a value")
                index += 1
                value = args[index]
            else:
                value = arg.partition("=")[2]
            if value not in _FORMATS:
                raise UsageError(f"{_FORMAT_OPTION} must be text or json")
            output = _FORMATS[value]
        else:
            raise UsageError(_unexpected(arg, index))
        index += 1
    if not selector:
        raise UsageError(f"{_SELECTOR} is required")
    return output or "text"


def render_json(catalog: list[dict[str, Any]]) -> bytes:
    """The version-1 discovery document and its newline (WIRE-026)."""
    return encode_record({"version": DISCOVERY_VERSION, "providers": catalog})


def render_text(catalog: list[dict[str, Any]]) -> bytes:
    """A readable table: id, type, model, default, efforts (the default effort marked ``*``)."""
    rows = [("ID", "TYPE", "MODEL", "DEFAULT", "EFFORTS")]
    for element in catalog:
        efforts = [
            f"{effort}*" if effort == element["defaultReasoningEffort"] else effort
            for effort in element["supportedReasoningEfforts"]
        ]
        rows.append(
            (
                element["id"],
                element["providerType"],
                element["model"],
                "yes" if element["default"] else "no",
                " ".join(efforts) or "-",
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = (
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
    return "".join(f"{line}\n" for line in lines).encode("utf-8")


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"agentx: {message}\n")
    return status


def run_list_providers(
    args: Sequence[str], *, env: Mapping[str, str], write: Callable[[bytes], None]
) -> int:
    """Run prelaunch discovery and return the exit status (WIRE-026, DECISIONS section 8).

    ``write`` receives the whole document at once, only after it passed the
    credential check; it is called at most once.
    """
    try:
        output = parse_list_providers_args(args)
    except UsageError as exc:
        return _fail(f"{exc}\n{USAGE}", EXIT_USAGE_OR_REGISTRY)
    try:
        # DEC-AUTH-4: the implicit registry of the environment is listed too.
        registry = resolve_registry(agentx_home(env), env)
        # DEC-AUTH-3a: the catalog carries neither secrets nor routing data.
        literals = (
            credential_literals(registry) | routing_literals(registry) | environment_secrets(env)
        )
        catalog = providers_catalog(registry, None)
        assert_catalog_safe(
            {"version": DISCOVERY_VERSION, "providers": catalog},
            literals,
            literal_members(registry),
        )
    except RegistryError as exc:
        return _fail(str(exc), EXIT_USAGE_OR_REGISTRY)
    document = render_json(catalog) if output == "json" else render_text(catalog)
    if not CredentialValidator(literals).check(document):
        return _fail("provider list would disclose credential material", EXIT_USAGE_OR_REGISTRY)
    try:
        write(document)
    except Exception:  # a writer failure is never formatted (WIRE-015) nor retried
        return _fail("writing the provider list to stdout failed", EXIT_OUTPUT_FAILED)
    return EXIT_OK
