"""The text a hook injects into Claude's context, and the recall-context prompt's: memories
rendered as recall renders them (render.render_memory, quoted as data), within a token budget.

A text is None when nothing qualifies: no memory, or none that fits. Every text stays under
server/budget.py's CONTEXT_CHARS_MAX characters, whatever the budget (docs/hooks.md#budget).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp_memory.core.digest import DIGEST_SCAN, DigestResult, estimate_tokens
from mcp_memory.core.model import Memory
from mcp_memory.core.service import ActionResult, RecallResult
from mcp_memory.server.budget import CONTEXT_CHARS_MAX, STOP_PREFIX
from mcp_memory.server.protocol.quoting import echoed
from mcp_memory.server.protocol.render import GUIDANCE, MEDIUM_GUIDANCE, NOTES_ARE_DATA, PREFIX, render_memory

#: The digest's last line: how to find what it left out.
RECALL_MORE = (
    "To find more, call the memory server's recall tool with a question; list_memories shows the newest memories."
)


def _fit(
    head: Sequence[str],
    tail: Sequence[str],
    items: Sequence[tuple[Memory, float | None]],
    budget: int,
    newer: Mapping[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """The memory blocks that fit `budget` tokens beside `head` and `tail`, in order; a memory too
    large to fit is passed over for the next one. `newer` maps a memory to a newer near one, marked
    as recall marks it (core/supersede.py)."""
    used_tokens = estimate_tokens("\n".join([*head, "", "", *tail]))
    used_chars = sum(len(line) + 1 for line in (*head, "", *tail))
    blocks: list[str] = []
    ids: list[str] = []
    for memory, standing in items:
        block = render_memory(memory, len(blocks) + 1, standing, superseded_by=(newer or {}).get(memory.id))
        tokens, chars = estimate_tokens(block) + 1, len(block) + 1
        if used_tokens + tokens > budget or used_chars + chars > CONTEXT_CHARS_MAX:
            continue
        blocks.append(block)
        ids.append(memory.id)
        used_tokens += tokens
        used_chars += chars
    return blocks, ids


def _memories(n: int) -> str:
    return "memory" if n == 1 else "memories"


def digest_text(
    result: DigestResult, budget: int, exclude: frozenset[str] = frozenset(), *, topic: str | None = None
) -> tuple[str | None, list[str]]:
    """The digest as injected text, and the ids it holds (docs/hooks.md#the-digest)."""
    items = [(m, None) for m in result.memories if m.id not in exclude]
    if not items:
        return None, []
    # the header's count is not known until the blocks are chosen: size it for the widest count
    probe = _digest_header(result, 9999, topic)
    blocks, ids = _fit([probe, NOTES_ARE_DATA], [RECALL_MORE], items, budget, result.superseded_by)
    if not blocks:
        return None, []
    header = _digest_header(result, len(blocks), topic)
    return "\n".join([header, NOTES_ARE_DATA, "", *blocks, "", RECALL_MORE]), ids


def _digest_header(result: DigestResult, n: int, topic: str | None) -> str:
    newest = " newest" if result.weighed >= DIGEST_SCAN else ""
    chosen = f"{n} of the {result.weighed}{newest} {_memories(result.weighed)}"
    rules = "its rules (tagged rule) first, then " if result.rules else ""
    if topic is not None and result.topical:
        return f"{PREFIX} What this project remembers: {chosen}, {rules}those about {echoed(topic)} first."
    return f"{PREFIX} What this project remembers: {chosen}, {rules}the most trusted and recently used first."


#: What a tool hook's text is about, by the kind of call (core/actions.py).
_CONCERNS = {
    "file": ("concerns this file", "concern this file"),
    "command": ("concerns this command", "concern this command"),
    "failure": ("may explain this failure", "may explain this failure"),
}
TOOL_GUIDANCE = (
    "They were stored for what this call touches, or recall found them for it: weigh them before "
    "your next step, and say so when you act against one."
)


#: What the agent is told when a memory stops its call (docs/hooks.md#stopped-before-it-runs).
STOP_GUIDANCE = (
    "The call was not run. Weigh what is below first; if the call is still right, make it again: "
    "a memory stops a call once a session."
)
#: Claude Code keeps a permission decision's reason to 2,000 UTF-16 code units and 20 lines (its
#: hook output limits, 2.1.328): a stop's text stays within both, or the call is not stopped.
STOP_UNITS_MAX = 2000
STOP_LINES_MAX = 20


def tool_text(
    result: ActionResult,
    budget: int,
    limit: int,
    min_confidence: str,
    exclude: frozenset[str] = frozenset(),
    stop: str = "off",
) -> tuple[str | None, list[str]]:
    """What memory holds about a tool call as injected text (docs/hooks.md#at-the-moment-of-action):
    the memories tagged for its files or naming what it touches, and recall's results at the
    prompts' rule; none this session was already shown, `limit` at most within `budget`. When one
    of them stops the call under `stop` (MEMORY_HOOK_STOP, core/actions.py `stops`) and the call is
    one a memory may stop, the text is a stop's (it begins with STOP_PREFIX)."""
    chosen = result.chosen(exclude, limit, min_confidence)
    if not chosen:
        return None, []
    newer = {r.memory.id: r.superseded_by for r in result.recalled.results if r.superseded_by}
    one, many = _CONCERNS[result.action.kind]
    if stop != "off" and _actions().stoppable(result.action):
        stopped = _stop_text(result, [m for m, _ in chosen], budget, newer, stop)
        if stopped[0] is not None:
            return stopped
    probe = f"{PREFIX} {limit} memories stored earlier {many}."
    blocks, ids = _fit([probe, TOOL_GUIDANCE, NOTES_ARE_DATA], [], [(m, None) for m, _ in chosen], budget, newer)
    if not blocks:
        return None, []
    n = len(blocks)
    header = f"{PREFIX} {n} {_memories(n)} stored earlier {one if n == 1 else many}."
    return "\n".join([header, TOOL_GUIDANCE, NOTES_ARE_DATA, "", *blocks]), ids


def _actions() -> Any:
    from mcp_memory.core import actions  # at the first tool question: the handshake loads no more

    return actions


def _stop_text(
    result: ActionResult, chosen: Sequence[Memory], budget: int, newer: Mapping[str, str], stop: str
) -> tuple[str | None, list[str]]:
    """The chosen memories as the reason a call is stopped, within `budget` tokens and Claude Code's
    limits on a reason; None when no memory that stops the call fits (the call then gets context)."""
    one, many = _CONCERNS[result.action.kind]

    def text_of(blocks: Sequence[str]) -> str:
        n = len(blocks)
        header = f"{STOP_PREFIX} {n} {_memories(n)} stored earlier {one if n == 1 else many}."
        return "\n".join([header, STOP_GUIDANCE, NOTES_ARE_DATA, "", *blocks])

    blocks: list[str] = []
    kept: list[Memory] = []
    for memory in chosen:
        block = render_memory(memory, len(blocks) + 1, None, superseded_by=newer.get(memory.id))
        text = text_of([*blocks, block])
        units = len(text.encode("utf-16-le")) // 2
        if estimate_tokens(text) > budget or units > STOP_UNITS_MAX or text.count("\n") + 1 > STOP_LINES_MAX:
            continue
        blocks.append(block)
        kept.append(memory)
    if not any(_actions().stops(m.content, m.tags, stop, result.action) for m in kept):
        return None, []
    return text_of(blocks), [m.id for m in kept]


def prompt_text(
    result: RecallResult, budget: int, limit: int, min_confidence: str, exclude: frozenset[str] = frozenset()
) -> tuple[str | None, list[str]]:
    """What recall found for a prompt as injected text, only when it is worth injecting at
    `min_confidence` (RecallResult.worth_injecting: by default its probability reaches the hooks'
    threshold), with the guidance of its band, without the memories this session was already shown."""
    if not result.worth_injecting(min_confidence):
        return None, []
    items: list[tuple[Memory, float | None]] = []
    for r in result.results:
        if r.memory.id not in exclude and len(items) < limit:
            items.append((r.memory, r.standing))
    if not items:
        return None, []
    guidance = GUIDANCE.get(result.confidence, MEDIUM_GUIDANCE)
    probe = f"{PREFIX} {limit} memories stored earlier match this prompt."
    newer = {r.memory.id: r.superseded_by for r in result.results if r.superseded_by}
    blocks, ids = _fit([probe, guidance, NOTES_ARE_DATA], [], items, budget, newer)
    if not blocks:
        return None, []
    n = len(blocks)
    header = f"{PREFIX} {n} {_memories(n)} stored earlier {'matches' if n == 1 else 'match'} this prompt."
    return "\n".join([header, guidance, NOTES_ARE_DATA, "", *blocks]), ids
