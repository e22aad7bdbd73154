"""How `mcp-memory calibrate` prints: the seed's calibration table (cosines), the same
clusters by the relevance recall's floor and HIGH read, a histogram of the two clusters
by relevance, the suggested floor and HIGH threshold with their rules, what the current
and suggested settings do to the measured cases, and the closest calls.
`--json` prints the same numbers; the progress bar goes to stderr, only on a terminal.

Why apart from core/calibration: the measurement is the library's, the report is the terminal's;
the numbers stay the same whichever prints them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp_memory.core.calibration import stats as cs
from mcp_memory.core.calibration.calibrate import CalibrationReport, Progress
from mcp_memory.core.fusion import KEYWORD_WEIGHT

#: How many of the closest calls (lowest correct answers, highest absent questions) to show.
CLOSEST = 5
BAR_WIDTH = 16
ROWS = (
    ("correct", "a correct answer to a question phrased differently"),
    ("nearestOther", "the nearest other memory to that question"),
    ("absent", "a question about something not stored (its nearest memory)"),
    ("reworded", "the same fact reworded"),
    ("typo", "the same fact with a typo"),
)


@contextmanager
def embedding_progress() -> Iterator[Progress | None]:
    """A progress bar on stderr while the texts are embedded; nothing when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    columns = (TextColumn("Embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("embedding", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _r(value: float) -> float:
    return round(value, 4)


def _summary(values: list[float]) -> dict[str, Any] | None:
    s = cs.summarise(values)
    return None if s is None else {"n": s.n, "min": _r(s.min), "median": _r(s.median), "max": _r(s.max)}


def _clusters(r: CalibrationReport) -> dict[str, list[float]]:
    return {
        "correct": r.correct_cosines,
        "nearestOther": r.nearest_other,
        "absent": r.absent_cosines,
        "reworded": r.reworded,
        "typo": r.typos,
    }


RELEVANCE_ROWS = (
    ("correct", "a correct answer to a question phrased differently"),
    ("nearestOther", "the most relevant other memory to that question"),
    ("absent", "a question about something not stored (its most relevant memory)"),
)


def _relevance_clusters(r: CalibrationReport) -> dict[str, list[float]]:
    return {"correct": r.correct_relevance, "nearestOther": r.nearest_other_relevance, "absent": r.absent_relevance}


def scoring(r: CalibrationReport) -> str:
    """What the floor and HIGH read under the configured retrieval, in words."""
    return r.retrieval.reads


def _closest(r: CalibrationReport) -> tuple[list[Any], list[Any]]:
    lowest = sorted(r.correct, key=lambda p: p.score)[:CLOSEST]
    highest = sorted(r.absent, key=lambda p: p.score, reverse=True)[:CLOSEST]
    return lowest, highest


def calibration_json(r: CalibrationReport) -> dict[str, Any]:
    lowest, highest = _closest(r)
    current = r.current()
    return {
        "embedder": r.embedder,
        "source": r.source,
        "tenant": r.tenant,
        "counts": {
            "facts": r.facts,
            "questions": len(r.correct),
            "absent": len(r.absent),
            "reworded": len(r.reworded),
            "typos": len(r.typos),
        },
        "clusters": {name: _summary(values) for name, values in _clusters(r).items()},
        "relevance": {name: _summary(values) for name, values in _relevance_clusters(r).items()},
        "scoring": {
            "retrieval": r.retrieval.name,
            "keywordWeight": KEYWORD_WEIGHT if r.retrieval.fused else None,
            "reads": scoring(r),
        },
        "answeredFirst": r.answered_first,
        "separated": r.floor.separated,
        "suggested": {
            "floor": r.floor.floor,
            "high": r.high.high,
            "floorRule": r.floor.rule,
            "highRule": r.high.rule,
            "clamped": r.floor.clamped,
            "dropsCorrect": r.floor.drops,
            "admitsAbsent": r.floor.admits,
            **r.labelled_high(r.high.high),
        },
        "fewestErrors": {
            "floor": r.fewest_errors.floor,
            "dropsCorrect": r.fewest_errors.drops,
            "admitsAbsent": r.fewest_errors.admits,
        },
        "current": {"floor": r.current_floor, "high": r.current_high, **current},
        "histogram": [{"from": b.low, "to": b.high, "correct": b.correct, "absent": b.absent} for b in _histogram(r)],
        "lowestCorrect": [
            {"cosine": _r(p.cosine), "relevance": _r(p.score), "question": p.question, "memory": p.memory}
            for p in lowest
        ],
        "highestAbsent": [
            {"cosine": _r(p.cosine), "relevance": _r(p.score), "question": p.question, "nearest": p.memory}
            for p in highest
        ],
        "bands": _bands_json(r),
        "probabilityFloor": _probability_floor_json(r),
        "warnings": list(r.warnings),
        "spread": r.spread,
        "environment": _environment(r),
    }


def _environment(r: CalibrationReport) -> dict[str, str]:
    """What to set: the suggested floor and HIGH mark, and, for an embedder recall reads the
    embedder-agnostic model for, the spread it reads cosines on."""
    out = {"RECALL_MIN_SIMILARITY": f"{r.floor.floor:g}", "RECALL_HIGH_SIMILARITY": f"{r.high.high:g}"}
    if _agnostic(r) and r.spread is not None:
        out["RECALL_COSINE_SPREAD"] = f"{r.spread:g}"
    if r.probability_floor is not None:
        out["RECALL_MIN_PROBABILITY"] = f"{r.probability_floor.suggestion.floor:g}"
    return out


def _probability_floor_json(r: CalibrationReport) -> dict[str, Any] | None:
    pf = r.probability_floor
    if pf is None:
        return None
    s = pf.suggestion
    return {
        "floor": s.floor,
        "rule": s.rule,
        "capped": pf.capped or s.clamped,
        "answered": pf.answered,
        "absent": pf.absent,
        "suggested": {"dropsAnswered": s.drops, "admitsAbsent": s.admits},
        "shipped": {"floor": pf.shipped, "dropsAnswered": pf.at_shipped[0], "admitsAbsent": pf.at_shipped[1]},
        "current": {"floor": pf.configured, "dropsAnswered": pf.at_configured[0], "admitsAbsent": pf.at_configured[1]},
    }


def _agnostic(r: CalibrationReport) -> bool:
    """Whether the bands are the embedder-agnostic model's (an embedder with no model of its own)."""
    return r.reliability is not None and r.reliability.scale is not None


def _bands_json(r: CalibrationReport) -> dict[str, Any] | None:
    rel = r.reliability
    if rel is None:
        return None
    starts = {"high": rel.bands.high, "medium": rel.bands.medium, "low": rel.bands.floor, "none": 0.0}
    return {
        "model": rel.model,
        "scale": [round(v, 4) for v in rel.scale] if rel.scale is not None else None,
        "rows": [
            {"band": row.band, "from": starts[row.band], "right": row.right, "wrong": row.wrong, "absent": row.absent}
            for row in rel.rows
        ],
    }


#: How a band is named in the reliability table, and in what words its start is given.
BAND_NAMES = {"high": "HIGH", "medium": "MEDIUM", "low": "LOW", "none": "nothing stored answers"}


def _print_bands(console: Any, r: CalibrationReport) -> None:
    """The relevance model's bands on these cases (docs/recall.md#confidence), or why there are none."""
    from rich.table import Table
    from rich.text import Text

    rel = r.reliability
    if rel is None:
        why = "under this retrieval" if not r.retrieval.fused else "for this embedder"
        console.print(
            Text(
                f"No relevance model {why}: recall labels its answers by the marks above, and gives no probability "
                "(docs/recall.md#confidence).",
                style="yellow",
            )
        )
        return
    b = rel.bands
    starts = {"high": f"≥ {b.high:g}", "medium": f"{b.medium:g}–{b.high:g}", "low": f"{b.floor:g}–{b.medium:g}"}
    model = rel.model
    if rel.scale is not None:
        model = f"the embedder-agnostic model, on the suggested floor and RECALL_COSINE_SPREAD={r.spread:g}"
    table = Table(title=f"what recall answers, by the band of its probability ({model})", title_justify="left")
    table.add_column("band")
    table.add_column("probability", no_wrap=True)
    for name in ("its answer on top", "another on top", "absent"):
        table.add_column(name, justify="right")
    for row in rel.rows:
        table.add_row(
            BAND_NAMES[row.band],
            starts.get(row.band, f"< {b.floor:g}"),
            str(row.right),
            str(row.wrong),
            str(row.absent),
        )
    console.print(table)
    none = rel.row("none")
    asked = sum(row.right + row.wrong for row in rel.rows)
    absent = sum(row.absent for row in rel.rows)
    console.print(
        f"Nothing stored answers: said of {none.absent} of {absent} absent questions and of "
        f"{none.right + none.wrong} of {asked} questions with an answer stored. Recall labels its answers by "
        "these bands; the HIGH mark above applies without a model (dense or keyword retrieval).",
        markup=False,
    )
    if rel.scale is not None:
        console.print(
            Text(
                "This embedder has no relevance model of its own. To have recall label by these bands, give a "
                f"probability and say when nothing stored answers, set RECALL_MIN_SIMILARITY={r.floor.floor:g} "
                f"and RECALL_COSINE_SPREAD={r.spread:g} (above: Suggested); without RECALL_COSINE_SPREAD it labels "
                "by the marks alone (docs/recall.md#an-embedder-without-a-model-of-its-own).",
                style="yellow",
            )
        )


def _print_probability_floor(console: Any, r: CalibrationReport) -> None:
    """RECALL_MIN_PROBABILITY measured on these cases, and what each floor does to them
    (docs/calibration.md#a-probability-floor-of-your-own)."""
    from rich.table import Table

    pf = r.probability_floor
    if pf is None:
        return
    s = pf.suggestion
    console.print(f"  RECALL_MIN_PROBABILITY={s.floor:g}   rule: on the answer's probability, {s.rule}", markup=False)
    if pf.capped or s.clamped:
        console.print(f"  ({pf.capped or s.clamped})", markup=False)
    table = Table(
        title="the probability floor: below it recall says nothing stored answers",
        title_justify="left",
    )
    table.add_column("floor", no_wrap=True)
    table.add_column("drops answered (answer in the first five)", justify="right")
    table.add_column("admits absent", justify="right")
    rows = [(f"the model's own {pf.shipped:g}", pf.at_shipped)]
    if pf.configured != pf.shipped:
        rows.append((f"current {pf.configured:g}", pf.at_configured))
    rows.append((f"suggested {s.floor:g}", (s.drops, s.admits)))
    for name, (drops, admits) in rows:
        table.add_row(name, f"{drops} of {pf.answered}", f"{admits} of {pf.absent}")
    console.print(table)


def _histogram(r: CalibrationReport) -> list[cs.Bin]:
    return cs.histogram(r.correct_relevance, r.absent_relevance, marks=(r.current_floor, r.floor.floor))


def _bar(count: int, most: int) -> str:
    if not count:
        return ""
    return "█" * max(1, round(count / most * BAR_WIDTH)) + f" {count}"


def _short(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def print_calibration(r: CalibrationReport, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(calibration_json(r), ensure_ascii=False, indent=2) + "\n")
        return
    from rich.table import Table
    from rich.text import Text

    from mcp_memory.cli.render import stdout_console

    console = stdout_console()
    where = f'tenant "{r.tenant}"' if r.tenant else "a scratch in-memory store"
    console.print(Text(f"Calibrating {r.embedder} on {r.source} ({where})", style="bold"))
    console.print(
        f"{r.facts} facts, {len(r.correct)} questions, {len(r.absent)} absent questions, "
        f"{len(r.reworded)} rewordings, {len(r.typos)} typos"
    )

    table = Table(title="cosine similarity", title_justify="left")
    table.add_column("")
    for name in ("n", "min", "median", "max"):
        table.add_column(name, justify="right")
    clusters = _clusters(r)
    for key, label in ROWS:
        s = cs.summarise(clusters[key])
        if s is not None:
            table.add_row(label, str(s.n), f"{s.min:.3f}", f"{s.median:.3f}", f"{s.max:.3f}")
    console.print(table)
    console.print(f"{r.answered_first} of {len(r.correct)} questions have their answer as the most relevant memory.")

    fused = Table(title=scoring(r), title_justify="left")
    fused.add_column("")
    for name in ("n", "min", "median", "max"):
        fused.add_column(name, justify="right")
    by_relevance = _relevance_clusters(r)
    for key, label in RELEVANCE_ROWS:
        s = cs.summarise(by_relevance[key])
        if s is not None:
            fused.add_row(label, str(s.n), f"{s.min:.3f}", f"{s.median:.3f}", f"{s.max:.3f}")
    console.print(fused)

    bins = _histogram(r)
    most = max(max(b.correct, b.absent) for b in bins) or 1
    hist = Table(
        title="correct answers and absent questions by relevance, with the floors", title_justify="left", box=None
    )
    hist.add_column("relevance", no_wrap=True)
    hist.add_column("correct answers", style="green", no_wrap=True)
    hist.add_column("absent questions", style="red", no_wrap=True)
    hist.add_column("floor", no_wrap=True)
    for b in reversed(bins):
        marks = []
        if b.low <= r.floor.floor < b.high:
            marks.append(f"◀ suggested {r.floor.floor:g}")
        if b.low <= r.current_floor < b.high:
            marks.append(f"◀ current {r.current_floor:g}")
        hist.add_row(f"{b.low:.2f}–{b.high:.2f}", _bar(b.correct, most), _bar(b.absent, most), "  ".join(marks))
    console.print(hist)

    console.print(Text("Suggested", style="bold"))
    console.print(f"  measured on {scoring(r)}", markup=False)
    console.print(f"  RECALL_MIN_SIMILARITY={r.floor.floor:g}   rule: {r.floor.rule}", markup=False)
    console.print(f"  RECALL_HIGH_SIMILARITY={r.high.high:g}   rule: {r.high.rule}", markup=False)
    if _agnostic(r):
        console.print(
            f"  RECALL_COSINE_SPREAD={r.spread:g}   rule: the median cosine of a correct answer less that of an "
            "absent question's nearest memory (the scale the embedder-agnostic relevance model reads)",
            markup=False,
        )

    n_c, n_a = len(r.correct), len(r.absent)
    now, suggested = r.current(), r.labelled_high(r.high.high)
    effect = Table(title="what each setting does to these cases", title_justify="left")
    effect.add_column("floor / HIGH", no_wrap=True)
    for name in ("drops correct", "admits absent", "correct HIGH", "absent HIGH", "wrong answer HIGH"):
        effect.add_column(name, justify="right")
    effect.add_row(
        f"current {r.current_floor:g} / {r.current_high:g}",
        f"{now['dropsCorrect']} of {n_c}",
        f"{now['admitsAbsent']} of {n_a}",
        f"{now['correctHigh']} of {n_c}",
        f"{now['absentHigh']} of {n_a}",
        f"{now['wrongHigh']}",
    )
    effect.add_row(
        f"suggested {r.floor.floor:g} / {r.high.high:g}",
        f"{r.floor.drops} of {n_c}",
        f"{r.floor.admits} of {n_a}",
        f"{suggested['correctHigh']} of {n_c}",
        f"{suggested['absentHigh']} of {n_a}",
        f"{suggested['wrongHigh']}",
    )
    if not r.floor.separated:
        fe = r.fewest_errors
        effect.add_row(f"fewest errors {fe.floor:g}", f"{fe.drops} of {n_c}", f"{fe.admits} of {n_a}", "", "", "")
    console.print(effect)

    _print_bands(console, r)
    _print_probability_floor(console, r)

    lowest, highest = _closest(r)
    console.print(Text("Closest calls", style="bold"))
    console.print("  lowest correct answers:")
    for p in lowest:
        console.print(f"    {p.score:.3f}  {_short(p.question, 60)}  →  {_short(p.memory)}", markup=False)
    console.print("  highest absent questions (and the memory most relevant to them):")
    for p in highest:
        console.print(f"    {p.score:.3f}  {_short(p.question, 60)}  →  {_short(p.memory)}", markup=False)
    for warning in r.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
