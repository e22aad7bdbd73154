"""MADial-Bench (English) for the recall-quality benchmarks: loading, the authors' query, metrics.

Shared by `bench/quality/madial.py` (recall through the service) and the other MADial scripts of
bench/quality/. The data and the protocol are described in
/work/shared/eval/README.md; nothing here is part of the test suite.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DATA_DIR = Path(os.environ.get("MADIAL_DIR", "/work/shared/eval/madial"))
KS = (1, 3, 5, 10, 20)

#: The authors' released retrieval runs (recall@k and hit@5, %), from the eval README.
PUBLISHED: dict[str, tuple[float, ...]] = {
    "OpenAI embeddings": (36.8, 58.0, 69.5, 80.6, 89.6, 90.6),
    "bge-m3": (27.9, 47.3, 55.3, 70.5, 86.0, 78.8),
    "gte": (27.1, 43.7, 52.5, 65.7, 78.0, 75.6),
    "jina": (21.3, 36.9, 44.8, 62.2, 78.4, 67.5),
}


@dataclass(frozen=True)
class Dialogue:
    lines: tuple[str, ...]
    test_turn: int
    gold: frozenset[int]
    user: int

    @property
    def query(self) -> str:
        """The authors' query: every line before the test turn, joined with nothing."""
        return "".join(self.lines[: self.test_turn])


@dataclass(frozen=True)
class MADial:
    memories: dict[int, str]  # MADial id -> event text
    pools: dict[int, list[int]]  # user -> that user's memory ids, in file order
    dialogues: list[Dialogue]  # file order


def load(data_dir: Path = DATA_DIR) -> MADial:
    memories: dict[int, str] = {}
    for line in (data_dir / "MADial-Bench-en-memory.json").read_text(encoding="utf-8").splitlines():
        if line.strip():
            ((key, value),) = json.loads(line).items()
            memories[int(key)] = value["event"]
    pools = {int(u): [int(i) for i in ids] for u, ids in json.loads((data_dir / "user_pools.json").read_text()).items()}
    dialogues = []
    for line in (data_dir / "MADial-Bench-en-dialogue.json").read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            dialogues.append(
                Dialogue(tuple(d["dialogue"]), d["test-turn"][0], frozenset(d["relevant-id"]), d["user-id"])
            )
    for d in dialogues:  # every gold memory must be in the user's own pool, or the protocol is off
        assert d.gold <= set(pools[d.user]), "gold memory outside the user's pool"
    return MADial(memories, pools, dialogues)


def recall_at(ranked: Sequence[int], gold: Iterable[int], k: int) -> float:
    gold = set(gold)
    return len(set(ranked[:k]) & gold) / len(gold)


def hit_at(ranked: Sequence[int], gold: Iterable[int], k: int) -> float:
    return 1.0 if set(ranked[:k]) & set(gold) else 0.0


def scores(rankings: Sequence[Sequence[int]], dialogues: Sequence[Dialogue]) -> tuple[float, ...]:
    """R@1, R@3, R@5, R@10, R@20 and hit@5 in %, averaged over dialogues."""
    n = len(dialogues)
    row = [100 * sum(recall_at(r, d.gold, k) for r, d in zip(rankings, dialogues)) / n for k in KS]
    row.append(100 * sum(hit_at(r, d.gold, 5) for r, d in zip(rankings, dialogues)) / n)
    return tuple(row)


HEADER = "| {} | R@1 | R@3 | R@5 | R@10 | R@20 | hit@5 |\n|---|---|---|---|---|---|---|"


def row(name: str, values: Sequence[float]) -> str:
    return f"| {name} | " + " | ".join(f"{v:.1f}" for v in values) + " |"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} CPUs ({cpu}), load average {load}, Python {platform.python_version()}"
