"""Export: every memory of some tenants, as JSON Lines, page by page.

Memory use does not grow with the number of memories: the store is read a
page at a time (`VectorStore.scan`) and each line is handed to `write` as soon
as it is made. What is held per tenant is its access counters, which the
counter design keeps in one object anyway (core/counters).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.model import Memory
from mcp_memory.core.ports import Embedder, ObjectStore, VectorStore
from mcp_memory.core.tenants import INDEX_ROOT, scan_tenants
from mcp_memory.core.transfer.file_format import dump_header, dump_record

__all__ = [
    "EXPORT_TENANT_LIMIT",
    "OTHER_FORMATS",
    "ExportResult",
    "all_tenants",
    "as_seen_in",
    "export_memories",
    "export_other",
]

#: The export formats besides mcp-memory's own JSON Lines (`jsonl`).
OTHER_FORMATS = ("markdown", "mcp-knowledge-graph")
#: `--all-tenants` visits at most this many tenants.
EXPORT_TENANT_LIMIT = 1_000_000


@dataclass(frozen=True)
class ExportResult:
    memories: int
    with_embeddings: bool
    #: Memories written, per tenant, in the order they were exported.
    tenants: dict[str, int] = field(default_factory=dict)


async def all_tenants(objects: ObjectStore) -> list[str]:
    """Every tenant with memories (found from the recency index), in name order."""
    names, _ = await scan_tenants(objects, INDEX_ROOT, EXPORT_TENANT_LIMIT)
    return sorted(names)


def as_seen_in(conversation: str | None) -> Callable[[Memory], Memory | None]:
    """What an export for a caller in `conversation` (or in none) holds of a memory: nothing when
    the caller cannot see it (another conversation's note), and a project memory's conversation of
    origin only when it is the caller's own (docs/transfer.md#export)."""

    def shown(memory: Memory) -> Memory | None:
        if not memory.visible_to(conversation):
            return None
        if memory.conversation is not None and memory.conversation != conversation:
            return replace(memory, conversation=None)
        return memory

    return shown


async def export_memories(
    tenants: Sequence[str],
    *,
    vectors: VectorStore,
    counters: AccessCounters,
    embedder: Embedder,
    write: Callable[[str], None],
    with_embeddings: bool,
    exported_at: str,
    exported_by: str,
    progress: Callable[[int], None] | None = None,
    shown: Callable[[Memory], Memory | None] | None = None,
) -> ExportResult:
    """Write the header, then one line per memory of each tenant in `tenants` (each line ends in a
    newline); with `shown`, only the memories it keeps, as it returns them."""
    write(
        dump_header(
            exported_by=exported_by,
            exported_at=exported_at,
            provider=embedder.provider,
            model=embedder.model,
            dim=embedder.dim,
            with_embeddings=with_embeddings,
        )
        + "\n"
    )
    per_tenant: dict[str, int] = {}
    for tenant in dict.fromkeys(tenants):
        counts = await counters.load(tenant)
        written = 0
        async for page in vectors.scan(tenant):
            if shown is not None:
                page = [(kept, embedding) for memory, embedding in page if (kept := shown(memory)) is not None]
            write(
                "".join(
                    dump_record(memory, counts.get(memory.id), embedding if with_embeddings else None) + "\n"
                    for memory, embedding in page
                )
            )
            written += len(page)
            if progress is not None:
                progress(len(page))
        per_tenant[tenant] = written
    return ExportResult(sum(per_tenant.values()), with_embeddings, per_tenant)


async def export_other(
    format_name: str,
    tenants: Sequence[str],
    *,
    vectors: VectorStore,
    write: Callable[[str], None],
    exported_at: str,
    progress: Callable[[int], None] | None = None,
) -> ExportResult:
    """Each tenant's memories as `markdown` or `mcp-knowledge-graph` (core/transfer/other_exports.py)."""
    from mcp_memory.core.transfer.other_exports import knowledge_graph_lines, markdown_lines, write_lines

    if format_name not in OTHER_FORMATS:
        raise ValueError(f"not an export format: {format_name}")
    per_tenant: dict[str, int] = {}
    for tenant in dict.fromkeys(tenants):
        memories: list[Memory] = []
        async for page in vectors.scan(tenant):
            memories.extend(memory for memory, _ in page)
            if progress is not None:
                progress(len(page))
        if format_name == "markdown":
            write_lines(([""] if per_tenant else []) + markdown_lines(tenant, memories, exported_at), write)
        else:
            write_lines(knowledge_graph_lines(memories), write)
        per_tenant[tenant] = len(memories)
    return ExportResult(sum(per_tenant.values()), False, per_tenant)
