"""Importing 10,000 memories from each format of `import --from`, with the local model
(bench/RESULTS.md#importing-other-formats-benchlatencyimport_formatspy).

    .venv/bin/python -m bench.latency.import_formats [--count 10000] [--formats text,...] [--model-count N]

For each format, the same `--count` distinct texts (bench/harness/perf_corpus.py) are written in
that format's shape (a CLAUDE.md of bullets under headings, a memory.jsonl of entities with
observations, a mem0 get_all JSON, an mcp-memory-service export, a folder of basic-memory notes,
a text file), then imported into a new SQLite file by a `mcp-memory import --from` child process
with the local model, timed from start to exit (start-up, model load, embedding, the duplicate
checks and the writes all included), with its CPU seconds, peak RSS and the load average just
before it. Then the same import again (nothing new: every entry a duplicate of the store, found
by its text without the model). Before all that, the model alone embedding the texts in this process,
64 a call (one batch each, in the texts' order) and BULK_WINDOW a call (as import calls it: the
embedder sorts each call by length into batches of 64), with its wall and CPU seconds, for the
floor (first, so that a run cut short still has it; the first `--model-count` texts, all by
default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from bench.harness.perf_corpus import corpus
from bench.latency import transfer
from mcp_memory.core.transfer.remembering import BULK_WINDOW

FORMATS = ("claude-code", "mcp-knowledge-graph", "mem0", "mcp-memory-service", "basic-memory", "text")
#: Entries per heading, entity or note.
GROUP = 20


def write(format_name: str, texts: list[str], root: Path) -> Path:
    """`texts` in `format_name`'s shape under `root`; the path to give `import`."""
    rng = random.Random(5)
    groups = [texts[i : i + GROUP] for i in range(0, len(texts), GROUP)]
    if format_name in ("claude-code", "text"):
        path = root / ("CLAUDE.md" if format_name == "claude-code" else "notes.md")
        lines = ["# Project memory", ""]
        for n, group in enumerate(groups):
            lines += [f"## Section {n}", "", *(f"- {t}" for t in group), ""]
        path.write_text("\n".join(lines), encoding="utf-8")
        return path
    if format_name == "mcp-knowledge-graph":
        path = root / "memory.jsonl"
        rows = [
            json.dumps({"type": "entity", "name": f"Entity_{n}", "entityType": "system", "observations": group})
            for n, group in enumerate(groups)
        ]
        path.write_text("\n".join(rows), encoding="utf-8")
        return path
    if format_name == "mem0":
        path = root / "memories.json"
        results = [
            {
                "id": f"00000000-0000-4000-8000-{i:012d}",
                "memory": t,
                "user_id": "bench",
                "categories": [rng.choice(["work", "ops", "people"])],
                "created_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T10:00:00Z",
            }
            for i, t in enumerate(texts)
        ]
        path.write_text(json.dumps({"count": len(results), "next": None, "previous": None, "results": results}))
        return path
    if format_name == "mcp-memory-service":
        path = root / "export.json"
        memories = [
            {"content": t, "tags": ["bench"], "created_at": 1_750_000_000.0 + i * 60, "memory_type": "note"}
            for i, t in enumerate(texts)
        ]
        path.write_text(json.dumps({"export_metadata": {"exporter_version": "6.2.4"}, "memories": memories}))
        return path
    if format_name == "basic-memory":
        folder = root / "notes"
        folder.mkdir()
        for n, group in enumerate(groups):
            body = "\n".join(f"- [fact] {t}" for t in group)
            note = (
                f"---\ntitle: Note {n}\ntype: note\ntags: [bench]\ncreated: 2025-06-01\n---\n\n# Note {n}\n\n{body}\n"
            )
            (folder / f"note-{n}.md").write_text(note, encoding="utf-8")
        return folder
    raise ValueError(format_name)


def import_once(format_name: str, path: Path, db: Path) -> tuple[float, float, float, dict]:
    """(seconds, CPU seconds, peak RSS MB, the report) of one `import --from` process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env |= {"PYTHONPATH": str(transfer.ROOT), "MEMORY_DB_PATH": str(db)}
    report_file = db.with_suffix(".json")
    args = ["import", "--from", format_name, "--tenant", "bench", "--json", str(path)]
    seconds, rss, _ = transfer.run_to(args, env, report_file)
    return seconds, transfer.last_cpu, rss, json.loads(report_file.read_text())


async def model_alone(texts: list[str], window: int) -> tuple[float, float]:
    """(seconds, CPU seconds of this process) for the local model embedding `texts`, `window` a
    call: 64 is one batch a call in the texts' order; import's BULK_WINDOW lets the embedder sort
    each call by length into its batches of 64."""
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    embedder = LocalEmbedder()
    await embedder.embed(texts[:64])  # the model loads
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(0, len(texts), window):
        await embedder.embed(texts[i : i + window])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await embedder.close()
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--model-count", type=int, help="texts for the model alone (default: --count)")
    options = parser.parse_args()
    texts = corpus(options.count)
    model_count = options.model_count or options.count
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for window in (64, BULK_WINDOW):
        load = os.getloadavg()[0]
        seconds, cpu = asyncio.run(model_alone(texts[:model_count], window))
        rows.append({"format": f"model alone, {window} a call", "run": "", "load": round(load, 2)})
        rows[-1] |= {"entries": model_count, "new": 0, "duplicates": 0, "seconds": round(seconds, 1)}
        rows[-1] |= {"cpu": round(cpu, 1), "rss_mb": 0}
        print(json.dumps(rows[-1]), flush=True)
    with tempfile.TemporaryDirectory(prefix="import-formats-") as scratch:
        for format_name in options.formats.split(","):
            root = Path(scratch) / format_name
            root.mkdir()
            path = write(format_name, texts, root)
            db = root / "memory.db"
            load_first = os.getloadavg()[0]
            first = import_once(format_name, path, db)
            load_again = os.getloadavg()[0]
            again = import_once(format_name, path, db)
            for label, load, (seconds, cpu, rss, report) in (
                ("import", load_first, first),
                ("again", load_again, again),
            ):
                rows.append(
                    {
                        "format": format_name,
                        "run": label,
                        "load": round(load, 2),
                        "entries": report["read"],
                        "new": report["new"],
                        "duplicates": report["duplicatesOfStore"] + report["duplicatesWithin"],
                        "seconds": round(seconds, 1),
                        "cpu": round(cpu, 1),
                        "rss_mb": round(rss),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
            shutil.rmtree(root)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    print("| format | run | load | entries | new | duplicates | wall s | CPU s | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['format']} | {r['run']} | {r['load']} | {r['entries']:,} | {r['new']:,} | {r['duplicates']:,} | "
            f"{r['seconds']} | {r['cpu']} | {r['rss_mb'] or ''} |"
        )


if __name__ == "__main__":
    main()
