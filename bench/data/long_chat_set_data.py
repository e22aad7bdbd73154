"""The long-chat dev set: long two-person conversations over several sessions, each turn a memory,
with answerable questions (gold turns) and questions nothing in the chat answers.

    python -m bench.data.long_chat_set_data          # rebuild turns.jsonl and questions.jsonl
    python -m bench.data.long_chat_set_data --check  # exit 1 when the JSONL differs from the source

The chats and questions are written by hand in `bench/data/long_chats/src/chats.txt` (format at its
top); this script gives ids and instants (a session's turns one minute apart), stores each turn's
text as "<speaker>: <text>" (how a chat is remembered turn by turn) and checks that every gold turn
exists and every speaker is one of the chat's two. See bench/data/long_chats/README.md.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.data.files import jsonl, write_or_check

DATA = Path(__file__).resolve().parent / "long_chats"
SOURCE = DATA / "src" / "chats.txt"
TURNS = DATA / "turns.jsonl"
QUESTIONS = DATA / "questions.jsonl"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
_TURN = re.compile(r"(\d+) (\S+) \| (.+)")
_QUESTION = re.compile(r"Q ([\d,]+)(?: \[(\w+)\])? \| (.+)")
_ABSENT = re.compile(r"X \[(\w+)\] \| (.+)")
ANSWERABLE_KINDS = ("fact", "reply", "multi", "temporal", "update")
ABSENT_KINDS = ("near", "unrelated")


@dataclass(frozen=True)
class Turn:
    id: str
    chat: str
    session: int
    speaker: str
    at: str
    #: What is remembered: "<speaker>: <what they said>".
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    chat: str
    lang: str
    kind: str
    text: str
    #: The turns that answer it; empty for a question nothing in the chat answers.
    gold: tuple[str, ...]


def build(source: Path = SOURCE) -> tuple[list[Turn], list[Question]]:
    turns: list[Turn] = []
    questions: list[Question] = []
    chat, speakers, session, at = "", (), 0, datetime.datetime.min
    for number, raw in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = f"{source.name}:{number}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("chat: "):
            chat, session, speakers = line[6:], 0, ()
        elif line.startswith("speakers: "):
            speakers = tuple(s.strip() for s in line[10:].split(","))
        elif line.startswith("session: "):
            session += 1
            at = datetime.datetime.fromisoformat(line[9:])
        elif m := _TURN.fullmatch(line):
            tid = f"{chat}-{int(m[1]):02d}"
            if any(t.id == tid for t in turns):
                raise ValueError(f"{where}: turn {tid} twice")
            if m[2] not in speakers:
                raise ValueError(f"{where}: {m[2]} is not one of {speakers}")
            stamp = at.isoformat().replace("+00:00", "Z")
            turns.append(Turn(tid, chat, session, m[2], stamp, f"{m[2]}: {m[3]}"))
            at += datetime.timedelta(minutes=1)
        elif m := _QUESTION.fullmatch(line):
            gold = tuple(f"{chat}-{int(n):02d}" for n in m[1].split(","))
            missing = [g for g in gold if g not in {t.id for t in turns}]
            if missing:
                raise ValueError(f"{where}: unknown turns {missing}")
            kind = m[2] or "fact"
            if kind not in ANSWERABLE_KINDS:
                raise ValueError(f"{where}: kind {kind} is not one of {ANSWERABLE_KINDS}")
            questions.append(_question(questions, chat, kind, m[3], gold))
        elif m := _ABSENT.fullmatch(line):
            if m[1] not in ABSENT_KINDS:
                raise ValueError(f"{where}: kind {m[1]} is not one of {ABSENT_KINDS}")
            questions.append(_question(questions, chat, m[1], m[2], ()))
        else:
            raise ValueError(f"{where}: not a chat, speakers, session, turn or question line")
    return turns, questions


def _question(questions: list[Question], chat: str, kind: str, text: str, gold: tuple[str, ...]) -> Question:
    n = sum(q.chat == chat for q in questions) + 1
    return Question(f"{chat}-q{n:02d}", chat, "ko" if HANGUL.search(text) else "en", kind, text, gold)


def load() -> tuple[list[Turn], list[Question]]:
    """The committed JSONL (what the benchmarks measure)."""
    turns = [Turn(**json.loads(line)) for line in TURNS.read_text(encoding="utf-8").splitlines()]
    questions = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["gold"] = tuple(row["gold"])
        questions.append(Question(**row))
    return turns, questions


def main(argv: list[str]) -> int:
    turns, questions = build()
    if write_or_check({TURNS: jsonl(turns), QUESTIONS: jsonl(questions)}, argv, "bench.data.long_chat_set_data"):
        return 1
    chats = sorted({t.chat for t in turns})
    absent = sum(not q.gold for q in questions)
    print(f"{len(chats)} chats, {len(turns)} turns, {len(questions) - absent} answerable and {absent} absent questions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
