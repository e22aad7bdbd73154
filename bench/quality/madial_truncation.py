"""How the query is cut to the model's window, measured on MADial-Bench (raw embedder R@k).

    .venv/bin/python -m bench.quality.madial_truncation

MADial's query is a dialogue prefix, and the turn the assistant must answer comes right after
its END; the local model reads at most 256 tokens and keeps the START of a text. This compares,
with exact cosine over each user's memories (no gates, no ranking):

- how the production embedder cuts (keep the first 256 tokens) against keeping the last 256,
  and both at 128 tokens (the window all-MiniLM-L6-v2 was trained with);
- embedding only the last 1, 2 or 4 lines of the dialogue;
- one vector from several: the mean of the per-line embeddings, plain and weighted towards the
  end (weight halves per line back), and the mean of 128-token windows;
- a multi-vector reference: each memory scored by its best cosine with any single line
  (needs one store query per line; not a drop-in change).

Memories are embedded exactly as `remember` does. The query variants run the same model and
pooling (mcp_memory.embedders.local.minilm) with their own tokenizer settings; the production row
goes through the public LocalEmbedder and the harness checks its own keep-the-start row agrees.
"""

from __future__ import annotations

import asyncio
import datetime
import time
from collections.abc import Callable

import numpy as np

from bench.data import madial_data as md
from mcp_memory.embedders.local import minilm as _minilm
from mcp_memory.embedders.local.embedder import MODEL_SHA256, TOKENIZER_SHA256, LocalEmbedder


class Runtime:
    """The production model with tokenizers that cut from either side, at any length."""

    def __init__(self) -> None:
        model = _minilm.read_verified(_minilm.default_model_path(), MODEL_SHA256, "model", _minilm.MODEL_REMEDY)
        tok = _minilm.read_verified(_minilm.default_tokenizer_path(), TOKENIZER_SHA256, "tokenizer", "")
        self.json = tok.decode("utf-8")
        self.model = _minilm.MiniLM.load(model, self.json)
        self._tokenizers: dict[tuple[int | None, str], object] = {}

    def tokenizer(self, max_tokens: int | None, side: str):
        key = (max_tokens, side)
        if key not in self._tokenizers:
            import tokenizers

            t = tokenizers.Tokenizer.from_str(self.json)
            t.no_padding()
            if max_tokens is None:
                t.no_truncation()
            else:  # "left" drops tokens from the start, i.e. keeps the end
                t.enable_truncation(max_length=max_tokens, direction="left" if side == "end" else "right")
            self._tokenizers[key] = t
        return self._tokenizers[key]

    def embed(self, text: str, max_tokens: int = _minilm.MAX_TOKENS, keep: str = "start") -> np.ndarray:
        e = self.tokenizer(max_tokens, keep).encode(text)
        encoded = _minilm.Encoded(np.asarray(e.ids, dtype=np.int64), np.asarray(e.type_ids, dtype=np.int64))
        return self.model.embed([encoded])[0]

    def windows(self, text: str, size: int, from_end: bool = False) -> list[np.ndarray]:
        """The text's tokens cut into consecutive windows of `size` (with [CLS]/[SEP] each);
        `from_end` aligns the cuts to the end, so the short window is the first one."""
        whole = self.tokenizer(None, "start")
        ids = whole.encode(text).ids[1:-1]  # without [CLS] and [SEP]
        cls, sep = whole.token_to_id("[CLS]"), whole.token_to_id("[SEP]")
        body = size - 2
        cuts = range(len(ids), 0, -body) if from_end else range(0, len(ids), body)
        spans = [(max(0, c - body), c) for c in cuts] if from_end else [(c, c + body) for c in cuts]
        out = []
        for lo, hi in spans:
            chunk = np.asarray([cls, *ids[lo:hi], sep], dtype=np.int64)
            out.append(self.model.embed([_minilm.Encoded(chunk, np.zeros_like(chunk))])[0])
        return out


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def turns(d: md.Dialogue) -> list[str]:
    """The query's lines without the "<BOD>" marker."""
    return [line for line in d.lines[: d.test_turn] if line.strip() != "<BOD>"]


def paired_ci(base: np.ndarray, other: np.ndarray, rounds: int = 10_000) -> tuple[float, float]:
    """95 % paired bootstrap interval of mean(other - base), in points (queries resampled)."""
    diff = other - base
    rng = np.random.default_rng(8)
    means = diff[rng.integers(0, len(diff), size=(rounds, len(diff)))].mean(axis=1)
    return 100 * float(np.percentile(means, 2.5)), 100 * float(np.percentile(means, 97.5))


def per_query(rankings: list[list[int]], data: md.MADial, k: int) -> np.ndarray:
    return np.asarray([md.recall_at(r, d.gold, k) for r, d in zip(rankings, data.dialogues)])


