"""The project-memory dev set: its hand-written sources, the JSONL built from them, and a loader.

    python -m bench.data.project_set_data          # rebuild facts.jsonl and questions.jsonl from src/*.txt
    python -m bench.data.project_set_data --check  # exit 1 when the JSONL differs from the sources

The facts and questions are written by hand in `bench/data/project_memory/src/<project>.txt`
(one file per fictional team; the line format is described at the top of each file). This script
only assembles them: it gives every line an id, derives the question's language and checks the
shape (unique ids, every gold id exists, a `number` question contains a digit). Nothing here is
generated text. See bench/data/project_memory/README.md.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.data.files import jsonl, write_or_check

DATA = Path(__file__).resolve().parent / "project_memory"
SOURCES = DATA / "src"
FACTS = DATA / "facts.jsonl"
QUESTIONS = DATA / "questions.jsonl"

FACT_TYPES = ("decision", "convention", "command", "fix", "version", "host", "config", "role", "deadline", "incident")
#: How a fact is stored: conventions are patterns, commands and fixes are reference, the rest project.
MEMORY_TYPE = {"convention": "pattern", "command": "reference", "fix": "reference"}
KINDS = {"para": "paraphrase", "id": "identifier", "num": "number", "hard": "paraphrase-hard"}
ABSENT_KINDS = {"plain": "absent", "near": "near-miss"}
HANGUL = re.compile(r"[\uac00-\ud7a3]")

_FACT = re.compile(r"F (\d+) (\w+) \| (.+)")
_QUESTION = re.compile(r"Q (\w+) ([\d,]+) \| (.+)")
_ABSENT = re.compile(r"A (\w+)(?: ([\d,]+))? \| (.+)")
_HEADER = re.compile(r"(project|tenant): (\S+)")


@dataclass(frozen=True)
class Fact:
    id: str
    project: str
    tenant: str
    type: str
    memory_type: str
    lang: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    project: str
    tenant: str
    kind: str  # paraphrase, identifier, number, paraphrase-hard; absent, near-miss when nothing stored answers it
    lang: str
    text: str
    gold: tuple[str, ...] = ()
    #: For a near-miss: the stored facts that share its words but do not answer it.
    near: tuple[str, ...] = field(default=())

    @property
    def absent(self) -> bool:
        return not self.gold


def lang(text: str) -> str:
    return "ko" if HANGUL.search(text) else "en"


def parse(path: Path) -> tuple[list[Fact], list[Question]]:
    """One source file: its header, facts, questions and absent questions, in file order."""
    header: dict[str, str] = {}
    facts: list[Fact] = []
    questions: list[Question] = []
    absent = 0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name}:{number}"
        if m := _HEADER.fullmatch(line):
            header[m[1]] = m[2]
            continue
        project, tenant = header["project"], header["tenant"]
        ids = lambda numbers: tuple(f"{project}-{int(n):02d}" for n in numbers.split(","))  # noqa: E731
        if m := _FACT.fullmatch(line):
            if m[2] not in FACT_TYPES:
                raise ValueError(f"{where}: unknown fact type {m[2]!r}")
            memory_type = MEMORY_TYPE.get(m[2], "project")
            facts.append(Fact(f"{project}-{int(m[1]):02d}", project, tenant, m[2], memory_type, lang(m[3]), m[3]))
        elif m := _QUESTION.fullmatch(line):
            if m[1] not in KINDS:
                raise ValueError(f"{where}: unknown question kind {m[1]!r}")
            if m[1] == "num" and not re.search(r"\d", m[3]):
                raise ValueError(f"{where}: a number question without a digit")
            qid = f"{project}-q{len(questions) - absent + 1:03d}"
            questions.append(Question(qid, project, tenant, KINDS[m[1]], lang(m[3]), m[3], ids(m[2])))
        elif m := _ABSENT.fullmatch(line):
            if m[1] not in ABSENT_KINDS or (m[1] == "near") != bool(m[2]):
                raise ValueError(f"{where}: an absent question is 'A plain | …' or 'A near <facts> | …'")
            absent += 1
            near = ids(m[2]) if m[2] else ()
            questions.append(
                Question(f"{project}-a{absent:02d}", project, tenant, ABSENT_KINDS[m[1]], lang(m[3]), m[3], (), near)
            )
        else:
            raise ValueError(f"{where}: not a header, fact, question or absent line")
    return facts, questions


def build() -> tuple[list[Fact], list[Question]]:
    facts: list[Fact] = []
    questions: list[Question] = []
    for path in sorted(SOURCES.glob("*.txt")):
        f, q = parse(path)
        facts += f
        questions += q
    known = {f.id for f in facts}
    if len(known) != len(facts):
        raise ValueError("duplicate fact ids")
    if len({q.id for q in questions}) != len(questions):
        raise ValueError("duplicate question ids")
    for q in questions:
        missing = [g for g in (*q.gold, *q.near) if g not in known]
        if missing:
            raise ValueError(f"{q.id}: unknown fact ids {missing}")
    return facts, questions


def load() -> tuple[list[Fact], list[Question]]:
    """The committed JSONL (what the benchmark measures)."""
    facts = [Fact(**json.loads(line)) for line in FACTS.read_text(encoding="utf-8").splitlines()]
    questions = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["gold"], row["near"] = tuple(row["gold"]), tuple(row["near"])
        questions.append(Question(**row))
    return facts, questions


def main(argv: list[str]) -> int:
    facts, questions = build()
    if write_or_check({FACTS: jsonl(facts), QUESTIONS: jsonl(questions)}, argv, "bench.data.project_set_data"):
        return 1
    answerable = [q for q in questions if not q.absent]
    print(
        f"{len(facts)} facts ({sum(f.lang == 'ko' for f in facts)} Korean), {len(answerable)} questions "
        f"({sum(q.lang == 'ko' for q in answerable)} Korean; "
        + ", ".join(f"{k} {sum(q.kind == k for q in answerable)}" for k in KINDS.values())
        + f"), {len(questions) - len(answerable)} absent "
        f"({sum(q.kind == 'near-miss' for q in questions)} near-misses)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
