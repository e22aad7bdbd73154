"""PostgreSQL's keyword query with the term counts counted per query (schema 2's statement) against
the counts kept in `memory_terms` (schema 3), interleaved on one store, with the dense query they
run beside; and whether both give the same answer (bench/RESULTS.md, "PostgreSQL's kept term counts").

    PYTHONPATH=. .venv/bin/python -m bench.scale.million --count 10000 --base 4096 --copy-into URL --finish
    PYTHONPATH=. .venv/bin/python -m bench.scale.pg_term_counts_ab URL 100
"""

import asyncio
import json
import os
import statistics
import sys
import time
from types import SimpleNamespace

from bench.harness import perf_corpus
from mcp_memory.core import keywords as kw
from mcp_memory.core.keywords import KeywordAnswer, TermStats
from mcp_memory.embedders.local.embedder import DIM, MODEL_NAME, LocalEmbedder
from mcp_memory.stores.postgres import keywords
from mcp_memory.stores.postgres.store import open_postgres

#: schema 2's statement: the tenant's rows and each term's holders counted through the GIN index
old = SimpleNamespace(
    STATS=(
        "WITH n AS (SELECT count(*) AS docs FROM memories WHERE tenant_id = %s) "
        "SELECT NULL::text, docs FROM n UNION ALL "
        "SELECT q.term, (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.tenant_id = %s "
        "AND m.keyword_vector @@ q.query LIMIT (SELECT greatest(%s, floor(docs * %s))::bigint + 1 FROM n)) AS held) "
        "FROM unnest(%s::text[], %s::tsquery[]) AS q(term, query)"
    )
)
URL = sys.argv[1]


async def old_keyword_query(v, tenant, emb, terms, top_k):
    vector = v._vector(emb)
    rows = await v._db.fetch(
        "kq",
        old.STATS,
        (tenant, tenant, kw.SEARCH_MIN_DOCS, kw.COMMON_SHARE, terms, [keywords.lexeme(t) for t in terms]),
    )
    total = next((int(n) for term, n in rows if term is None), 0)
    stats = TermStats(total, {term: int(n) for term, n in rows if term is not None and n})
    searched = stats.searchable(terms)
    if not searched:
        return KeywordAnswer([], stats)
    rows = await v._db.fetch(
        "kq",
        v._keyword_search,
        (
            vector,
            tenant,
            None,
            None,
            keywords.any_of(searched),
            [keywords.lexeme(t) for t in searched],
            [stats.idf(t) for t in searched],
            top_k,
        ),
    )
    return KeywordAnswer([r[0] for r in rows], stats)


async def main():
    v, o = await open_postgres(URL, model=MODEL_NAME, dim=DIM)
    e = LocalEmbedder()
    qs = perf_corpus.queries(int(sys.argv[2]), seed=23)
    embs = await e.embed(qs)
    t = {"dense": [], "kw old": [], "kw kept": [], "hybrid old": [], "hybrid kept": []}
    same = 0
    for i, (q, emb) in enumerate(zip(qs, embs)):
        terms = kw.query_terms(q)
        arms = ["old", "kept"] if i % 2 else ["kept", "old"]
        s = time.perf_counter()
        await v.query("bench", emb, 30, None)
        t["dense"].append(time.perf_counter() - s)
        res = {}
        for a in arms:
            s = time.perf_counter()
            res[a] = await (
                old_keyword_query(v, "bench", emb, terms, 30)
                if a == "old"
                else v.keyword_query("bench", emb, terms, 30, None)
            )
            t["kw " + a].append(time.perf_counter() - s)
            s = time.perf_counter()
            await asyncio.gather(
                v.query("bench", emb, 30, None),
                old_keyword_query(v, "bench", emb, terms, 30)
                if a == "old"
                else v.keyword_query("bench", emb, terms, 30, None),
            )
            t["hybrid " + a].append(time.perf_counter() - s)
        ids_kept = [h.memory.id for h in res["kept"].hits]
        same += (
            ids_kept == res["old"].hits
            and dict(res["kept"].stats.frequency) == dict(res["old"].stats.frequency)
            and res["kept"].stats.docs == res["old"].stats.docs
        )
    out = {k: round(1000 * statistics.median(x), 2) for k, x in t.items()}
    out["identical answers"] = f"{same}/{len(qs)}"
    out["hybrid/dense old"] = round(out["hybrid old"] / out["dense"], 2)
    out["hybrid/dense kept"] = round(out["hybrid kept"] / out["dense"], 2)
    out["load"] = os.getloadavg()[0]
    print(json.dumps(out))
    await v.close()
    await o.close()
    await e.close()


asyncio.run(main())
