"""Probe (not shipped): would the tenant's own vocabulary, or the tenant's own cosine distribution,
tell a question nothing stored answers from one a memory answers? (issue 34; bench/RESULTS.md,
"Questions about things never stored: the tenant's vocabulary and its cosines, tried, not shipped").

    [PROVIDER=local-multilingual] nice .venv/bin/python -m bench.quality.absent_probe

Every dev set's questions are asked through recall's first stage (judgment_data.ask_all, no
second stage: what a refit starts from); each variant adds query-level features to the
calibrator only (the ranker reads them as 0, so no order moves: R@k is main's), refits with
`judgment_fit.fit` on the fit halves exactly as the shipped file is fitted, and reads the test
halves (and the built-in calibration set, all test) offline: AUROC answerable vs absent of the
top's probability, ECE, the built-in absent questions at or above the floor and HIGH. The
variant `[]` is main's model (its bands and AUROCs are the committed ones).

Features tried (per question; `held` is the tenant-vocabulary share main already reads):
- unheld_max: the largest idf share of one query term no memory of the tenant holds;
- unheld_share_n: the share of the query's terms (by count) no memory holds;
- unheld_n: how many (at most 5); specific_held: the idf share of its names and numbers held;
- held_ko / unheld_max_ko: as held / unheld_max, a Korean word read through its character pairs
  only (the whole word with its particle is seldom written elsewhere);
- log_docs: log(1 + the tenant's memories);
- t_mean: the top's cosine less the mean cosine between two of the tenant's memories;
- t_z: the same in standard deviations of those cosines (the tenant's own scale).
"""

from __future__ import annotations

import asyncio
import math
import os
import sys

import numpy as np
import regex

from bench.data.halves import SETS
from bench.quality import judgment_data as jd
from bench.quality import judgment_fit as jf
from bench.quality.judgment_eval import auroc
from mcp_memory.core import judgment
from mcp_memory.core.keywords import TermStats, held_share

BASE_F, BASE_T = judgment.FEATURES, judgment.TOP_FEATURES
_HANGUL = regex.compile(r"\p{Hangul}")
VARIANTS: tuple[tuple[str, ...], ...] = (
    (),
    ("unheld_max",),
    ("unheld_share_n",),
    ("specific_held",),
    ("held_ko", "unheld_max_ko"),
    ("unheld_max", "unheld_n", "specific_held", "log_docs"),
    ("t_mean",),
    ("t_z",),
    ("t_z", "specific_held"),
)


def tenant_cosines(provider: str) -> dict[str, tuple[float, float]]:
    """Each tenant's mean and standard deviation of the cosine between two of its memories."""
    vectors = dict(np.load(jd.CACHE / f"{provider}.npz"))
    by_tenant: dict[str, list[np.ndarray]] = {}
    for devset in jd.dev_sets():
        for m in devset.memories:
            by_tenant.setdefault(m.tenant, []).append(vectors[jd.Vectors.key(m.text)])
    out = {}
    for tenant, rows in by_tenant.items():
        v = np.asarray(rows, dtype=np.float64)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        s = v @ v.T
        off = s[~np.eye(len(v), dtype=bool)]
        out[tenant] = (float(off.mean()), float(off.std())) if len(off) else (0.0, 1.0)
    return out


