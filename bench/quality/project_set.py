"""Recall quality on the project-memory dev set (bench/data/project_memory): dense, keyword, hybrid.

    .venv/bin/python -m bench.quality.project_set [--backend sqlite|postgres] [--one-tenant] [--json]

Every fact is stored through the real `remember` in its team's tenant, on a fresh SQLite file in a
temporary directory (or a throwaway pgserver PostgreSQL with `--backend postgres`, or the database
in BENCH_DATABASE_URL), with the local all-MiniLM-L6-v2 model and the shipped floor and HIGH.
Then, for each retrieval the service offers (see `retrieval_eval.open_retrieval`), each mode and
cold / warm: R@1/5/10 and hit@5, R@5 by question kind (paraphrase, identifier, number) and for the
Korean questions, and the precision of each confidence label, with how the absent questions are
labelled. References outside the service: exact cosine with the raw model, and plain BM25 (FTS5).
`--one-tenant` stores all five teams in one tenant (one person's memory across projects): 302
memories, more than recall's candidate pool, so a keyword hit must be reachable beyond the vector
neighbours, and the teams' look-alike facts compete.
What "cold" and "warm" mean is in bench/quality/retrieval_eval.py. Markdown for bench/RESULTS.md, or JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import tempfile
from pathlib import Path

from bench.data import madial_data, project_set_data
from bench.harness.timing import Stopwatch
from bench.quality import retrieval_eval as ev

#: "original": the 525 questions before the hard-paraphrase batch, so both sets read from one run.
GROUPS = ("paraphrase", "identifier", "number", "paraphrase-hard", "Korean", "Korean original", "original")


ONE_TENANT = "all-teams"


def probes(questions, one_tenant: bool) -> list[ev.Probe]:
    return [
        ev.Probe(
            ONE_TENANT if one_tenant else q.tenant,
            q.text,
            frozenset(q.gold),
            (q.kind,)
            + (("Korean",) if q.lang == "ko" else ())
            + (("original",) if q.kind != "paraphrase-hard" else ())
            + (("Korean original",) if q.lang == "ko" and q.kind != "paraphrase-hard" else ()),
        )
        for q in questions
    ]


async def measure(env: dict[str, str], one_tenant: bool = False) -> dict:
    facts, questions = project_set_data.load()
    items = [(ONE_TENANT if one_tenant else f.tenant, f.id, f.text, f.memory_type) for f in facts]
    ps = probes(questions, one_tenant)
    started = Stopwatch.started()
    services = {}
    for name in ev.RETRIEVALS:
        service = await ev.open_retrieval(env, name)
        if service is not None:
            services[name] = service
    first = next(iter(services.values()))
    try:
        stored = await ev.store(first, items)
        rows, references = [], []
        for name, rankings in (
            ("raw cosine (reference)", await ev.cosine_rankings(first, items, ps)),
            ("BM25, FTS5 (reference)", ev.bm25_rankings(items, ps)),
        ):
            references.append(
                {
                    "retrieval": name,
                    "mode": "–",
                    "pass": "–",
                    "all": ev.quality(rankings, ps),
                    "groups": ev.by_group(rankings, ps, GROUPS),
                }
            )
        for name, service in services.items():
            for mode in ev.MODES:
                for warm in (False, True):
                    outcomes = await ev.recall_pass(service, ps, stored, mode, warm)
                    rankings = [o.ranked for o in outcomes]
                    rows.append(
                        {
                            "retrieval": name,
                            "mode": mode,
                            "pass": "warm" if warm else "cold",
                            "all": ev.quality(rankings, ps),
                            "groups": ev.by_group(rankings, ps, GROUPS),
                            "confidence": ev.confidence(outcomes, ps),
                        }
                    )
        floor, high = first.floor, first.high
        embedder = f"{first.embedder.provider}:{first.embedder.model}"
    finally:
        for service in services.values():
            await ev.close(service)
    answerable = [q for q in questions if q.gold]
    return {
        "set": {
            "facts": len(facts),
            "questions": len(answerable),
            "absent": len(questions) - len(answerable),
            "korean_questions": sum(q.lang == "ko" for q in answerable),
        },
        "tenants": len({tenant for tenant, *_ in items}),
        "retrievals": list(services),
        "embedder": embedder,
        "floor": floor,
        "high": high,
        "merged": stored.merged,
        "date": datetime.date.today().isoformat(),
        "machine": madial_data.machine(),
        "seconds": round(started.running()),
        "references": references,
        "rows": rows,
    }


def markdown(result: dict, backend: str) -> str:
    s = result["set"]
    missing = [r for r in ev.RETRIEVALS if r not in result["retrievals"]]
    lines = [
        f"Project-memory dev set: {s['facts']} facts in {result['tenants']} tenant(s), {s['questions']} questions "
        f"({s['korean_questions']} Korean), {s['absent']} absent; {backend}, {result['embedder']}, floor {result['floor']:g}, "
        f"HIGH {result['high']:g}; recall at limit 50, warm after one counted round at each mode's default limit "
        f"({ev.mode_limits()}).",
        f"remember: {len(result['merged'])} facts merged by dedup {result['merged'] or ''}",
        f"{result['date']}, {result['machine']}, {result['seconds']} s"
        + (f"; this service has no {' / '.join(missing)} retrieval (rows left out)" if missing else ""),
        "",
        *ev.quality_table(result["references"] + result["rows"], GROUPS),
        "",
        "R@1 / R@5 / R@10 by question group, balanced mode, cold:",
        "",
        *group_table(
            result["references"] + [r for r in result["rows"] if (r["mode"], r["pass"]) == ("balanced", "cold")]
        ),
        "",
        "Confidence: per label, the answerable questions that got it and how often their top result answers them; "
        "then how the absent questions are labelled.",
        "",
        *ev.confidence_table(result["rows"]),
    ]
    return "\n".join(lines)


def group_table(rows: list[dict]) -> list[str]:
    head = "| retrieval | all |" + "".join(f" {g} |" for g in GROUPS)
    out = [head, "|" + "---|" * (2 + len(GROUPS))]
    for r in rows:
        cells = [r["all"], *(r["groups"][g] for g in GROUPS)]
        out.append(
            f"| {r['retrieval']} | "
            + " | ".join(" / ".join(ev.pct(q[f"R@{k}"]) for k in ev.KS) + f" (n {q['n']})" for q in cells)
            + " |"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--one-tenant", action="store_true", help="store every team in one tenant")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    parser.add_argument("--provider", default="local", help="EMBEDDING_PROVIDER (local, local-multilingual)")
    args = parser.parse_args()
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "project_set.db")}
        if args.backend == "postgres":
            url, server = postgres_url()
            env = {"HOME": tmp, "MEMORY_BACKEND": "postgres", "DATABASE_URL": url}
        env["EMBEDDING_PROVIDER"] = args.provider
        try:
            result = asyncio.run(measure(env, args.one_tenant))
        finally:
            if server is not None:
                server.cleanup()
    print(json.dumps(result, indent=1, ensure_ascii=False) if args.json else markdown(result, args.backend))


def postgres_url():
    """BENCH_DATABASE_URL (an empty database), else a throwaway pgserver with pgvector."""
    import os

    if url := os.environ.get("BENCH_DATABASE_URL"):
        return url, None
    import pgserver
    import psycopg

    server = pgserver.get_server(tempfile.mkdtemp(prefix="mcp-memory-bench-pg-"), cleanup_mode="delete")
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url, server


if __name__ == "__main__":
    main()
