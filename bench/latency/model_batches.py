"""The local model alone: queries per second by batch size and onnxruntime thread count.

    .venv/bin/python -m bench.latency.model_batches [--threads 1,2] [--batches 1,2,4,8,16] [--workers 1]

400 questions from the performance corpus (bench/harness/perf_corpus.py), tokenised up front, run
through the same session our embedder builds (embedders/local/minilm.py, with the word-table
rewrite) in batches of each size, twice over; `--workers 2` runs two batches at a time from
two threads on the one session. What the model and these two cores allow, with nothing else
running: the ceiling under every recall's embedding.
"""

from __future__ import annotations

import argparse
import threading

from bench.harness.perf_corpus import queries
from bench.harness.timing import Stopwatch
from mcp_memory.embedders.local import minilm as _minilm
from mcp_memory.embedders.local.lazy_table import gather_before_dequantize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="2,1")
    parser.add_argument("--batches", default="1,2,4,8,16")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    model = gather_before_dequantize(_minilm.default_model_path().read_bytes())
    tokenizer = _minilm.default_tokenizer_path().read_text(encoding="utf-8")
    texts = queries(400)
    for threads in (int(t) for t in args.threads.split(",")):
        runtime = _minilm.MiniLM.load(model, tokenizer, threads)
        for size in (int(b) for b in args.batches.split(",")):
            batches = [runtime.tokenize(texts[i : i + size]) for i in range(0, len(texts), size)]
            for batch in batches[:3]:
                runtime.embed(batch)
            work = batches * 2
            parts = [work[i :: args.workers] for i in range(args.workers)]
            with Stopwatch() as running:
                runners = [threading.Thread(target=lambda p=p: [runtime.embed(b) for b in p]) for p in parts]
                for runner in runners:
                    runner.start()
                for runner in runners:
                    runner.join()
            took = running.last
            count = 2 * len(texts)
            print(
                f"intra_op {threads}, {args.workers} worker(s), batch {size:2d}: "
                f"{count / took:.0f} queries/s ({took / count * 1000:.2f} ms each)",
                flush=True,
            )


if __name__ == "__main__":
    main()
