"""The update dev set: old/new fact pairs and questions whose right answer is the newer fact.

    python -m bench.data.update_set_data          # rebuild pairs.jsonl from bench/data/updates/src/updates.txt
    python -m bench.data.update_set_data --check  # exit 1 when the JSONL differs from the source

The pairs are written by hand in `bench/data/updates/src/updates.txt` (format at its top). This
script only assembles them: ids, language, and the instants each fact was remembered at (the newer
always later, by a gap that cycles from minutes to weeks, several on the same day). Nothing here is
generated text. See bench/data/updates/README.md.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.data.files import jsonl, write_or_check

DATA = Path(__file__).resolve().parent / "updates"
SOURCE = DATA / "src" / "updates.txt"
PAIRS = DATA / "pairs.jsonl"
KINDS = ("number", "version", "name", "negation", "korean")
#: The first fact's instant; pair i's older fact comes 37 minutes after pair i-1's.
START = datetime.datetime(2026, 4, 1, 8, 0, tzinfo=datetime.UTC)
STEP = datetime.timedelta(minutes=37)
#: How long after the older fact the newer one is remembered, cycling over the pairs.
GAPS = tuple(datetime.timedelta(minutes=m) for m in (12, 95, 240, 60 * 24, 60 * 24 * 9, 60 * 24 * 45, 30, 60 * 24 * 3))
HANGUL = re.compile(r"[\uac00-\ud7a3]")
_PAIR = re.compile(r"P (\w+) \| (.+?) \|\| (.+?) \|\| (.+?)(?: \|\| (.+))?")


@dataclass(frozen=True)
class Pair:
    id: str
    kind: str
    lang: str
    old: str
    new: str
    question: str
    #: A question about the earlier state (its right answer is the older fact), or "".
    past_question: str
    old_at: str
    new_at: str


def iso(t: datetime.datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def build() -> list[Pair]:
    pairs: list[Pair] = []
    for number, raw in enumerate(SOURCE.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _PAIR.fullmatch(line)
        if not m or m[1] not in KINDS:
            raise ValueError(f"{SOURCE.name}:{number}: not 'P <kind> | old || new || question [|| past]'")
        i = len(pairs)
        old_at = START + STEP * i
        new_at = old_at + GAPS[i % len(GAPS)]
        language = "ko" if HANGUL.search(m[2]) else "en"
        pairs.append(Pair(f"u{i + 1:03d}", m[1], language, m[2], m[3], m[4], m[5] or "", iso(old_at), iso(new_at)))
    if len({p.old for p in pairs} | {p.new for p in pairs}) != 2 * len(pairs):
        raise ValueError("a fact text occurs twice")
    return pairs


def load() -> list[Pair]:
    """The committed JSONL (what the benchmark measures)."""
    return [Pair(**json.loads(line)) for line in PAIRS.read_text(encoding="utf-8").splitlines()]


def main(argv: list[str]) -> int:
    pairs = build()
    if write_or_check({PAIRS: jsonl(pairs)}, argv, "bench.data.update_set_data"):
        return 1
    print(
        f"{len(pairs)} pairs ("
        + ", ".join(f"{k} {sum(p.kind == k for p in pairs)}" for k in KINDS)
        + f"), {sum(bool(p.past_question) for p in pairs)} questions about the earlier state"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
