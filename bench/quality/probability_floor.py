"""A probability floor of the operator's own, measured on cases it was not chosen on
(bench/RESULTS.md, "A probability floor of your own"; docs/calibration.md#a-probability-floor-of-your-own).

    nice .venv/bin/python -m bench.quality.probability_floor

The built-in calibration set's questions split in two halves (a fact's questions go with the fact,
facts and absent questions alternating), every fact stored in both. `calibrate` on one half
suggests RECALL_MIN_PROBABILITY; `calibrate` on the other half, with that setting, says what it
does there (answered questions, answer among the first five, told nothing answers; absent
questions admitted), beside the model's own floor. Then the halves swap. Each local model.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace

from mcp_memory.app import calibrate_scratch
from mcp_memory.config import Settings
from mcp_memory.core.calibration.calibrate import Cases, builtin_cases

PROVIDERS = ("local", "local-multilingual")


def halves(cases: Cases) -> tuple[Cases, Cases]:
    """Two cases sets over the same facts: even-numbered facts' questions and absent questions,
    and odd-numbered ones' (rewordings and typos left out: they measure dedup, not recall)."""

    def half(parity: int) -> Cases:
        facts = tuple(
            replace(f, questions=f.questions if i % 2 == parity else (), reworded=(), typos=())
            for i, f in enumerate(cases.facts)
        )
        absent = tuple(a for i, a in enumerate(cases.absent) if i % 2 == parity)
        return replace(cases, source=f"{cases.source}, half {parity}", facts=facts, absent=absent)

    return half(0), half(1)


async def run(provider: str) -> list[str]:
    cases = builtin_cases()
    out = []
    base = {"EMBEDDING_PROVIDER": provider}
    for name, (fit, test) in (("A → B", halves(cases)), ("B → A", halves(cases)[::-1])):
        chosen = await calibrate_scratch(Settings.from_env(base), fit)
        pf = chosen.probability_floor
        assert pf is not None
        floor = pf.suggestion.floor
        measured = await calibrate_scratch(Settings.from_env({**base, "RECALL_MIN_PROBABILITY": f"{floor:g}"}), test)
        t = measured.probability_floor
        assert t is not None
        out.append(
            f"| {provider} | {name} | {floor:g} (fit half: drops {pf.suggestion.drops} of {pf.answered}, admits "
            f"{pf.suggestion.admits} of {pf.absent}) | {t.shipped:g}: drops {t.at_shipped[0]} of {t.answered}, admits "
            f"{t.at_shipped[1]} of {t.absent} | drops {t.at_configured[0]} of {t.answered}, admits "
            f"{t.at_configured[1]} of {t.absent} |"
        )
    return out


def main() -> int:
    print(
        "| model | chosen on → measured on | suggested floor | the model's own floor, measured half | suggested floor, measured half |"
    )
    print("| --- | --- | --- | --- | --- |")
    for provider in PROVIDERS:
        for line in asyncio.run(run(provider)):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