def ranked_by(q: np.ndarray, pool: list[int], vectors: dict[int, np.ndarray]) -> list[int]:
    sims = {mid: float(np.dot(q, vectors[mid])) for mid in pool}
    return sorted(sims, key=sims.__getitem__, reverse=True)


async def main() -> None:
    data = md.load()
    started = time.perf_counter()
    embedder = LocalEmbedder()
    try:
        vectors = {mid: (await embedder.embed([text]))[0] for mid, text in data.memories.items()}
        production = [(await embedder.embed([d.query]))[0] for d in data.dialogues]
    finally:
        await embedder.close()
    rt = Runtime()
    drift = max(float(np.max(np.abs(rt.embed(d.query) - p))) for d, p in zip(data.dialogues, production))
    assert drift < 1e-5, f"harness keep-the-start differs from LocalEmbedder by {drift}"
    n_tokens = [len(rt.tokenizer(None, "start").encode(d.query).ids) for d in data.dialogues]

    def weighted(d: md.Dialogue) -> np.ndarray:
        lines = turns(d)
        weights = [0.5 ** (len(lines) - 1 - i) for i in range(len(lines))]
        return unit(sum(w * rt.embed(line) for w, line in zip(weights, lines)))

    variants: list[tuple[str, Callable[[md.Dialogue], np.ndarray]]] = [
        ("(a) keep the first 256 tokens (production)", None),
        ("(b) keep the last 256 tokens", lambda d: rt.embed(d.query, 256, "end")),
        ("keep the first 128 tokens", lambda d: rt.embed(d.query, 128, "start")),
        ("keep the last 128 tokens", lambda d: rt.embed(d.query, 128, "end")),
        ("last line only (the user's turn)", lambda d: rt.embed(turns(d)[-1])),
        ("last 2 lines", lambda d: rt.embed("".join(turns(d)[-2:]))),
        ("last 4 lines", lambda d: rt.embed("".join(turns(d)[-4:]))),
        ("mean of per-line vectors", lambda d: unit(np.mean([rt.embed(line) for line in turns(d)], axis=0))),
        ("per-line mean, weight halving per line back", weighted),
        ("mean of 128-token windows", lambda d: unit(np.mean(rt.windows(d.query, 128), axis=0))),
        ("mean of 128-token windows cut from the end", lambda d: unit(np.mean(rt.windows(d.query, 128, True), axis=0))),
        ("mean of 256-token windows", lambda d: unit(np.mean(rt.windows(d.query, 256), axis=0))),
    ]
    rows = []
    for name, fn in variants:
        qs = production if fn is None else [fn(d) for d in data.dialogues]
        rankings = [ranked_by(q, data.pools[d.user], vectors) for q, d in zip(qs, data.dialogues)]
        rows.append((name, md.scores(rankings, data.dialogues), rankings))
    multi = []
    for d in data.dialogues:  # best single-line cosine per memory
        lines = np.stack([rt.embed(line) for line in turns(d)])
        best = {mid: float(np.max(lines @ vectors[mid])) for mid in data.pools[d.user]}
        multi.append(sorted(best, key=best.__getitem__, reverse=True))
    rows.append(("multi-vector: best cosine over single lines", md.scores(multi, data.dialogues), multi))

    long = [i for i, n in enumerate(n_tokens) if n > 256]
    print(
        f"MADial-Bench en, raw embedder (exact cosine, no gates), {len(data.dialogues)} queries; query length "
        f"in tokens with [CLS]/[SEP]: median {np.median(n_tokens):g}, p90 {np.percentile(n_tokens, 90):g}, "
        f"max {max(n_tokens)}; {len(long)} queries over 256 tokens, {sum(n > 128 for n in n_tokens)} over 128"
    )
    print(
        f"{datetime.date.today()}, {md.machine()}, {time.perf_counter() - started:.0f} s; "
        f"harness vs LocalEmbedder max |Δ| {drift:.1e}\n"
    )
    print(
        "| query embedding | R@1 | R@3 | R@5 | R@10 | R@20 | hit@5 | ΔR@5 vs (a), 95 % CI | R@5 on the "
        f"{len(long)} queries > 256 tokens |\n|---|---|---|---|---|---|---|---|---|"
    )
    base = per_query(rows[0][2], data, 5)
    for name, values, rankings in rows:
        sub = md.scores([rankings[i] for i in long], [data.dialogues[i] for i in long])[2] if long else float("nan")
        lo, hi = paired_ci(base, per_query(rankings, data, 5))
        delta = values[2] - rows[0][1][2]
        print(md.row(name, values) + f" {delta:+.1f} ({lo:+.1f} … {hi:+.1f}) | {sub:.1f} |")


if __name__ == "__main__":
    asyncio.run(main())
