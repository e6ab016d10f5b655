"""The control profiles and how one is chosen (DEC-PROFILE-1, DEC-PROFILE-2).

Sans-IO and import-free (it is on the start path): the CLI, the settings
check and the dispatcher share these names.
"""

from __future__ import annotations

from typing import Final, Literal

Profile = Literal["standalone", "extended", "sdk"]
#: The profiles in the order they extend one another: ``extended`` adds rows
#: to ``standalone``, ``sdk`` adds rows to ``extended``.
PROFILES: Final[tuple[Profile, ...]] = ("standalone", "extended", "sdk")
_BY_NAME: Final[dict[str, Profile]] = {name: name for name in PROFILES}
#: DEC-PROFILE-2: the prefix of ``CLAUDE_CODE_ENTRYPOINT`` the Agent SDKs set
#: (``sdk-py`` by the Python SDK, ``sdk-ts`` by the TypeScript SDK).
SDK_ENTRYPOINT_PREFIX: Final = "sdk-"


def choose_profile(flag: str | None, setting: str | None, entrypoint: str | None) -> Profile:
    """``--control-profile``, else the ``controlProfile`` setting, else
    ``sdk`` when an Agent SDK started the host, else ``standalone``.

    Raises ValueError for a name that is not a profile (the CLI and the
    settings check reject one before this runs).
    """
    for chosen in (flag, setting):
        if chosen is not None:
            try:
                return _BY_NAME[chosen]
            except KeyError:
                raise ValueError(f"{chosen!r} is not a control profile") from None
    if entrypoint is not None and entrypoint.startswith(SDK_ENTRYPOINT_PREFIX):
        return "sdk"
    return "standalone"