def query_features(a: jd.Asked, tenant: tuple[float, float]) -> dict[str, float]:
    terms = a.terms
    stats = a.stats if isinstance(a.stats, TermStats) else TermStats(1, {})
    freq = stats.frequency
    idf = {t: stats.idf(t) for t in terms}
    total = sum(idf.values()) or 1.0
    unheld = [t for t in terms if freq.get(t, 0) == 0]
    named = judgment.specific_terms(a.question.text, terms)
    words = [t for t in terms if not (_HANGUL.search(t) and len(t) > 2)]
    total_ko = sum(idf[t] for t in words) or 1.0
    top = max(c.similarity for c in a.candidates)
    return {
        "held": held_share(terms, stats),
        "unheld_max": max((idf[t] / total for t in unheld), default=0.0),
        "unheld_share_n": len(unheld) / len(terms) if terms else 0.0,
        "unheld_n": float(min(len(unheld), 5)),
        "specific_held": (
            sum(idf[t] for t in named if freq.get(t, 0) > 0) / (sum(idf[t] for t in named) or 1.0) if named else 1.0
        ),
        "held_ko": sum(idf[t] for t in words if freq.get(t, 0) > 0) / total_ko if words else 1.0,
        "unheld_max_ko": max((idf[t] / total_ko for t in words if freq.get(t, 0) == 0), default=0.0),
        "log_docs": math.log1p(stats.docs),
        "t_mean": top - tenant[0],
        "t_z": (top - tenant[0]) / max(tenant[1], 1e-3),
    }


def table(asked: list[jd.Asked], extra: tuple[str, ...], scale, tenants, keep) -> tuple[dict, list]:
    """judgment_fit.table's rows for the questions `keep` picks, with the `extra` columns."""
    judgment.FEATURES, judgment.TOP_FEATURES = BASE_F, BASE_T
    built, meta = jf.Rows(), []
    for a in asked:
        q = a.question
        shown = a.candidates[: judgment.SECOND_LOOK]
        if not keep(q) or not shown:
            continue
        rows = judgment.features(q.text, a.terms, a.stats, a.readable, shown, scale)
        extras = query_features(a, tenants[q.tenant])
        if extra:
            rows = np.column_stack([rows] + [np.full(len(shown), extras[k]) for k in extra])
        built.add(q, shown, rows)
        meta.append(q)
    return built.arrays(scale), meta


def judge(entry: dict, data: dict, meta: list) -> tuple[judgment.Model, list]:
    """Each question's top probability, whether the top is gold, whether gold is in the first five."""
    model = judgment.model_from("probe", tuple(data["scale"]), entry)
    x, y, owner, keep = data["x"], data["y"], data["question"], data["left_out"] == 0
    pairs = {(int(a), int(b)) for a, b in data["restated"]}
    bounds = np.flatnonzero(np.diff(np.r_[-1, owner, owner[-1] + 1]))
    out = []
    for qi, (start, end) in enumerate(zip(bounds[:-1], bounds[1:])):
        rows = np.arange(start, end)
        rows = rows[keep[rows]]

        def restated(i: int, j: int, rows: np.ndarray = rows) -> bool:
            a, b = sorted((int(rows[i]), int(rows[j])))
            return (a, b) in pairs

        scores = model.ranker.logits(x[rows])
        order = np.argsort(-scores, kind="stable")
        row = judgment.top_row(x[rows], scores, order, restated)
        row = np.where(np.isnan(row), np.asarray(model.calibrator.mean), row)
        p = 1.0 / (1.0 + math.exp(-float(model.calibrator.logits(row[None, :])[0])))
        out.append((meta[qi], p, bool(y[rows][order[0]]), bool(y[rows][order[:5]].any())))
    return model, out


def ece(p: list[float], ok: list[bool]) -> float:
    pa, oa = np.asarray(p), np.asarray(ok, dtype=float)
    total = 0.0
    for b in range(10):
        m = (pa >= b / 10) & ((pa < (b + 1) / 10) if b < 9 else (pa <= 1.0))
        if m.any():
            total += m.sum() / len(pa) * abs(pa[m].mean() - oa[m].mean())
    return total


