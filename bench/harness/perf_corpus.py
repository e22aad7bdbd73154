"""The texts the performance benchmark stores and asks about, and their embeddings.

Filling 100,000 memories through `remember` one at a time would cost many
minutes of model time and measure nothing new, so the store is filled from
synthetic-but-varied sentences (templates over a few hundred words, every
sentence distinct) embedded by the real local model through its batch API, and
written through the store's `put` plus the recency index key (perf_fill.py).
The sentences come from a seeded generator, so the first 1,000 are the same in
every run and a prefix of the first 10,000.

Embeddings are cached as `.npy` files in the run's cache directory, keyed by
the generator version, the model's pinned sha256 and the count (`--cache` can
point several runs at one directory; nothing here is committed).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import sys
from pathlib import Path

import numpy as np

from bench.harness.timing import Stopwatch

GENERATOR_VERSION = "perf-corpus-1"

SYSTEMS = [
    "the billing service",
    "staging",
    "the nightly backup",
    "the search index",
    "our CI pipeline",
    "the mobile app",
    "the payments webhook",
    "the data warehouse",
    "the auth proxy",
    "the release train",
    "the Kafka cluster",
    "the edge cache",
    "the feature-flag service",
    "the email relay",
    "the GPU batch queue",
    "the analytics API",
    "the customer portal",
    "the internal wiki",
    "the load balancer",
    "the image resizer",
    "the cron scheduler",
    "the Redis sentinel",
    "the audit logger",
    "the SSO bridge",
    "the partner SFTP drop",
    "the pricing engine",
    "the recommendation model",
    "the support inbox",
    "the status page",
    "the VPN gateway",
]
ACTIONS = [
    "is restored from",
    "retries against",
    "is rebuilt after",
    "pages the on-call when it sees",
    "is deployed with",
    "reads its settings from",
    "is rate-limited by",
    "writes audit logs to",
    "is owned by",
    "times out after",
    "falls back to",
    "is migrated to",
    "is monitored through",
    "must never be restarted during",
    "is paused for",
    "sends a weekly digest about",
    "is pinned to",
    "caches responses from",
    "is tested against",
    "depends on",
]
OBJECTS = [
    "the Monday snapshot",
    "three attempts with jitter",
    "every schema change",
    "latency above two seconds",
    "a blue-green switch",
    "the shared config bucket",
    "the edge gateway",
    "the compliance archive",
    "the platform team",
    "thirty seconds of silence",
    "the read replica",
    "the quarterly audit",
    "the Friday freeze",
    "the EU data residency rules",
    "the legacy SOAP endpoint",
    "the canary pool",
    "the vendor's sandbox",
    "the incident runbook",
    "the cost dashboard",
    "version 2 of the protocol",
    "the Seoul region",
    "the backup tape rotation",
    "the on-call handbook",
    "the payments regulator",
    "the staging seed data",
]
REASONS = [
    "since the March incident",
    "to keep costs down",
    "because the vendor asked",
    "so audits pass",
    "after the old cron proved flaky",
    "to meet the SLO",
    "as the runbook says",
    "for the EU customers",
    "until the migration ends",
    "per the security review",
    "because disks filled up twice",
    "on Alice's advice",
    "to avoid double charges",
    "while the contract is renegotiated",
    "since traffic doubled in May",
]
PEOPLE = [
    "Alice",
    "Bob",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jun",
    "Kofi",
    "Lena",
    "Mateo",
    "Nadia",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sven",
    "Tomoko",
]
TOOLS = [
    "Terraform",
    "Helm",
    "Grafana",
    "Sentry",
    "PagerDuty",
    "Vault",
    "Airflow",
    "dbt",
    "Argo CD",
    "Loki",
    "pgbouncer",
    "Envoy",
    "Bazel",
    "Renovate",
    "Temporal",
]
QUESTIONS = [
    "what do we know about {s}?",
    "when is {s} restarted?",
    "who owns {s}?",
    "why does {s} time out?",
    "how is {s} deployed?",
    "what does {s} depend on?",
    "where does {s} read its settings from?",
    "what happens to {s} during {o}?",
    "is {s} affected by {o}?",
    "how do we recover {s} after {o}?",
]


def corpus(count: int, seed: int = 7) -> list[str]:
    """`count` distinct memory texts; a prefix of the same call with a larger count."""
    rng = random.Random(seed)
    seen: set[str] = set()
    texts: list[str] = []
    while len(texts) < count:
        shape = rng.randrange(4)
        s, a, o, r = rng.choice(SYSTEMS), rng.choice(ACTIONS), rng.choice(OBJECTS), rng.choice(REASONS)
        if shape == 0:
            text = f"{s.capitalize()} {a} {o} {r}."
        elif shape == 1:
            text = f"{rng.choice(PEOPLE)} says {s} {a} {o}, {r}."
        elif shape == 2:
            text = f"Since {rng.choice(TOOLS)} {rng.randint(2, 9)}.{rng.randint(0, 20)}, {s} {a} {o}."
        else:
            text = (
                f"Note for {rng.choice(PEOPLE)}: {s} {a} {o} {r}; ticket {rng.choice(TOOLS)}-{rng.randint(100, 9999)}."
            )
        if text not in seen:
            seen.add(text)
            texts.append(text)
    return texts


def queries(count: int, seed: int = 11) -> list[str]:
    """Questions a user would ask about the corpus (repeats allowed)."""
    rng = random.Random(seed)
    return [rng.choice(QUESTIONS).format(s=rng.choice(SYSTEMS), o=rng.choice(OBJECTS)) for _ in range(count)]


def new_facts(count: int, seed: int) -> list[str]:
    """Texts for timed `remember` calls: a wording the corpus never uses, so they are stored, not deduplicated."""
    rng = random.Random(seed)
    return [
        f"Decision {seed}-{i}: {rng.choice(PEOPLE)} moved {rng.choice(SYSTEMS)} onto {rng.choice(TOOLS)} "
        f"on day {rng.randint(1, 365)} of year {rng.randint(2019, 2031)} {rng.choice(REASONS)}."
        for i in range(count)
    ]


def _cache_file(cache: Path, count: int) -> Path:
    from mcp_memory.embedders.local.embedder import MODEL_SHA256

    key = hashlib.sha256(f"{GENERATOR_VERSION}|{MODEL_SHA256}|{count}".encode()).hexdigest()[:16]
    return cache / f"corpus-{count}-{key}.npy"


async def embeddings(texts: list[str], cache: Path, chunk: int = 2048) -> tuple[np.ndarray, float | None]:
    """The local model's vectors for `texts` (a `corpus` prefix), from the cache when there.

    Returns the matrix and the seconds spent embedding (None when it came from the cache).
    """
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    cache.mkdir(parents=True, exist_ok=True)
    path = _cache_file(cache, len(texts))
    if path.exists():
        return np.load(path), None
    for other in sorted(cache.glob("corpus-*.npy"), key=lambda f: int(f.name.split("-")[1])):
        count = int(other.name.split("-")[1])
        if count > len(texts) and other == _cache_file(cache, count):  # a longer run of the same corpus
            return np.load(other, mmap_mode="r")[: len(texts)].copy(), None
    embedder = LocalEmbedder()
    rows = np.empty((len(texts), 384), np.float32)
    with Stopwatch() as embedding:
        try:
            for start in range(0, len(texts), chunk):
                rows[start : start + chunk] = await embedder.embed(texts[start : start + chunk])
                done = min(len(texts), start + chunk)
                rate = done / embedding.running()
                print(f"  embedded {done:,}/{len(texts):,} ({rate:.0f} texts/s)", file=sys.stderr, flush=True)
        finally:
            await embedder.close()
    np.save(path, rows)
    return rows, embedding.last


if __name__ == "__main__":  # python -m bench.harness.perf_corpus 100000 /tmp/cache : pre-fill the cache
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    _, took = asyncio.run(embeddings(corpus(n), Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/mcp-memory-bench")))
    print(f"{n} texts: {'cached' if took is None else f'{took:.0f} s'}")
