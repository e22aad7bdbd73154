#!/usr/bin/env bash
# The whole performance set of issue 8, bounded: latency, the floor and our
# overhead, start-up, throughput and resident memory at 1,000, 10,000 and
# 100,000 memories on SQLite and PostgreSQL, then the Markdown tables and the
# plot. About 10 minutes on the 2-core development box once the corpus's
# 100,000 embeddings are cached; the first run on a machine also embeds them
# (about 6 minutes on a quiet 2-core box, 20 under load).
#
#   bench/latency/run_performance.sh [OUT_DIR]        (default: bench/results)
#
# PYTHON (default: the repository's .venv) needs the bench extra
# (`pip install -e '.[bench]'`: matplotlib for the plot, pgserver for
# PostgreSQL). BENCH_CACHE holds the embeddings between runs (default: a
# directory under /tmp, never committed). BENCH_LIMIT bounds the
# run in seconds (default 1800: the measurement itself is bounded per loop).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE/../results}"
PYTHON="${PYTHON:-$HERE/../../.venv/bin/python}"
CACHE="${BENCH_CACHE:-${TMPDIR:-/tmp}/mcp-memory-bench-cache}"
LIMIT="${BENCH_LIMIT:-1800}"
STAMP="$(date -u +%Y%m%d-%H%M)"
mkdir -p "$OUT"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
cd "$HERE/../.."
timeout --signal=INT "$LIMIT" "$PYTHON" -m bench.latency.performance \
    --sizes 1000,10000,100000 --backends sqlite,postgres \
    --cache "$CACHE" --label "$STAMP" --out "$OUT/performance-$STAMP.json"
"$PYTHON" -m bench.latency.perf_report "$OUT/performance-$STAMP.json" > "$OUT/performance-$STAMP.md"
"$PYTHON" -m bench.latency.plot_latency "$OUT/performance-$STAMP.json" "$OUT/recall_latency-$STAMP.png"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "$OUT/performance-$STAMP.md" >&2
