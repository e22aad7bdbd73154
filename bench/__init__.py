"""mcp-memory's benchmarks, run from the repository root as `python -m bench.<group>.<script>`.

harness/ opens services, builds the corpus and times calls; data/ holds the dev sets and their
builders; quality/ measures what recall finds, latency/ how long things take, scale/ both at a
million memories. Figures and the exact commands live in bench/RESULTS.md.

An A/B names the tree under test with PYTHONPATH (`PYTHONPATH=<tree> python -m bench...`), the
way `python bench/<script>.py` did: under `-m` Python puts the working directory first, so it is
moved behind PYTHONPATH here, and `mcp_memory` comes from that tree while `bench` stays this one.
"""

from __future__ import annotations

import os
import sys


def _pythonpath_first() -> None:
    if sys.argv[:1] != ["-m"] or not os.environ.get("PYTHONPATH") or sys.path[:1] not in ([""], [os.getcwd()]):
        return
    first = sys.path.pop(0)
    named = [p for p in os.environ["PYTHONPATH"].split(os.pathsep) if p]
    sys.path.insert(len(named), first)


_pythonpath_first()
