"""What every dev-set builder does with its output: one JSON line per record, and either write
the files or (`--check`) say which committed ones are stale, naming the command that rebuilds them."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path


def jsonl(rows: list) -> str:
    """The records (dataclasses) as JSON lines, non-ASCII kept as written."""
    return "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in rows)


def write_or_check(texts: dict[Path, str], argv: list[str], module: str) -> int:
    """Write each file, or with `--check` compare: 1 (and the stale names on stderr) when any differs."""
    if "--check" in argv:
        stale = [p.name for p, t in texts.items() if not p.exists() or p.read_text(encoding="utf-8") != t]
        if stale:
            print(f"stale: {', '.join(stale)}; run python -m {module}", file=sys.stderr)
            return 1
        return 0
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    return 0
