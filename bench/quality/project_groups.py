"""R@1/5/10 per question group on the project set, cold, for chosen retrievals and modes: the
short run behind a fusion change (bench/quality/project_set.py measures everything, warm too).

    RETS=dense,keyword,hybrid MODES=balanced,exploratory [ONLY=paraphrase-hard] [PROVIDER=local-multilingual] \
        .venv/bin/python -m bench.quality.project_groups

Same storage, model, fixed clock and limit 50 as bench/quality/project_set.py (bench/quality/retrieval_eval.py);
prints each row's groups and its confidence labels as JSON. PROVIDER is the EMBEDDING_PROVIDER
(the local model by default). With PYTHONPATH pointing at another
checkout, it measures that checkout's `mcp_memory` on this tree's data (how the 2026-12-01 bisect
in RESULTS.md was run).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before project_set puts this tree first)
from bench.data import project_set_data
from bench.quality import project_set as ps
from bench.quality import retrieval_eval as ev


async def main() -> None:
    rets = os.environ.get("RETS", "dense,hybrid").split(",")
    modes = os.environ.get("MODES", "balanced").split(",")
    only = os.environ.get("ONLY")
    facts, questions = project_set_data.load()
    items = [(f.tenant, f.id, f.text, f.memory_type) for f in facts]
    probes = [p for p in ps.probes(questions, False) if not only or only in p.group]
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "p.db")}
        if os.environ.get("PROVIDER"):
            env["EMBEDDING_PROVIDER"] = os.environ["PROVIDER"]
        services = {name: await ev.open_retrieval(env, name) for name in rets}
        stored = await ev.store(next(iter(services.values())), items)
        for name, service in services.items():
            for mode in modes:
                outcomes = await ev.recall_pass(service, probes, stored, mode, False)
                rankings = [o.ranked for o in outcomes]
                q = ev.quality(rankings, probes)
                print(name, mode, "all", " ".join(f"{q[f'R@{k}']:.1f}" for k in ev.KS), f"n{q['n']}", flush=True)
                for group, g in ev.by_group(rankings, probes, ps.GROUPS).items():
                    if g["n"]:
                        print(f"  {group:16s}", " ".join(f"{g[f'R@{k}']:.1f}" for k in ev.KS), f"n{g['n']}")
                print("  confidence", json.dumps(ev.confidence(outcomes, probes)))
        for service in services.values():
            await ev.close(service)


if __name__ == "__main__":
    asyncio.run(main())
