"""A million memories: the fill, the ANN recall and the latency as the store grows (bench/RESULTS.md)."""
