"""Questions nothing stored answers, for the conversational dev set (bench/data/conversations).

    python -m bench.data.absent_set_data          # rebuild absent/conversations.jsonl
    python -m bench.data.absent_set_data --check  # exit 1 when the JSONL differs from the source

Written by hand in `bench/data/absent/src/conversations.txt` (format at its top); this script gives
ids and checks every chat named is one of the conversational set's. See bench/data/absent/README.md.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.data import conversation_set_data
from bench.data.files import jsonl, write_or_check

DATA = Path(__file__).resolve().parent / "absent"
SOURCE = DATA / "src" / "conversations.txt"
CONVERSATIONS = DATA / "conversations.jsonl"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
_ABSENT = re.compile(r"X \[(near|unrelated)\] \| (.+)")


@dataclass(frozen=True)
class Absent:
    id: str
    chat: str
    lang: str
    kind: str  # near, unrelated
    text: str


def build() -> list[Absent]:
    chats = {t.chat for t in conversation_set_data.load()[0]}
    out: list[Absent] = []
    chat = ""
    for number, raw in enumerate(SOURCE.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        where = f"{SOURCE.name}:{number}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("chat: "):
            chat = line[6:]
            if chat not in chats:
                raise ValueError(f"{where}: no chat {chat} in the conversational set")
        elif m := _ABSENT.fullmatch(line):
            n = sum(a.chat == chat for a in out) + 1
            out.append(Absent(f"{chat}-x{n:02d}", chat, "ko" if HANGUL.search(m[2]) else "en", m[1], m[2]))
        else:
            raise ValueError(f"{where}: not a chat or question line")
    return out


def load() -> list[Absent]:
    """The committed JSONL."""
    return [Absent(**json.loads(line)) for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines()]


def main(argv: list[str]) -> int:
    rows = build()
    if write_or_check({CONVERSATIONS: jsonl(rows)}, argv, "bench.data.absent_set_data"):
        return 1
    print(f"{len(rows)} absent questions over {len({a.chat for a in rows})} chats")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
