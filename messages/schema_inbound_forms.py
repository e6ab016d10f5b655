"""JSON Schema building blocks of the published inbound schema: the ``$defs``
namespace, references into it, string grammars and open envelopes. Closed
objects are :func:`agentx.messages.closed.closed_schema`.
"""

from __future__ import annotations

from typing import Any

#: The namespace of every inbound definition in the document's ``$defs``.
PREFIX = "inbound."

STRING: dict[str, Any] = {"type": "string"}
OBJECT: dict[str, Any] = {"type": "object"}
JSON_TYPE = {str: "string", bool: "boolean"}


def ref(name: str) -> dict[str, str]:
    """A reference to the inbound definition ``name`` (without the prefix)."""
    return {"$ref": f"#/$defs/{PREFIX}{name}"}


def grammar(grammar: str) -> dict[str, Any]:
    """A string matching the decoder's grammar in full. The end is a lookahead
    for no further character: ``$`` would let Python's ``re`` (which
    ``jsonschema`` uses) accept a trailing newline that ``fullmatch`` refuses."""
    return {"type": "string", "pattern": f"^(?:{grammar})(?![\\s\\S])"}


def open_record(type_: str, **members: Any) -> dict[str, Any]:
    """An envelope the decoder routes by ``type`` and reads only ``members`` of."""
    return {
        "type": "object",
        "properties": {"type": {"const": type_}, **members},
        "required": ["type", *members],
    }
