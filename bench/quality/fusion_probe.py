"""How to combine the cosine and the keyword score, measured offline on MADial-Bench (English).

    .venv/bin/python -m bench.quality.fusion_probe

Embeds every memory and query once with the local model (cached in $TMPDIR), scores every
memory of the user's pool with the service's own keyword code (mcp_memory.core.keywords, exact
per-user document counts), and prints R@1/5/10 for: the cosine alone, BM25 alone, reciprocal
rank fusion, and `cosine + w × keyword` over a range of w. Nothing here is the service's
path; it is the measurement behind the choice of the fusion in core/fusion.py.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from bench.data import madial_data as md
from mcp_memory.core import keywords

CACHE = Path(tempfile.gettempdir()) / "madial_minilm.npz"


async def embeddings(data: md.MADial) -> tuple[dict[int, np.ndarray], list[np.ndarray]]:
    if CACHE.exists():
        z = np.load(CACHE)
        ids = [int(i) for i in z["ids"]]
        return dict(zip(ids, z["mem"])), list(z["q"])
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    emb = LocalEmbedder()
    ids = sorted(data.memories)
    mem = [(await emb.embed([data.memories[i]]))[0] for i in ids]
    q = [(await emb.embed([d.query]))[0] for d in data.dialogues]
    np.savez(CACHE, ids=np.array(ids), mem=np.array(mem), q=np.array(q))
    return dict(zip(ids, mem)), q


def stats_for(texts: dict[int, str]) -> keywords.TermStats:
    df: Counter[str] = Counter()
    for text in texts.values():
        df.update(set(keywords.tokens(text)))
    return keywords.TermStats(len(texts), df)


def main() -> None:
    data = md.load()
    mem, qs = asyncio.run(embeddings(data))
    per_user = {u: {m: data.memories[m] for m in pool} for u, pool in data.pools.items()}
    user_stats = {u: stats_for(t) for u, t in per_user.items()}
    cos, kw = [], []
    for d, q in zip(data.dialogues, qs):
        pool = data.pools[d.user]
        cos.append({m: float(np.dot(q, mem[m])) for m in pool})
        terms = keywords.query_terms(d.query)
        kw.append(keywords.bm25_scores(terms, {str(m): data.memories[m] for m in pool}, user_stats[d.user]))
        kw[-1] = {int(k): v for k, v in kw[-1].items()}

    def ranked(scores: list[dict[int, float]]) -> list[list[int]]:
        return [sorted(s, key=s.__getitem__, reverse=True) for s in scores]

    def show(name: str, rankings: list[list[int]]) -> None:
        print(md.row(name, md.scores(rankings, data.dialogues)))

    print(md.HEADER.format("fusion"))
    show("cosine", ranked(cos))
    show("bm25 (ours)", ranked(kw))
    rrf = []
    for c, k in zip(cos, kw):
        rc = {m: i for i, m in enumerate(sorted(c, key=c.__getitem__, reverse=True))}
        rk = {m: i for i, m in enumerate(sorted(k, key=k.__getitem__, reverse=True))}
        rrf.append({m: 1 / (60 + rc[m]) + 1 / (60 + rk[m]) for m in c})
    show("RRF k=60", ranked(rrf))
    for w in [float(x) for x in os.environ.get("WEIGHTS", "0.02 0.05 0.1 0.15 0.2 0.3 0.5").split()]:
        show(f"cos + {w:g} kw", ranked([{m: c[m] + w * k.get(m, 0.0) for m in c} for c, k in zip(cos, kw)]))


if __name__ == "__main__":
    main()
