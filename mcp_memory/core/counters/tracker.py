"""Access counters without a lock (docs/counters.md, seed 000, "Counters without a lock").

An object store has no atomic increment, so nothing here modifies a shared
object in place. A pod counts in memory and periodically writes a *delta* to a
key only it will ever write (`stats/<tenant>/shard/<ULID>-<podId>.json`). A
reader adds `merged.json` to every shard above its watermark: counts add and
timestamps take the later, which converges in any arrival order. When settled
shards pile up, whoever notices folds them in with a compare-and-swap and
advances the watermark.

The watermark stops a shard being counted twice (a compactor that died before
deleting, two compactors at once), so deleting absorbed shards is garbage
collection. It trails by `compaction_lag_ms`, which stops a shard being counted
*zero* times: a key is stamped when the flush builds it, not when the store
accepts it, so a line drawn across everything visible could land above a write
still in flight. Given up on purpose: a pod that dies loses up to one flush
interval, and other pods' flushes reach this one up to a cache TTL late.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from mcp_memory.core.counters.codec import (
    Delta,
    Entry,
    Merged,
    add_into,
    dump_delta,
    dump_merged,
    merged_key,
    parse_delta,
    parse_merged,
    shard_name,
    shard_prefix,
    shard_time,
)
from mcp_memory.core.errors import PreconditionFailed
from mcp_memory.core.ids import iso, ulid
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import AccessStats
from mcp_memory.core.ports import ObjectStore

__all__ = ["AccessCounters", "CompactReport", "new_pod_id"]

#: How often the operator's `compact` re-reads and retries after losing the CAS
#: to another compactor before it gives up and says so.
COMPACT_ATTEMPTS = 5


def _epoch_ms() -> float:
    return time.time() * 1000


def new_pod_id(hostname: str) -> str:
    """`<hostname>-<8 random hex>`: new every boot, so a restarted pod never rewrites a
    shard key its previous life wrote. Characters that would break a key (`/`, spaces)
    become `-`; the pod id ends up in every shard filename."""
    host = re.sub(r"[^A-Za-z0-9._-]", "-", hostname.strip()) or "pod"
    return f"{host}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class CompactReport:
    """What `compact` folded (or, under `dry_run`, would fold)."""

    tenant: str
    #: Settled shards absorbed into merged.json (and deleted).
    shards_folded: int
    #: Shards above the watermark left in place: younger than the lag, or not ULID-named.
    shards_left: int
    #: Shards already below the watermark (a compactor died before deleting them); removed.
    shards_stale: int
    #: Memories and total accesses in merged.json after the fold.
    memories: int
    accesses: int
    watermark: str
    dry_run: bool
    #: Whether merged.json was replaced (never under dry_run, nor when nothing had settled).
    written: bool = False


@dataclass(slots=True)
class _Cached:
    counts: Delta
    at: float


def _folded(base: Delta, keys: Sequence[str], deltas: Mapping[str, Delta]) -> Delta:
    """A fresh Delta: `base` plus the deltas of `keys` (missing objects contribute nothing)."""
    out: Delta = {}
    add_into(out, base)
    for key in keys:
        delta = deltas.get(key)
        if delta is not None:
            add_into(out, delta)
    return out


def _ignore_outcome(_operation: str, _ok: bool) -> None:
    return None


class AccessCounters:
    """Per-memory access counts over any ObjectStore (the reference StatsTracker)."""

    def __init__(
        self,
        objects: ObjectStore,
        *,
        pod_id: str,
        log: JsonLog,
        clock: Callable[[], float] = _epoch_ms,
        cache_ttl_ms: int = 60_000,
        compact_threshold: int = 20,
        compaction_lag_ms: int = 60_000,
        list_limit: int = 1000,
        fetch_batch: int = 16,
        on_outcome: Callable[[str, bool], None] | None = None,
    ) -> None:
        if not pod_id or "/" in pod_id:
            raise ValueError("pod_id must be non-empty and contain no '/'")
        if list_limit < 1 or fetch_batch < 1 or cache_ttl_ms < 0 or compaction_lag_ms < 0:
            raise ValueError("list_limit and fetch_batch must be ≥ 1; TTL and lag ≥ 0")
        self._objects = objects
        self._pod_id = pod_id
        self._log = log
        #: Told ("flush" | "compaction", ok) after each flush and each compaction's write
        #: (serve-http's metrics count them); an exception counts as not ok and still propagates.
        self._on_outcome = on_outcome or _ignore_outcome
        self._clock = clock
        self._ttl = cache_ttl_ms
        self._threshold = compact_threshold
        self._lag = compaction_lag_ms
        self._list_limit = list_limit
        self._batch = fetch_batch
        #: Counts seen since this pod's last flush, per tenant.
        self._pending: dict[str, Delta] = {}
        self._cache: dict[str, _Cached] = {}
        #: Background compactions in flight (strong references, so none is collected
        #: mid-write), and the tenants they are for (one at a time per tenant).
        self._compactions: set[asyncio.Task[None]] = set()
        self._compacting: set[str] = set()
        self._timer: asyncio.Task[None] | None = None
        self._timer_flush: asyncio.Task[int] | None = None
        #: Tenant and key of the shard write that just failed, for the log line.
        self._failed: tuple[str, str] | None = None

    @property
    def pod_id(self) -> str:
        return self._pod_id

    @property
    def cached_tenants(self) -> int:
        """How many tenants' durable counts are held (eviction is otherwise invisible)."""
        return len(self._cache)

    # ------------------------------------------------------------------ recording and reading

    def record(self, tenant: str, memory_id: str, at_ms: float) -> None:
        """Note one use of a memory. In memory only: the read path never writes."""
        if isinstance(at_ms, bool) or not math.isfinite(at_ms):
            raise ValueError(f"not a timestamp: {at_ms!r}")
        stamp = iso(at_ms)
        delta = self._pending.setdefault(tenant, {})
        entry = delta.get(memory_id)
        if entry is None:
            delta[memory_id] = Entry(1, stamp)
            return
        entry.access += 1
        if stamp > entry.last_at:
            entry.last_at = stamp

    async def load(self, tenant: str, ids: Iterable[str] | None = None) -> Mapping[str, AccessStats]:
        """Durable counts (cached) plus this pod's unflushed ones, for `ids` (default: every
        memory with a count).

        The unflushed part is what keeps a memory the caller just used from looking
        untouched for the rest of the flush interval. The mapping is the caller's own.
        A recall passes its candidates' ids: merging the whole tenant's counts for
        every call grew with the memories ever used
        (bench/RESULTS.md#access-counts-for-a-recalls-candidates-only).
        """
        durable = await self._load_durable(tenant)
        pending = self._pending.get(tenant) or {}
        if ids is None:
            combined: Delta = {}
            add_into(combined, durable)
            add_into(combined, pending)
            return {k: AccessStats(e.access, e.last_at) for k, e in combined.items()}
        stats: dict[str, AccessStats] = {}
        for memory_id in ids:
            entries = [e for e in (durable.get(memory_id), pending.get(memory_id)) if e is not None]
            if entries:  # the merge rule of add_into: counts add, the later timestamp wins
                stats[memory_id] = AccessStats(sum(e.access for e in entries), max(e.last_at for e in entries))
        return stats

    async def _load_durable(self, tenant: str) -> Delta:
        cached = self._cache.get(tenant)
        if cached is not None and self._clock() - cached.at < self._ttl:
            return cached.counts
        merged, etag = await self._read_merged(tenant)
        prefix = shard_prefix(tenant)
        # Listing from the watermark (keys sort as prefix + filename) spends the
        # listing limit on shards that still count rather than on absorbed ones
        # a dead compactor left behind; the filter below is the rule itself.
        start = prefix + merged.watermark if merged.watermark else None
        keys = await self._objects.list(prefix, limit=self._list_limit, start_after=start)
        fresh = [k for k in keys if shard_name(k) > merged.watermark]
        deltas = await self._fetch(fresh)
        counts = _folded(merged.counts, fresh, deltas)
        self._remember(tenant, counts)

        settled = self._clock() - self._lag
        absorbable = [k for k in fresh if shard_time(k) <= settled]
        if len(absorbable) > self._threshold and tenant not in self._compacting:
            # Young shards stay out of the fold: they remain above the watermark
            # and would otherwise be counted twice on the next read.
            absorbed = _folded(merged.counts, absorbable, deltas)
            self._spawn_compaction(tenant, etag, absorbed, absorbable)
        return counts

    def _remember(self, tenant: str, counts: Delta) -> None:
        """Cache a tenant's durable counts, first letting go of every expired entry, so
        a pod serving many tenants holds only those read within the TTL."""
        now = self._clock()
        for name in [t for t, c in self._cache.items() if now - c.at >= self._ttl]:
            del self._cache[name]
        self._cache[tenant] = _Cached(counts, now)

    async def _read_merged(self, tenant: str) -> tuple[Merged, str | None]:
        stored = await self._objects.get(merged_key(tenant))
        if stored is None:
            return Merged(), None
        # Unreadable content reads as empty but keeps its ETag, so the next
        # compaction replaces it instead of the tenant being wedged on it.
        return parse_merged(stored.body), stored.etag

    async def _fetch(self, keys: Sequence[str]) -> dict[str, Delta]:
        """Shard bodies, `fetch_batch` at a time: concurrent because this sits on a recall's
        critical path, bounded because a tenant whose compaction keeps failing can have a
        listing's worth of them. Objects gone by the time they are read are skipped."""
        out: dict[str, Delta] = {}
        for i in range(0, len(keys), self._batch):
            chunk = keys[i : i + self._batch]
            found = await asyncio.gather(*(self._objects.get(k) for k in chunk))
            for key, stored in zip(chunk, found):
                if stored is not None:
                    out[key] = parse_delta(stored.body)
        return out

    async def _list_all(self, prefix: str) -> list[str]:
        """Every key under `prefix`, page by page (the operator's compaction must see all)."""
        keys: list[str] = []
        after: str | None = None
        while True:
            page = await self._objects.list(prefix, limit=self._list_limit, start_after=after)
            keys.extend(page)
            if len(page) < self._list_limit or page[-1] == after:
                return keys
            after = page[-1]

    # ------------------------------------------------------------------ compaction

    def _spawn_compaction(self, tenant: str, etag: str | None, counts: Delta, keys: list[str]) -> None:
        """Off the caller's latency path: whoever loses the CAS simply did not need to win."""
        task = asyncio.get_running_loop().create_task(self._compact_quietly(tenant, etag, counts, keys))
        self._compacting.add(tenant)
        self._compactions.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._compactions.discard(finished)
            self._compacting.discard(tenant)

        task.add_done_callback(done)

    async def _compact_quietly(self, tenant: str, etag: str | None, counts: Delta, keys: list[str]) -> None:
        try:
            await self._fold(tenant, etag, counts, keys)
        except Exception as error:  # the store itself failing; harmless once, shards pile up if not
            self._log.error("stats_compaction_failed", error, tenant=tenant)

    async def _fold(
        self, tenant: str, etag: str | None, counts: Delta, absorbed: Sequence[str], stale: Sequence[str] = ()
    ) -> bool:
        """`_fold_shards`, its outcome told to `on_outcome` as a "compaction"."""
        try:
            folded = await self._fold_shards(tenant, etag, counts, absorbed, stale)
        except Exception:
            self._on_outcome("compaction", False)
            raise
        self._on_outcome("compaction", True)
        return folded

    async def _fold_shards(
        self, tenant: str, etag: str | None, counts: Delta, absorbed: Sequence[str], stale: Sequence[str] = ()
    ) -> bool:
        """CAS merged.json to `counts` with the watermark at the greatest absorbed filename,
        then collect the shards it covers. False when another compactor got there first:
        its watermark covers the same shards, so there is nothing to clean up."""
        watermark = max(shard_name(k) for k in absorbed)
        body = dump_merged(Merged(counts, watermark))
        try:
            await self._put_merged(tenant, body, etag)
        except PreconditionFailed:
            return False
        await self._collect(tenant, [*absorbed, *stale])
        return True

    async def _put_merged(self, tenant: str, body: str, etag: str | None) -> None:
        """Write merged.json only over the version read (its ETag), or only where none exists yet;
        PreconditionFailed when another writer got there first."""
        if etag is None:
            await self._objects.put(merged_key(tenant), body, if_none_match=True)
        else:
            await self._objects.put(merged_key(tenant), body, if_match=etag)

    async def _collect(self, tenant: str, keys: Sequence[str]) -> None:
        """Delete shards the watermark already excludes. A failure costs storage only."""
        try:
            await self._objects.delete(keys)
        except Exception as error:
            self._log.error("stats_shard_cleanup_failed", error, tenant=tenant)

    async def wait_for_compaction(self) -> None:
        """Return once every background compaction started so far has finished."""
        while running := {t for t in self._compactions if not t.done()}:
            await asyncio.wait(running)

    async def compact(self, tenant: str, *, dry_run: bool = False) -> CompactReport:
        """Fold every settled shard of `tenant` now, whatever the threshold (operator command).

        Same rules as the background pass (only shards older than the lag, CAS on
        merged.json, watermark at the greatest absorbed filename) but it pages
        through every shard, re-reads and retries when another compactor wins, and
        also collects shards already below the watermark. `dry_run` reads only.
        """
        for _ in range(COMPACT_ATTEMPTS):
            merged, etag = await self._read_merged(tenant)
            keys = await self._list_all(shard_prefix(tenant))
            stale = [k for k in keys if shard_name(k) <= merged.watermark]
            fresh = [k for k in keys if shard_name(k) > merged.watermark]
            settled = self._clock() - self._lag
            absorbable = [k for k in fresh if shard_time(k) <= settled]
            counts = _folded(merged.counts, absorbable, await self._fetch(absorbable))
            report = CompactReport(
                tenant=tenant,
                shards_folded=len(absorbable),
                shards_left=len(fresh) - len(absorbable),
                shards_stale=len(stale),
                memories=len(counts),
                accesses=sum(e.access for e in counts.values()),
                watermark=max(shard_name(k) for k in absorbable) if absorbable else merged.watermark,
                dry_run=dry_run,
            )
            if dry_run:
                return report
            if not absorbable:
                if stale:
                    await self._collect(tenant, stale)
                return report
            if await self._fold(tenant, etag, counts, absorbable, stale):
                return replace(report, written=True)
        raise PreconditionFailed(
            f"another compactor replaced stats/{tenant}/merged.json {COMPACT_ATTEMPTS} times in a row; "
            "nothing was lost — run the compaction again"
        )

    # ------------------------------------------------------------------ importing

    async def seed(self, tenant: str, counts: Mapping[str, Entry]) -> None:
        """Set these memories' counts in merged.json, by compare-and-swap (import's path).

        For memories that do not exist yet: an import seeds their counts *before*
        writing them, so no pod can have counted them in a shard, and setting
        (never adding) makes a rerun after a crash write the same numbers again
        rather than double them. The watermark is left as it is.
        """
        if not counts:
            return
        for _ in range(COMPACT_ATTEMPTS):
            merged, etag = await self._read_merged(tenant)
            for memory_id, entry in counts.items():
                merged.counts[memory_id] = Entry(entry.access, entry.last_at)
            body = dump_merged(merged)
            try:
                await self._put_merged(tenant, body, etag)
            except PreconditionFailed:
                continue
            self._cache.pop(tenant, None)
            return
        raise PreconditionFailed(
            f"another writer replaced stats/{tenant}/merged.json {COMPACT_ATTEMPTS} times in a row while the "
            "import seeded its counts; nothing was lost — run the import again"
        )

    # ------------------------------------------------------------------ flushing

    async def flush(self) -> int:
        """Write each tenant's pending counts as a new shard (`_flush`); returns how many were
        written, and tells `on_outcome` whether it failed."""
        try:
            written = await self._flush()
        except Exception:
            self._on_outcome("flush", False)
            raise
        self._on_outcome("flush", True)
        return written

    async def _flush(self) -> int:
        """Write each tenant's pending counts as a new shard; returns how many were written.

        A tenant's pending entry is removed *before* its write, so a failed write
        loses that delta instead of replaying it on the next flush (which could
        count it twice if the write had in fact landed). The first failure aborts
        the loop and is raised; later tenants flush next time.
        """
        written = 0
        for tenant in list(self._pending):
            delta = self._pending.pop(tenant, None)
            if not delta:
                continue
            key = f"{shard_prefix(tenant)}{ulid(self._clock())}-{self._pod_id}.json"
            try:
                await self._objects.put(key, dump_delta(delta))
            except Exception:
                self._failed = (tenant, key)
                raise
            written += 1
            # The pending counts stood in for this shard; a cached read predates it.
            # Fold it in, or the memory reads as untouched until the cache expires.
            # A later miss replaces the entry wholesale, so this cannot double count.
            cached = self._cache.get(tenant)
            if cached is not None:
                add_into(cached.counts, delta)
        return written

    async def _flush_logged(self, event: str) -> int:
        try:
            return await self.flush()
        except Exception as error:
            tenant, key = self._failed or (None, None)
            self._failed = None
            self._log.error(event, error, tenant=tenant, key=key)
            return 0

    def start(self, flush_ms: int) -> None:
        """Flush every `flush_ms` on the running loop until `stop`. Idempotent.

        An asyncio task holds no thread and nothing awaits it, so it never keeps the
        process alive; it is cancelled with the loop, and it logs rather than raises.
        """
        if flush_ms <= 0:
            raise ValueError("flush_ms must be positive")
        if self._timer is None or self._timer.done():
            loop = asyncio.get_running_loop()
            self._timer = loop.create_task(self._tick(flush_ms / 1000), name="access-counters-flush")

    async def _tick(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            # Shielded: stopping the timer must not cancel a write halfway, which
            # would lose a delta already taken out of pending. `stop` awaits it.
            self._timer_flush = asyncio.ensure_future(self._flush_logged("stats_flush_failed"))
            await asyncio.shield(self._timer_flush)

    async def stop(self) -> None:
        """Stop the timer, flush what is pending, and let background compaction finish.

        Never raises: a failed final flush is logged `stats_final_flush_failed`.
        Safe to call more than once.
        """
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
            await asyncio.wait([timer])
        inflight, self._timer_flush = self._timer_flush, None
        if inflight is not None and not inflight.done():
            await asyncio.wait([inflight])
        await self._flush_logged("stats_final_flush_failed")
        await self.wait_for_compaction()
