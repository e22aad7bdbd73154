"""Whether recall's "% of the top result" reads in the order shown, on the sets whose memories carry
their own times (the update set and the conversational set; bench/quality/high_evidence.py's passes).

    nice .venv/bin/python -m bench.quality.standing_order
    PYTHONPATH=<other checkout> nice .venv/bin/python -m bench.quality.standing_order

Counts the answers whose first result reads below 100 %, and those where a result reads a lower
share than one shown below it (what newest-first did to the standings before they were read after it).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import mcp_memory  # noqa: F401  (first: from PYTHONPATH, before this tree is put on the path)
from bench.quality import high_evidence as he
from mcp_memory.core.service import MemoryService


async def main() -> None:
    seen: list[tuple[bool, bool]] = []
    recall = MemoryService.recall

    async def watched(self, *args, **kwargs):
        result = await recall(self, *args, **kwargs)
        shares = [r.standing for r in result.results]
        seen.append((bool(shares) and shares[0] < 1.0, any(a < b for a, b in zip(shares, shares[1:]))))
        return result

    MemoryService.recall = watched  # type: ignore[method-assign]  # in this process only
    for name in ("updates", "conversations"):
        seen.clear()
        with tempfile.TemporaryDirectory() as tmp:
            await he.timed(name, {"HOME": tmp, "MEMORY_DB_PATH": str(Path(tmp) / "h.db")}, "hybrid")
        print(
            json.dumps(
                {
                    "set": name,
                    "answers": len(seen),
                    "first below 100 %": sum(a for a, _ in seen),
                    "a lower share above a higher": sum(b for _, b in seen),
                }
            )
        )


if __name__ == "__main__":
    asyncio.run(main())
