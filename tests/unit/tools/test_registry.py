"""The built-in tools offered (DEC-CLI-5 ``--tools``)."""

from __future__ import annotations

import ast
import subprocess
import sys
import threading

import pytest

from agentx.tools.registry import (
    BUILTIN,
    BUILTIN_NAMES,
    BUILTIN_TOOLS,
    BuiltinTool,
    LazyTool,
    UnknownToolError,
    builtin_tools,
)


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


#: Run in a fresh interpreter: which tool modules a selection, its names, its
#: specs and a first use import.
LAZY = """
import sys
from agentx.tools.registry import BUILTIN, builtin_tools
tools = builtin_tools(None)
names = [t.name for t in tools]
modules = sorted({e.module for e in BUILTIN})
before = [m for m in modules if m in sys.modules]
loaded_before = [t.loaded for t in tools]
spec_names = [t.spec.name for t in tools]
offered = [m for m in modules if m in sys.modules]
read = next(t for t in tools if t.name == "Read")
summary = read.summarize({"file_path": "a.txt"})
after = [m for m in modules if m in sys.modules]
print(repr((names, before, loaded_before, spec_names, offered, summary, after,
            [t.loaded for t in tools])))
"""


def test_no_tool_module_loads_until_the_tool_is_used() -> None:
    """DEC-CLI-3: the registry, a selection and every tool's spec import no
    tool; the first use of Read imports its module alone and builds Read alone."""
    done = subprocess.run(
        [sys.executable, "-c", LAZY], capture_output=True, timeout=60, check=True, text=True
    )
    names, before, loaded_before, spec_names, offered, summary, after, loaded_after = (
        ast.literal_eval(done.stdout)
    )
    assert names == list(BUILTIN_NAMES)
    assert before == []
    assert loaded_before == [False] * len(BUILTIN_NAMES)
    assert spec_names == list(BUILTIN_NAMES)
    assert offered == []  # every spec offered, no tool module loaded
    assert summary == "Read a.txt"
    assert after == ["agentx.tools.files"]
    assert loaded_after == [name == "Read" for name in BUILTIN_NAMES]


@pytest.mark.parametrize("entry", BUILTIN, ids=[e.name for e in BUILTIN])
def test_each_entry_names_its_class_and_the_class_carries_the_name(entry: BuiltinTool) -> None:
    tool = LazyTool(entry)
    assert tool.spec.name == entry.name  # the model is offered what system/init lists
    assert tool.load() is tool.load()  # built once
    assert tool.load().name == entry.name


def test_an_entry_whose_class_has_another_name_fails_loudly() -> None:
    wrong = LazyTool(BuiltinTool("Read", "agentx.tools.files", "WriteTool"))
    with pytest.raises(RuntimeError, match="is named 'Write', the registry says 'Read'"):
        wrong.load()
    assert not wrong.loaded


def test_optional_attributes_are_the_loaded_tools() -> None:
    """``getattr`` probes (``named_paths``, ``network_target``) see the tool's own."""
    by_name = {t.name: t for t in BUILTIN_TOOLS}
    assert getattr(by_name["Bash"], "named_paths", None) is None
    assert callable(by_name["Read"].named_paths)
    assert by_name["WebFetch"].network_target({"url": "https://example.org/x"}) == (
        "example.org",
        443,
    )
    with pytest.raises(AttributeError):
        _ = by_name["Read"].no_such_attribute


def test_one_tool_loads_once_across_threads() -> None:
    tool = LazyTool(BuiltinTool("Grep", "agentx.tools.search", "GrepTool"))
    barrier = threading.Barrier(8)
    seen: list[object] = []

    def use() -> None:
        barrier.wait(timeout=30)
        seen.append(tool.load())

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(seen) == 8
    assert all(s is seen[0] for s in seen)
