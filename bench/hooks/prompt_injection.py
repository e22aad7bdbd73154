"""What the prompt hook injects on the prompt dev set (bench/data/prompts), through the hook's own
answer (mcp_memory/server/hooks/answers.py: recall in precision mode, then the injection rule).

    [PROVIDER=local-multilingual] [HALF=test|fit|all] nice python -m bench.hooks.prompt_injection [--json]

The set's 27 memories are held in an in-memory store under their ids (bench/quality/
judgment_data.py), and each prompt of the half (the test half by default: the fit half chose the
threshold) is answered with the hook's defaults at each setting, side by side in one run: as
before the relevance model (`service.judge = None`: the rule-based HIGH), and with it at
MEMORY_HOOK_MIN_CONFIDENCE=high (the probability's HIGH band, the hooks' rule until the default
changed), medium, and likely (the answer's probability against the hooks' threshold, the
default). Reported for each: related prompts whose gold memory was injected, related prompts
given only other memories, and unrelated prompts given anything (the target is none).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence

from bench.quality import judgment_data as jd

#: (row name, MEMORY_HOOK_MIN_CONFIDENCE): "no model" is the rule-based label without the relevance model.
RULES = (("no model", "high"), ("high", "high"), ("medium", "medium"), ("likely", "likely"))


async def run(provider: str, half: str) -> dict[str, dict[str, int]]:
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller
    from mcp_memory.embedders import open_embedder
    from mcp_memory.server.hooks.answers import answer
    from mcp_memory.server.hooks.wire import Ask

    embedder = open_embedder(Settings.from_env({"EMBEDDING_PROVIDER": provider}).embedding)
    vectors = jd.Vectors(provider, embedder)
    try:
        (devset,) = jd.dev_sets(["prompts"])
        devset.questions = [q for q in devset.questions if half == "all" or q.half == half]
        service = await jd.open_set_service(provider, devset, vectors)
        out = {}
        judge = service.judge
        for name, min_confidence in RULES:
            service.judge = None if name == "no model" else judge
            counts = {"related": 0, "gold_injected": 0, "other_injected": 0, "unrelated": 0, "unrelated_injected": 0}
            for q in devset.questions:
                ask = Ask("prompt", q.tenant, prompt=q.text, min_confidence=min_confidence)
                _, ids = await answer(service, Caller(q.tenant), ask)
                if q.gold:
                    counts["related"] += 1
                    counts["gold_injected"] += bool(q.gold & set(ids))
                    counts["other_injected"] += bool(ids) and not q.gold & set(ids)
                else:
                    counts["unrelated"] += 1
                    counts["unrelated_injected"] += bool(ids)
            out[name] = counts
        vectors.save()
        return out
    finally:
        await embedder.close()


def main(argv: Sequence[str]) -> int:
    provider = os.environ.get("PROVIDER", "local")
    half = os.environ.get("HALF", "test")
    results = asyncio.run(run(provider, half))
    if "--json" in argv:
        print(json.dumps({"provider": provider, "half": half, **results}))
        return 0
    for name, c in results.items():
        print(
            f"{provider} {half} {name:8s}: related {c['gold_injected']}/{c['related']} got their memory "
            f"({c['other_injected']} only another), unrelated {c['unrelated_injected']}/{c['unrelated']} got one"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
