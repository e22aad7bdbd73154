"""Every tenant at once, for the operator: `stats` without a tenant and `compact --all-tenants`.

Tenants are found from the object-store layout (object_keys.py), on every backend,
through the ObjectStore port as it is: no new port method. Keys list in byte
order and a tenant name cannot hold `/`, so after seeing `index/<tenant>/…` the
next tenant is the first key after `index/<tenant>0` (`0` sorts right after
`/`). Each tenant costs one one-key listing, however many memories it has, and
the scan stops at a bound and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_memory.core.counters.tracker import AccessCounters, CompactReport
from mcp_memory.core.errors import ContextError, StoreError
from mcp_memory.core.identity import parse_tenant
from mcp_memory.core.model import Caller
from mcp_memory.core.object_keys import Walk, count_index
from mcp_memory.core.ports import ObjectStore

__all__ = [
    "INDEX_ROOT",
    "STATS_ROOT",
    "TENANT_SCAN_CAP",
    "CompactAllResult",
    "TenantCount",
    "TenantsResult",
    "compact_tenants",
    "count_tenant",
    "scan_tenants",
    "tenant_counts",
]

#: The most tenants one `stats` or `compact --all-tenants` visits before it stops and says so.
TENANT_SCAN_CAP = 1000
#: Where memories are indexed, and where counters live (object_keys.py, counters/codec.py).
INDEX_ROOT = "index/"
STATS_ROOT = "stats/"


def _valid(tenant: str) -> bool:
    try:
        return parse_tenant(tenant, "tenant") == tenant
    except ContextError:
        return False


async def scan_tenants(objects: ObjectStore, root: str, limit: int = TENANT_SCAN_CAP) -> tuple[list[str], bool]:
    """The tenants with a key under `root`, in key order: at most `limit`, and whether
    more were left. Keys that are not `<root><valid tenant>/…` are stepped over."""
    tenants: list[str] = []
    start_after: str | None = None
    while True:
        page = await objects.list(root, 1, start_after)
        if not page:
            return tenants, False
        key = page[0]
        name, slash, _ = key[len(root) :].partition("/")
        if not slash:  # `<root><name>` with no `/`: step over this key alone
            start_after = key
            continue
        start_after = f"{root}{name}0"
        if not _valid(name):
            continue
        if len(tenants) >= limit:
            return tenants, True
        tenants.append(name)


@dataclass(frozen=True, slots=True)
class TenantCount:
    """One tenant's memories, every scope: project memories and conversation notes."""

    tenant: str
    total: int
    by_type: dict[str, int] = field(default_factory=dict)
    #: How many of `total` are conversation-scoped notes.
    conversation_notes: int = 0
    #: True when counting stopped at `scan_cap` keys: the figures are lower bounds.
    lower_bound: bool = False


async def count_tenant(objects: ObjectStore, tenant: str, scan_cap: int) -> TenantCount:
    """Count `tenant`'s memories from its recency index, reading at most `scan_cap` keys."""
    counted = await count_index(Walk(objects, Caller(tenant), every_scope=True), scan_cap)
    return TenantCount(tenant, counted.total, counted.by_type, counted.notes, lower_bound=counted.lower_bound)


@dataclass(frozen=True, slots=True)
class TenantsResult:
    tenants: list[TenantCount]
    #: True when the scan stopped at `limit` tenants: there may be more.
    truncated: bool
    limit: int


@dataclass(frozen=True, slots=True)
class CompactAllResult:
    reports: list[CompactReport]
    #: Tenants whose compaction failed, with the reason (the others still ran).
    failed: list[tuple[str, str]]
    truncated: bool
    limit: int
    dry_run: bool


async def tenant_counts(objects: ObjectStore, *, limit: int, scan_cap: int) -> TenantsResult:
    """Every tenant with memories and its counts, up to `limit` tenants."""
    names, truncated = await scan_tenants(objects, INDEX_ROOT, limit)
    names.sort()  # key order puts "acme-2" before "acme"; people read names in name order
    return TenantsResult([await count_tenant(objects, name, scan_cap) for name in names], truncated, limit)


async def compact_tenants(
    counters: AccessCounters, objects: ObjectStore, *, dry_run: bool, limit: int
) -> CompactAllResult:
    """Compact every tenant that has counters, up to `limit`. One tenant failing does not
    stop the others; it is reported with its reason."""
    names, truncated = await scan_tenants(objects, STATS_ROOT, limit)
    names.sort()
    reports: list[CompactReport] = []
    failed: list[tuple[str, str]] = []
    for name in names:
        try:
            reports.append(await counters.compact(name, dry_run=dry_run))
        except StoreError as exc:
            failed.append((name, str(exc)))
    return CompactAllResult(reports, failed, truncated, limit, dry_run)
