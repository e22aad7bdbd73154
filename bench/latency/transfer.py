"""Export and import speed, and their peak memory, as an operator runs them (bench/RESULTS.md).

    .venv/bin/python -m bench.latency.transfer [--large 100000] [--small 10000] [--pg 20000] [--local 2000]

Every figure is a `mcp-memory export` / `import` child process, timed from start to exit,
with its own peak RSS (VmHWM); the rate is the memories over that time less the same
command's start-up with nothing to move (a header-only file; a tenant without memories):

1. an export file of `--large` memories with 384-dimension vectors is generated (random unit
   vectors, varied texts; the header names the fake embedder at 384 dimensions, so an import
   configured with EMBEDDING_PROVIDER=fake EMBEDDING_DIM=384 reuses the vectors);
2. import with vectors into SQLite, and export from it, at `--small` and `--large` memories:
   equal peak RSS at both sizes is what streaming looks like;
3. the same into and out of a throwaway PostgreSQL (pgserver) at `--pg` memories;
4. an import of `--local` memories without vectors into SQLite with the local model, which
   re-embeds them, beside the model alone embedding the same texts in the same batches.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench.harness.timing import Stopwatch

ROOT = Path(__file__).resolve().parents[2]
DIM = 384
WORDS = (
    "deploy billing gateway cache queue worker schema index tenant release rollback token "
    "metric alert backup replica shard cron invoice ledger audit review branch pipeline "
    "staging canary budget latency owner runbook secret rotation vendor contract"
).split()


def generate(path: Path, count: int, *, with_embeddings: bool = True) -> None:
    rng = np.random.default_rng(7)
    start_ms = 1_780_000_000_000
    header = {
        "format": "mcp-memory-export",
        "version": 1,
        "exportedBy": "bench/latency/transfer.py",
        "exportedAt": "2026-12-01T00:00:00.000Z",
        "embedding": {"provider": "fake", "model": "fake-bag-of-words", "dim": DIM},
        "withEmbeddings": with_embeddings,
    }
    from mcp_memory.core.ids import iso, ulid

    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for block in range(0, count, 10_000):
            size = min(10_000, count - block)
            vectors = rng.standard_normal((size, DIM)).astype("<f4")
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            picks = rng.integers(0, len(WORDS), (size, 8))
            lines = []
            for j in range(size):
                i = block + j
                words = " ".join(WORDS[k] for k in picks[j])
                record = {
                    "id": ulid(start_ms + i, rng.bytes(16)),
                    "tenant": f"tenant-{i % 4}",
                    "content": f"Fact {i}: the {words} decision holds for service {i % 331}",
                    "type": "project" if i % 5 else "pattern",
                    "category": "decision" if i % 3 == 0 else None,
                    "tags": ["bench", WORDS[picks[j][0]]],
                    "scope": "conversation" if i % 10 == 0 else "project",
                    "conversation": f"thread-{i % 97}" if i % 10 == 0 else None,
                    "createdAt": iso(start_ms + i),
                    "trustBase": 1,
                    "accessCount": 2 if i % 10 == 1 else 0,
                    "lastAccessedAt": iso(start_ms + i + 1000) if i % 10 == 1 else None,
                }
                if with_embeddings:
                    record["embedding"] = base64.b64encode(vectors[j].tobytes()).decode("ascii")
                lines.append(json.dumps(record, separators=(",", ":")))
            out.write("\n".join(lines) + "\n")


def head(source: Path, target: Path, count: int) -> None:
    with source.open("rb") as src, target.open("wb") as out:
        for i, line in enumerate(src):
            if i > count:
                break
            out.write(line)


#: Runs `mcp-memory` and reports its own peak RSS (VmHWM) at exit. ru_maxrss from wait4 would
#: count the pages the child shared with this process when it forked.
_MEASURED = """
import atexit, runpy, sys
def _peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("BENCH-HWM-KB " + line.split()[1] + "\\n")
atexit.register(_peak)
sys.argv = ["mcp-memory", *sys.argv[1:]]
runpy.run_module("mcp_memory", run_name="__main__")
"""


#: CPU seconds (user + system) the last `run` child used: what the machine's load does not change.
last_cpu = 0.0


def run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, stderr text) of `mcp-memory <args>` in a child process."""
    return run_to(args, env, None)


def run_to(args: list[str], env: dict[str, str], stdout: Path | None) -> tuple[float, float, str]:
    """`run`, the child's stdout written to the file `stdout` (None: dropped)."""
    global last_cpu
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = stdout.open("wb") if stdout is not None else subprocess.DEVNULL
    with Stopwatch() as running:
        done = subprocess.run(
            [sys.executable, "-c", _MEASURED, *args],
            env=env,
            cwd=str(ROOT),
            stdout=out,
            stderr=subprocess.PIPE,
            check=False,
        )
    if stdout is not None:
        out.close()  # type: ignore[union-attr]
    elapsed = running.last
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    err = done.stderr.decode()
    if done.returncode != 0:
        raise SystemExit(f"mcp-memory {' '.join(args)} failed: {err[-2000:]}")
    peak = [int(line.split()[1]) for line in err.splitlines() if line.startswith("BENCH-HWM-KB ")]
    return elapsed, peak[-1] / 1024, err


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update({"PYTHONPATH": str(ROOT), "EMBEDDING_PROVIDER": "fake", "EMBEDDING_DIM": str(DIM)})
    env.update(extra)
    return env


