"""The turn engine's two MCP hooks (DEC-SET-2, WIRE-022): live tools, fixed per model
call, and provider-only images that follow the tool results in history."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from agentx.messages.frozen import FrozenDict
from agentx.providers.base import (
    Block,
    CancelToken,
    MediaBlock,
    ModelRequest,
    StreamItem,
    TextBlock,
    ToolResultBlock,
)
from agentx.providers.scripted import ScriptedClient, parse_script_document
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import EngineConfig, EnginePorts, PolicyDecision, TurnInput
from agentx.turns.engine import TurnEngine
from tests.unit.turns.engine_rig import (
    ALLOW,
    EchoTool,
    FutureGate,
    RulePolicy,
    Sink,
    StateLog,
)

PNG = b"\x89PNG\r\n\x1a\n"


class Recording:
    """The scripted provider, remembering which tools each request offered."""

    def __init__(self, *turns: dict[str, Any]) -> None:
        data = json.dumps({"version": 1, "turns": list(turns)}).encode()
        self._inner = ScriptedClient(model="m", turns=parse_script_document(data).turns)
        self.offered: list[list[str]] = []

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        self.offered.append([spec.name for spec in request.tools])
        return self._inner.stream(request, cancel)


def engine(provider: Recording, live: list[Any], media: dict[str, tuple[Block, ...]]) -> TurnEngine:
    counter = itertools.count(1)
    return TurnEngine(
        config=EngineConfig(session_id="s", model="m", pricing=None),
        provider=provider,
        tools=(EchoTool("Builtin"),),
        policy=RulePolicy({"mcp__s__late": ALLOW, "mcp__s__pic": ALLOW}),
        ports=EnginePorts(
            gate=FutureGate(),
            state=StateLog(),
            emit=Sink().emit,
            new_uuid=lambda: f"id-{next(counter)}",
            live_tools=lambda: tuple(live),
            tool_media=lambda tool_use_id: media.pop(tool_use_id, ()),
        ),
    )


def turn(text: str) -> TurnInput:
    return TurnInput(uuid=None, content=(TextBlock(text=text),))


def tool_use(name: str) -> dict[str, Any]:
    return {"steps": [{"tool_use": {"name": name, "input": {"text": "x"}}}]}


def test_live_tools_are_read_before_every_model_call() -> None:
    provider = Recording(
        tool_use("mcp__s__late"),
        {"steps": [{"text": "a"}]},
        tool_use("mcp__s__late"),
        {"steps": [{"text": "b"}]},
    )
    live: list[Any] = []
    eng = engine(provider, live, {})
    eng.run_turn(turn("one"), CancelScope())
    late = EchoTool("mcp__s__late")
    live.append(late)
    eng.run_turn(turn("two"), CancelScope())
    assert provider.offered == [
        ["Builtin"],
        ["Builtin"],
        ["Builtin", "mcp__s__late"],
        ["Builtin", "mcp__s__late"],
    ]
    (refused,) = eng.history[2].content
    assert isinstance(refused, ToolResultBlock) and refused.is_error
    assert refused.content == "No such tool available: mcp__s__late"
    assert late.ran == [FrozenDict(text="x")]


def test_images_follow_the_tool_results_in_history() -> None:
    class Picture(EchoTool):
        def execute(
            self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
        ) -> tuple[str, bool]:
            media[tool_use_id] = (
                MediaBlock(
                    kind="image",
                    mime_type="image/png",
                    name=f"{tool_use_id}-1",
                    data=PNG,
                    sha256="0" * 64,
                    size_bytes=len(PNG),
                ),
            )
            return "[image: image/png, 8 bytes]", False

    media: dict[str, tuple[Block, ...]] = {}
    provider = Recording(tool_use("mcp__s__pic"), {"steps": [{"text": "seen"}]})
    eng = engine(provider, [Picture("mcp__s__pic")], media)
    eng.run_turn(turn("draw"), CancelScope())
    result, image = eng.history[2].content
    assert isinstance(result, ToolResultBlock) and result.content == "[image: image/png, 8 bytes]"
    assert isinstance(image, MediaBlock) and image.name == f"{result.tool_use_id}-1"
    assert media == {}


def test_without_hooks_the_engine_offers_only_its_tools() -> None:
    provider = Recording({"steps": [{"text": "hi"}]})
    counter = itertools.count(1)
    eng = TurnEngine(
        config=EngineConfig(session_id="s", model="m", pricing=None),
        provider=provider,
        tools=(EchoTool("Builtin"),),
        policy=RulePolicy({"Builtin": PolicyDecision(behavior="allow", source="rule")}),
        ports=EnginePorts(
            gate=FutureGate(),
            state=StateLog(),
            emit=Sink().emit,
            new_uuid=lambda: f"id-{next(counter)}",
        ),
    )
    eng.run_turn(turn("hi"), CancelScope())
    assert provider.offered == [["Builtin"]]
