"""How long things take: recall, hooks, start-up, HTTP, throughput, transfer (bench/RESULTS.md)."""