def line(label: str, count: int, seconds: float, rss: float, fixed: float) -> dict:
    """One result: wall time (start-up included), and the rate once start-up is taken off."""
    net = max(seconds - fixed, 1e-9)
    row = {
        "what": label,
        "memories": count,
        "seconds": round(seconds, 2),
        "startup_s": round(fixed, 2),
        "per_s": round(count / net),
        "cpu_s": round(last_cpu, 2),
        "rss_mb": round(rss),
    }
    print(
        f"{label:<44} {count:>7} {seconds:>7.2f} s (start-up {fixed:.2f} s) {count / net:>8.0f}/s  "
        f"CPU {last_cpu:>6.2f} s  peak RSS {rss:>5.0f} MB",
        flush=True,
    )
    return row


def startup(env: dict[str, str], root: Path) -> tuple[float, float]:
    """What an import and an export cost with nothing to move: a header-only file, a tenant with no memories."""
    empty = root / "empty.jsonl"
    generate(empty, 0)
    imports = min(run(["import", str(empty)], env)[0] for _ in range(2))
    exports = min(run(["export", "--tenant", "nobody", "-o", str(root / "none.jsonl")], env)[0] for _ in range(2))
    return imports, exports


def transfer_pair(label: str, file: Path, count: int, env: dict[str, str], out: Path) -> list[dict]:
    fixed_import, fixed_export = startup(env, out.parent)
    rows = []
    seconds, rss, _ = run(["import", str(file)], env)
    rows.append(line(f"import with vectors into {label}", count, seconds, rss, fixed_import))
    seconds, rss, _ = run(["export", "--all-tenants", "--with-embeddings", "-o", str(out)], env)
    rows.append(line(f"export with vectors from {label}", count, seconds, rss, fixed_export))
    seconds, rss, _ = run(["export", "--all-tenants", "-o", str(out)], env)
    rows.append(line(f"export without vectors from {label}", count, seconds, rss, fixed_export))
    return rows


async def model_alone(texts: list[str], batch: int) -> float:
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    embedder = LocalEmbedder()
    await embedder.embed(texts[:batch])  # the model loads
    with Stopwatch() as embedding:
        for i in range(0, len(texts), batch):
            await embedder.embed(texts[i : i + batch])
    await embedder.close()
    return embedding.last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--pg", type=int, default=20_000)
    parser.add_argument("--local", type=int, default=2_000)
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    results: dict = {"rows": []}
    with tempfile.TemporaryDirectory(prefix="mcp-memory-transfer-") as tmp:
        root = Path(tmp)
        big = root / "big.jsonl"
        with Stopwatch() as generating:
            generate(big, options.large)
        print(f"generated {options.large} memories in {generating.last:.1f} s ({big.stat().st_size >> 20} MB)")
        for count in (options.small, options.large):
            file = big if count == options.large else root / f"head-{count}.jsonl"
            if file is not big:
                head(big, file, count)
            env = base_env(MEMORY_DB_PATH=str(root / f"sqlite-{count}.db"))
            results["rows"] += transfer_pair("SQLite", file, count, env, root / "out.jsonl")

        import pgserver

        server = pgserver.get_server(str(root / "pg"), cleanup_mode="delete")
        try:
            head(big, root / "pg.jsonl", options.pg)
            env = base_env(DATABASE_URL=server.get_uri())
            results["rows"] += transfer_pair("PostgreSQL", root / "pg.jsonl", options.pg, env, root / "out.jsonl")
        finally:
            server.cleanup()

        plain = root / "plain.jsonl"
        generate(plain, options.local, with_embeddings=False)
        env = {k: v for k, v in base_env(MEMORY_DB_PATH=str(root / "local.db")).items() if k != "EMBEDDING_DIM"}
        env["EMBEDDING_PROVIDER"] = "local"
        fixed, _ = startup(env, root)
        seconds, rss, _ = run(["import", str(plain)], env)
        results["rows"].append(line("import re-embedding with the local model", options.local, seconds, rss, fixed))
        texts = [json.loads(x)["content"] for x in plain.read_text().splitlines()[1:]]
        from mcp_memory.core.transfer.importing import EMBED_BATCH

        alone = asyncio.run(model_alone(texts, EMBED_BATCH))
        print(
            f"{'the model alone, same texts, same batches':<44} {len(texts):>7} {alone:>7.2f} s {len(texts) / alone:>8.0f}/s"
        )
        results["model_alone_s"] = round(alone, 2)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
