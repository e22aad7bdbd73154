"""Does usage make hubs? Cold against warm recall for candidate usage rules, on MADial-Bench and
the project-memory dev set.

    .venv/bin/python -m bench.quality.usage_rules [--retrieval hybrid] [--rules band-0.05,tie]

Each set is stored once through the real `remember` (local model, SQLite in a temporary
directory, one fixed clock: see bench/quality/retrieval_eval.py for cold and warm). For every mode, the
cold pass is measured once (zero counts: no rule changes it), then one warm pass per rule, each
after its own counted round at the mode's default limit. Printed per set, mode and rule:
R@1/5/10 and the hub statistic, the most questions for which one memory is the top result.

Rules (patched into this process only):

- `band-W`: the access term counts in full at the top relevance, fading to nothing at (1 − W) of
  it; `band-0.05` is the rule before usage became a tie-breaker.
- `tie`: the shipped `ranking.usage_band`, usage orders only candidates whose relevance equals the
  top's.
- `wide-W`: the 0.05 band, but an access counts only when the HIGH top result also stands W clear of
  the next candidate's relevance.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench.data import madial_data as md
from bench.data import project_set_data
from bench.harness.timing import Stopwatch
from bench.quality import project_set
from bench.quality import retrieval_eval as ev
from mcp_memory.core import ranking, recall
from mcp_memory.core.service import MemoryService


def fading(width: float):
    """The band before: the access term in full at the top relevance, fading to nothing at
    (1 - width) of it."""
    return lambda rel_sim: min(1.0, max(0.0, (rel_sim - (1.0 - width)) / width))


RULES = ("band-0.05", "band-0.01", "wide-0.2", "tie")


@contextlib.contextmanager
def rule(service: MemoryService, name: str) -> Iterator[None]:
    kind, _, value = name.partition("-")
    shipped = ranking.usage_band
    if kind != "tie":
        ranking.usage_band = fading(float(value) if kind == "band" else 0.05)
    if kind == "wide":
        lead = float(value)
        confidence = recall.confidence

        def gated(retrieval, results, relevant, terms, answer, high, *near):
            label = confidence(retrieval, results, relevant, terms, answer, high, *near)
            others = [c.relevance for c in relevant if c.memory.id != results[0].memory.id] if results else []
            if label == "high" and results[0].relevance - max(others, default=0.0) < lead:
                service._skip = True  # type: ignore[attr-defined]
            return label

        record = service.counters.record

        def counted(*args, **kwargs):
            if getattr(service, "_skip", False):
                service._skip = False  # type: ignore[attr-defined]
                return None
            return record(*args, **kwargs)

        recall.confidence = gated  # in this process only
        service.counters.record = counted  # type: ignore[method-assign]
    try:
        yield
    finally:
        ranking.usage_band = shipped
        if kind == "wide":
            recall.confidence = confidence


def hub(outcomes: list[ev.Outcome]) -> int:
    tops = Counter(o.ranked[0] for o in outcomes if o.ranked)
    return max(tops.values(), default=0)


async def warm_pass(service, probes, stored, mode, name):
    """recall_pass(warm=True) under `name`; the counters are fresh inside recall_pass, so the
    wide rule's record wrapper is applied to them after that."""
    ev.fresh_counters(service)
    with rule(service, name):
        original = ev.fresh_counters
        ev.fresh_counters = lambda s: None  # keep the wrapped counters made above
        try:
            return await ev.recall_pass(service, probes, stored, mode, True)
        finally:
            ev.fresh_counters = original


async def measure(label, env, items, probes, retrieval, rules) -> list[str]:
    service = await ev.open_retrieval(env, retrieval)
    assert service is not None
    out = []
    try:
        stored = await ev.store(service, items)
        for mode in ev.MODES:
            with rule(service, "tie"):
                cold = await ev.recall_pass(service, probes, stored, mode, False)
            q = ev.quality([o.ranked for o in cold], probes)
            out.append(f"| {label} | {mode} | cold | {q['R@1']:.1f} | {q['R@5']:.1f} | {q['R@10']:.1f} | {hub(cold)} |")
            for name in rules:
                warm = await warm_pass(service, probes, stored, mode, name)
                w = ev.quality([o.ranked for o in warm], probes)
                worse = [k for k in ("R@1", "R@5", "R@10") if w[k] < q[k] - 1e-9]
                out.append(
                    f"| {label} | {mode} | warm, {name} | {w['R@1']:.1f} | {w['R@5']:.1f} | {w['R@10']:.1f} "
                    f"| {hub(warm)} |{' below cold at ' + ', '.join(worse) if worse else ''}"
                )
            print("\n".join(out[-1 - len(rules) :]), flush=True)
    finally:
        await ev.close(service)
    return out


async def main(retrieval: str, rules: list[str]) -> None:
    started = Stopwatch.started()
    print("| set | mode | pass | R@1 | R@5 | R@10 | hub |\n|---|---|---|---|---|---|---|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = md.load()
        items = [
            (f"madial-user-{user}", mid, data.memories[mid], "project")
            for user, pool in sorted(data.pools.items())
            for mid in pool
        ]
        probes = [ev.Probe(f"madial-user-{d.user}", d.query, d.gold) for d in data.dialogues]
        env = {"MEMORY_DB_PATH": str(Path(tmp) / "madial.db"), "HOME": tmp}
        await measure("MADial", env, items, probes, retrieval, rules)
        facts, questions = project_set_data.load()
        items = [(f.tenant, f.id, f.text, f.memory_type) for f in facts]
        env = {"MEMORY_DB_PATH": str(Path(tmp) / "project.db"), "HOME": tmp}
        await measure("project", env, items, project_set.probes(questions, False), retrieval, rules)
    print(f"\n{retrieval} retrieval, {started.running():.0f} s", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retrieval", choices=ev.RETRIEVALS, default="hybrid")
    parser.add_argument("--rules", default=",".join(RULES))
    args = parser.parse_args()
    asyncio.run(main(args.retrieval, args.rules.split(",")))
