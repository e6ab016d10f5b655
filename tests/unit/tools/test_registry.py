"""The built-in tools offered (DEC-CLI-5 ``--tools``)."""

from __future__ import annotations

import pytest

from agentx.tools.registry import BUILTIN_NAMES, BUILTIN_TOOLS, UnknownToolError, builtin_tools


def test_default_offers_every_builtin_tool() -> None:
    """``--tools default`` (the Python Agent SDK's tools preset) is all of them."""
    assert builtin_tools(["default"]) == BUILTIN_TOOLS
    assert builtin_tools(None) == BUILTIN_TOOLS


def test_default_beside_a_name_is_an_unknown_tool() -> None:
    with pytest.raises(UnknownToolError, match="'default'"):
        builtin_tools(["default", "Read"])


def test_named_and_empty() -> None:
    assert [t.name for t in builtin_tools(["Read"])] == ["Read"]
    assert builtin_tools([]) == ()
    assert "Bash" in BUILTIN_NAMES
