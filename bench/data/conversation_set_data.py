"""The conversational dev set: multi-session chats, each turn a memory, and questions with gold turns.

    python -m bench.data.conversation_set_data          # rebuild turns.jsonl and questions.jsonl
    python -m bench.data.conversation_set_data --check  # exit 1 when the JSONL differs from the source

The chats and questions are written by hand in `bench/data/conversations/src/chats.txt` (format at
its top); this script gives ids and instants (a session's turns one minute apart) and checks that
every gold turn exists. See bench/data/conversations/README.md.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.data.files import jsonl, write_or_check

DATA = Path(__file__).resolve().parent / "conversations"
SOURCE = DATA / "src" / "chats.txt"
TURNS = DATA / "turns.jsonl"
QUESTIONS = DATA / "questions.jsonl"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
_TURN = re.compile(r"(\d+) ([UA]) \| (.+)")
_QUESTION = re.compile(r"Q ([\d,]+) \| (.+)")


@dataclass(frozen=True)
class Turn:
    id: str
    chat: str
    session: int
    role: str  # user, assistant
    at: str
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    chat: str
    lang: str
    text: str
    gold: tuple[str, ...]


def build() -> tuple[list[Turn], list[Question]]:
    turns: list[Turn] = []
    questions: list[Question] = []
    chat, session, at = "", 0, datetime.datetime.min
    for number, raw in enumerate(SOURCE.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = f"{SOURCE.name}:{number}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("chat: "):
            chat, session = line[6:], 0
        elif line.startswith("session: "):
            session += 1
            at = datetime.datetime.fromisoformat(line[9:])
        elif m := _TURN.fullmatch(line):
            tid = f"{chat}-{int(m[1]):02d}"
            if any(t.id == tid for t in turns):
                raise ValueError(f"{where}: turn {tid} twice")
            role = "user" if m[2] == "U" else "assistant"
            turns.append(Turn(tid, chat, session, role, at.isoformat().replace("+00:00", "Z"), m[3]))
            at += datetime.timedelta(minutes=1)
        elif m := _QUESTION.fullmatch(line):
            gold = tuple(f"{chat}-{int(n):02d}" for n in m[1].split(","))
            missing = [g for g in gold if g not in {t.id for t in turns}]
            if missing:
                raise ValueError(f"{where}: unknown turns {missing}")
            n = sum(q.chat == chat for q in questions) + 1
            lang = "ko" if HANGUL.search(m[2]) else "en"
            questions.append(Question(f"{chat}-q{n:02d}", chat, lang, m[2], gold))
        else:
            raise ValueError(f"{where}: not a chat, session, turn or question line")
    return turns, questions


def load() -> tuple[list[Turn], list[Question]]:
    """The committed JSONL (what the benchmark measures)."""
    turns = [Turn(**json.loads(line)) for line in TURNS.read_text(encoding="utf-8").splitlines()]
    questions = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["gold"] = tuple(row["gold"])
        questions.append(Question(**row))
    return turns, questions


def main(argv: list[str]) -> int:
    turns, questions = build()
    if write_or_check({TURNS: jsonl(turns), QUESTIONS: jsonl(questions)}, argv, "bench.data.conversation_set_data"):
        return 1
    chats = sorted({t.chat for t in turns})
    print(f"{len(chats)} chats, {len(turns)} turns, {len(questions)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
