"""Pages from templates: Jinja2 with autoescape on, and memory text shown as text (docs/web.md#security).

Memory content is untrusted text a model wrote. Autoescape turns every `<`, `&` and quote into
an entity; `text` also shows every character a reader cannot see (Unicode's default-ignorable
ones and the controls, as core/invisible.py names them) as a marked code point, so a
right-to-left override cannot make a line read other than it is stored, and a joiner or a
selector the store keeps is seen where a model reads it. Nothing is ever linkified.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from mcp_memory.core.invisible import UNSEEN

#: One character of core/invisible.py's class, or one run of tag characters.
_UNSEEN_RUN = re.compile(f"[\U000e0000-\U000e007f]+|{UNSEEN.pattern}")

#: A run of tag characters (kept only inside a subdivision flag, core/invisible.py): shown as
#: the ASCII they mirror, so a curator reads what a model reads.
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
#: Browse shows this much of each memory; the memory's own page shows all of it.
PREVIEW_CHARS = 280


def _shown(match: re.Match[str]) -> str:
    run = match.group()
    if _TAGS.fullmatch(run):
        spelled = "".join(chr(ord(c) - 0xE0000) for c in run if 0xE0020 <= ord(c) <= 0xE007E)
        codes = " ".join(f"U+{ord(c):04X}" for c in run)
        return f'<span class="ctl" title="tag characters {codes}">tags {escape(spelled)}</span>'
    return f'<span class="ctl">U+{ord(run):04X}</span>'


def text(value: object) -> Markup:
    """`value` escaped, each character a reader cannot see that the store kept (a joiner, a
    direction mark, a variation selector, a flag's tag characters, a filler inside a Hangul
    syllable: core/invisible.py) or an older row still holds shown as a marked code point, so
    the curator sees every character the model reads (docs/web.md#security)."""
    escaped = str(escape(str(value)))
    return Markup(_UNSEEN_RUN.sub(_shown, escaped))


def preview(value: str) -> Markup:
    return text(value if len(value) <= PREVIEW_CHARS else value[:PREVIEW_CHARS].rstrip() + " …")


def day(value: str) -> str:
    return value[:10]


def when(value: str) -> str:
    """An ISO time as `2026-07-01 14:30 UTC`; empty stays empty."""
    return f"{value[:10]} {value[11:16]} UTC" if len(value) >= 16 else value


def percent(value: float) -> str:
    return f"{round(value * 100)}%"


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("mcp_memory.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # the templates ship in the package: no stat per include
    )
    env.filters.update(text=text, preview=preview, day=day, when=when, percent=percent)
    return env


#: The growth chart's frame: room left for the axis's values, below for the days, above for the
#: bars' values; a bar is never wider than BAR_MAX, so one day is a bar, not the whole chart.
CHART_LEFT, CHART_RIGHT, CHART_TOP, CHART_BOTTOM = 40, 8, 18, 22
BAR_MAX = 48
#: Up to this many bars each carry their value above them.
VALUES_SHOWN = 31


def growth_chart(times_ms: Sequence[float], *, width: int = 400, height: int = 180) -> dict[str, Any]:
    """Memories stored per day (or per month past 120 days), as bars on two axes for an inline
    SVG: the server draws it, so the page needs no script (docs/web.md#stats)."""
    frame = {"width": width, "height": height, "left": CHART_LEFT, "right": width - CHART_RIGHT}
    frame.update(top=CHART_TOP, bottom=height - CHART_BOTTOM)
    if not times_ms:
        return {"bars": [], "unit": "day", "peak": 0, "values": False, **frame}
    days = [datetime.fromtimestamp(t / 1000, tz=UTC).date() for t in times_ms if math.isfinite(t)]
    first, last = min(days), max(days)
    monthly = (last - first).days > 120
    counts: dict[str, int] = {}
    for d in days:
        label = d.strftime("%Y-%m") if monthly else d.isoformat()
        counts[label] = counts.get(label, 0) + 1
    labels = _labels(first, last, monthly)
    peak = max(counts.values())
    plot_w, plot_h = frame["right"] - frame["left"], frame["bottom"] - frame["top"]
    slot = plot_w / len(labels)
    w = max(min(round(slot * 0.8, 1), BAR_MAX), 1)
    bars = []
    for i, label in enumerate(labels):
        count = counts.get(label, 0)
        h = round(plot_h * count / peak, 1) if peak else 0
        x = round(frame["left"] + i * slot + (slot - w) / 2, 1)
        bars.append(
            {
                "x": x,
                "w": w,
                "h": h,
                "y": round(frame["bottom"] - h, 1),
                "mid": round(x + w / 2, 1),
                "label": label,
                "count": count,
            }
        )
    return {
        "bars": bars,
        "unit": "month" if monthly else "day",
        "peak": peak,
        "values": len(bars) <= VALUES_SHOWN,
        **frame,
    }


def _labels(first: Any, last: Any, monthly: bool) -> list[str]:
    from datetime import timedelta

    labels: list[str] = []
    if monthly:
        y, m = first.year, first.month
        while (y, m) <= (last.year, last.month):
            labels.append(f"{y:04d}-{m:02d}")
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        return labels
    d = first
    while d <= last:
        labels.append(d.isoformat())
        d += timedelta(days=1)
    return labels
