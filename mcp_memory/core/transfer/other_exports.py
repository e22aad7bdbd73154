"""Export to other formats, so that leaving is as easy as arriving (docs/import_formats.md#export):

- `markdown`: readable, one section per tenant, grouped by type and then by tags, one bullet
  per memory ending with the date it was stored and its id (` — 2026-07-01 · 01J…`), which
  `import --from text` reads back.
- `mcp-knowledge-graph`: the MCP reference memory server's memory.jsonl. A memory is an
  observation of the entity its category names (its type when it has none), the entity's type
  its first tag; a leading `<entity>: ` is taken off the observation. A memory tagged
  `relation` whose text is `<from> <category> <to>` is a relation. This is what
  `import --from mcp-knowledge-graph` writes, so a graph goes round unchanged.

Both hold a tenant's memories in memory to group them (the JSONL export streams instead).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from mcp_memory.core.model import MEMORY_TYPES, Memory
from mcp_memory.core.transfer.bulk import IMPORTED_TAG, SOURCE_TAG
from mcp_memory.core.transfer.formats.knowledge_graph import RELATION_TAG
from mcp_memory.core.transfer.formats.text import EXPORT_MARK, NO_TAGS

__all__ = ["knowledge_graph_lines", "markdown_lines"]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def markdown_lines(tenant: str, memories: Sequence[Memory], exported_at: str) -> list[str]:
    """One tenant's memories as Markdown lines (each without its line break)."""
    lines = [
        f"{EXPORT_MARK}{tenant} at {exported_at}: {len(memories)} memories, by type and tags; "
        "each bullet ends with the date it was stored and its id -->",
        f"# Memories of {tenant}",
    ]
    order = {name: i for i, name in enumerate(MEMORY_TYPES)}
    by_type: dict[str, dict[tuple[str, ...], list[Memory]]] = {}
    for memory in sorted(memories, key=lambda m: (order.get(m.memory_type, 99), m.created_at, m.id)):
        by_type.setdefault(memory.memory_type, {}).setdefault(tuple(sorted(memory.tags)), []).append(memory)
    for memory_type, groups in by_type.items():
        lines += ["", f"## {memory_type}"]
        for tags in sorted(groups, key=lambda t: (len(t) == 0, t)):
            heading = ", ".join(" ".join(t.split()) for t in tags) if tags else NO_TAGS
            lines += ["", f"### {heading}", ""]
            lines += [_bullet(m) for m in groups[tags]]
    return lines


def _bullet(memory: Memory) -> str:
    text = memory.content.strip("\n").split("\n")
    trailer = f" — {memory.created_at[:10]} · {memory.id}"
    if len(text) == 1:
        return f"- {text[0].rstrip()}{trailer}"
    body = [f"- {text[0].rstrip()}"] + [f"  {line.rstrip()}" if line.strip() else "" for line in text[1:]]
    # on a line of its own, so that a code fence the memory ends with still closes
    return "\n".join([*body, f"  {trailer.lstrip()}"])


def _entity_type(memory: Memory) -> str:
    for tag in memory.tags:
        if not tag.startswith((SOURCE_TAG, IMPORTED_TAG)) and tag != RELATION_TAG:
            return tag
    return memory.memory_type


def knowledge_graph_lines(memories: Sequence[Memory]) -> list[str]:
    """Memories as the reference server's lines: every entity, then every relation."""
    entities: dict[str, dict[str, object]] = {}
    relations: list[str] = []
    for memory in sorted(memories, key=lambda m: (m.created_at, m.id)):
        relation = _relation(memory)
        if relation is not None:
            relations.append(relation)
            continue
        name = memory.category or memory.memory_type
        observation = memory.content
        if observation.startswith(f"{name}: ") and len(observation) > len(name) + 2:
            observation = observation[len(name) + 2 :]
        entity = entities.setdefault(
            name, {"type": "entity", "name": name, "entityType": _entity_type(memory), "observations": []}
        )
        observations = entity["observations"]
        assert isinstance(observations, list)
        if observation not in observations:
            observations.append(observation)
    return [_dumps(e) for e in entities.values()] + relations


def _relation(memory: Memory) -> str | None:
    relation_type = memory.category
    if RELATION_TAG not in memory.tags or not relation_type:
        return None
    source, found, target = memory.content.partition(f" {relation_type} ")
    if not found or not source.strip() or not target.strip():
        return None
    return _dumps({"type": "relation", "from": source, "to": target, "relationType": relation_type})


def write_lines(lines: Sequence[str], write: Callable[[str], None]) -> None:
    write("".join(line + "\n" for line in lines))
