"""The ``agentx sessions`` command line: options, help and the stores it opens
(DEC-STORE-5, DECISIONS section 8).

Each subcommand declares the options it takes; ``--name VALUE`` and
``--name=VALUE`` are the same, an unknown option is named in the error, and
a value is never repeated in a message (it may be a store URL with a
password, DEC-AUTH-3).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from msgspec import Struct, field

from agentx.config.home import agentx_home, os_error_line
from agentx.media.blobs import Blobs
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionError
from agentx.sessions.store.select import existing_store, open_blobs, open_store, store_url

_OPTION_NAME = re.compile(r"--?[a-z][a-z0-9-]{0,40}")


class CommandError(Exception):
    """One line for stderr; exit 2."""


class Options(Struct, frozen=True):
    """A subcommand's parsed arguments."""

    values: dict[str, str] = field(default_factory=dict)
    positional: tuple[str, ...] = ()

    def get(self, name: str) -> str | None:
        return self.values.get(name)


def parse(command: str, args: Sequence[str], names: Mapping[str, str]) -> Options:
    """``args`` of ``sessions COMMAND``; ``names`` maps each option to what its
    value is called in messages."""
    found: dict[str, str] = {}
    rest: list[str] = []
    items = iter(args)
    for arg in items:
        if arg.startswith("-") and arg != "-":
            name = arg.partition("=")[0]
            if name not in names:
                shown = (
                    name if name.startswith("--") and name[2:].replace("-", "").isalnum() else "an"
                )
                raise CommandError(
                    f"sessions {command}: unknown option {shown}"
                    f" (see agentx sessions {command} --help)"
                )
            if name in found:
                raise CommandError(f"sessions {command}: {name} is given twice")
            value = arg.partition("=")[2] if "=" in arg else next(items, None)
            if not value:
                raise CommandError(f"sessions {command}: {name} needs {names[name]}")
            found[name] = value
        else:
            rest.append(arg)
    return Options(values=found, positional=tuple(rest))


def _failed(exc: Exception) -> CommandError:
    if isinstance(exc, SessionError):
        return CommandError(f"session store: {exc}")
    assert isinstance(exc, OSError)
    return CommandError(f"session store: {os_error_line(exc)}")


def store_of(
    url: str | None, environ: Mapping[str, str], *, read_only: bool
) -> SessionStore | None:
    """The store ``url`` names (else ``AGENTX_SESSION_STORE``, else the home's
    files). Read only: nothing is created, and None means the home has no
    sessions yet."""
    chosen = store_url(url, environ)
    try:
        if read_only:
            return existing_store(chosen, agentx_home(environ))
        return open_store(chosen, agentx_home(environ))
    except (SessionError, OSError) as exc:
        raise _failed(exc) from None


def blobs_of(url: str, environ: Mapping[str, str]) -> Blobs:
    try:
        return open_blobs(store_url(url, environ), agentx_home(environ))
    except (SessionError, OSError) as exc:
        raise _failed(exc) from None


__all__ = ["CommandError", "Options", "blobs_of", "parse", "store_of"]
