"""The prompt dev set: one project's memories, and prompts a developer types into a coding agent,
related (gold: the memories they need) or unrelated (no memory helps). What a hook that injects
memories before each prompt is measured on.

    python -m bench.data.prompt_set_data          # rebuild memories.jsonl and prompts.jsonl
    python -m bench.data.prompt_set_data --check  # exit 1 when the JSONL differs from the source

Written by hand in `bench/data/prompts/src/prompts.txt` (format at its top); this script gives ids
and checks every gold memory exists. See bench/data/prompts/README.md.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.data.files import jsonl, write_or_check

DATA = Path(__file__).resolve().parent / "prompts"
SOURCE = DATA / "src" / "prompts.txt"
MEMORIES = DATA / "memories.jsonl"
PROMPTS = DATA / "prompts.jsonl"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
_FACT = re.compile(r"F (\d+) \| (.+)")
_RELATED = re.compile(r"P ([\d,]+) \| (.+)")
_UNRELATED = re.compile(r"N \| (.+)")


@dataclass(frozen=True)
class Fact:
    id: str
    lang: str
    text: str


@dataclass(frozen=True)
class Prompt:
    id: str
    lang: str
    text: str
    #: The memories it needs; empty for an unrelated prompt.
    gold: tuple[str, ...]


def _lang(text: str) -> str:
    return "ko" if HANGUL.search(text) else "en"


def build() -> tuple[list[Fact], list[Prompt]]:
    facts: list[Fact] = []
    prompts: list[Prompt] = []
    for number, raw in enumerate(SOURCE.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = f"{SOURCE.name}:{number}"
        if not line or line.startswith("#"):
            continue
        if m := _FACT.fullmatch(line):
            facts.append(Fact(f"f{int(m[1]):02d}", _lang(m[2]), m[2]))
        elif m := _RELATED.fullmatch(line):
            gold = tuple(f"f{int(n):02d}" for n in m[1].split(","))
            missing = [g for g in gold if g not in {f.id for f in facts}]
            if missing:
                raise ValueError(f"{where}: unknown memories {missing}")
            prompts.append(Prompt(f"p{len(prompts) + 1:03d}", _lang(m[2]), m[2], gold))
        elif m := _UNRELATED.fullmatch(line):
            prompts.append(Prompt(f"p{len(prompts) + 1:03d}", _lang(m[1]), m[1], ()))
        else:
            raise ValueError(f"{where}: not a memory or prompt line")
    return facts, prompts


def load() -> tuple[list[Fact], list[Prompt]]:
    """The committed JSONL."""
    facts = [Fact(**json.loads(line)) for line in MEMORIES.read_text(encoding="utf-8").splitlines()]
    prompts = []
    for line in PROMPTS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["gold"] = tuple(row["gold"])
        prompts.append(Prompt(**row))
    return facts, prompts


def main(argv: list[str]) -> int:
    facts, prompts = build()
    if write_or_check({MEMORIES: jsonl(facts), PROMPTS: jsonl(prompts)}, argv, "bench.data.prompt_set_data"):
        return 1
    related = sum(bool(p.gold) for p in prompts)
    print(f"{len(facts)} memories, {related} related and {len(prompts) - related} unrelated prompts")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