def report(model: judgment.Model, judged: list, extra: tuple[str, ...]) -> None:
    by_set: dict[str, list] = {}
    for row in judged:
        by_set.setdefault("madial" if row[0].set == "madial-removed" else row[0].set, []).append(row)
    print(f"== +{list(extra)}  bands {model.bands}")
    for name, rows in sorted(by_set.items()):
        pos = [p for q, p, _, _ in rows if q.gold]
        neg = [p for q, p, _, _ in rows if not q.gold]
        a = auroc(pos, neg)
        r1 = 100 * np.mean([r for q, _, r, _ in rows if q.gold])
        r5 = 100 * np.mean([f for q, _, _, f in rows if q.gold])
        print(
            f"   {name:14s} AUROC {'—' if a is None else f'{a:.3f}'}  ECE {ece([p for _, p, _, _ in rows], [r for _, _, r, _ in rows]):.3f}"
            f"  R@1/5 {r1:.1f}/{r5:.1f}"
        )
    cal = by_set["calibration"]
    b = model.bands
    absent_high = sum(1 for q, p, _, _ in judged if not q.gold and p >= b.high and q.set != "calibration")
    print(
        f"   built-in: absent at or above the floor {sum(1 for q, p, _, _ in cal if not q.gold and p >= b.floor)} of 36,"
        f" right tops below it {sum(1 for q, p, r, _ in cal if q.gold and r and p < b.floor)},"
        f" right HIGH {sum(1 for q, p, r, _ in cal if q.gold and r and p >= b.high)},"
        f" absent HIGH {[q.text for q, p, _, _ in cal if not q.gold and p >= b.high]};"
        f" absent HIGH on the other test halves {absent_high}"
    )


def gates(asked: list[jd.Asked], tenants) -> None:
    """What a cut on one signal alone does to the built-in set: the cut leaving 6 absent questions
    at or above it, and the right answers (gold in the first five) it leaves below; and each
    signal's AUROC answerable vs absent on the test halves' Korean and other questions."""
    cal = [(a, query_features(a, tenants[a.question.tenant])) for a in asked if a.question.set == "calibration"]

    def found(a: jd.Asked) -> bool:
        return any(c.memory.id in a.question.gold for c in a.candidates[:5])

    for name in ("held", "t_z"):
        absent = sorted(f[name] for a, f in cal if not a.question.gold)
        cut = absent[-6]
        lost = sum(1 for a, f in cal if a.question.gold and found(a) and f[name] < cut)
        right = sum(1 for a, _ in cal if a.question.gold and found(a))
        print(f"   built-in, {name} alone: a cut leaving 6 absent above it drops {lost} of {right} right answers")
        test = [
            (a, query_features(a, tenants[a.question.tenant]))
            for a in asked
            if a.question.half == "test" and a.question.set in ("project", "conversations", "long-chats", "prompts")
        ]
        for lang in ("ko", "en"):
            rows = [(a, f) for a, f in test if (a.question.lang == "ko") == (lang == "ko")]
            pos = [f[name] for a, f in rows if a.question.gold]
            neg = [f[name] for a, f in rows if not a.question.gold]
            print(f"   test halves, {lang} ({len(pos)} + {len(neg)}): {name} alone AUROC {auroc(pos, neg):.3f}")


def main() -> int:
    from mcp_memory.embedders import PROVIDERS

    provider = os.environ.get("PROVIDER", "local")
    asked = asyncio.run(jd.ask_all(provider, judged=False))
    tenants = tenant_cosines(provider)
    scale = PROVIDERS[provider].calibrated
    print(f"# {provider}")
    skips = jf.RANKER_SKIPS
    try:
        for extra in VARIANTS:
            fit, _ = table(
                asked,
                extra,
                scale,
                tenants,
                lambda q: q.half == "fit" and (q.set in SETS or q.set == "madial-removed"),
            )
            test, meta = table(asked, extra, scale, tenants, lambda q: q.half == "test" or q.set == "calibration")
            judgment.FEATURES, judgment.TOP_FEATURES = BASE_F + extra, BASE_T + extra
            jf.RANKER_SKIPS = skips + extra
            model, judged = judge(jf.fit(fit), test, meta)
            report(model, judged, extra)
    finally:
        judgment.FEATURES, judgment.TOP_FEATURES, jf.RANKER_SKIPS = BASE_F, BASE_T, skips
    gates(asked, tenants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
