"""``@file`` mentions read into the prompt (DEC-PROFILE-2, DEC-PERM-PATH).

The ``sdk`` profile's prompts (unless ``client_composed``) have each file
they mention (:func:`agentx.messages.mentions.mentioned_paths`) read as
Claude Code reads them: through the session's Read tool and its permission
path. A mention is read only when the policy allows that Read without
asking (inside the working directories after symlinks, no deny or ask
rule) and no deny rule refuses it right before it runs (DEC-SET-1); a
mention of a denied or outside path, a link out, a folder or a file Read
cannot read stays plain text and nobody is asked. Each read file follows
the prompt as one text block.
"""

from __future__ import annotations

from agentx.messages.frozen import freeze
from agentx.providers.base import Block, TextBlock
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionPolicy, ToolRunner


def read_mentions(
    content: tuple[Block, ...],
    *,
    read: ToolRunner | None,
    policy: PermissionPolicy,
    scope: CancelScope,
) -> tuple[Block, ...]:
    """The attachments of the files ``content``'s text mentions (none
    without a Read tool: a session that removed it reads nothing)."""
    text = "\n".join(block.text for block in content if isinstance(block, TextBlock))
    if read is None or "@" not in text:
        return ()
    # DEC-CLI-3: the mention grammar loads with the first prompt that has an "@".
    from agentx.messages.mentions import attachment_text, mentioned_paths  # noqa: PLC0415

    attached: list[Block] = []
    for number, path in enumerate(mentioned_paths(text)):
        tool_input = freeze({"file_path": path})
        if policy.evaluate(read, tool_input).behavior != "allow":
            continue
        if policy.denied_before_run(read, tool_input) is not None:
            continue
        result, is_error = read.execute(tool_input, scope, tool_use_id=f"mention_{number}")
        if not is_error:
            attached.append(TextBlock(text=attachment_text(path, result)))
    return tuple(attached)
