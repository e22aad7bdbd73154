"""Access counters without a lock: per-pod shards folded in by compare-and-swap (docs/counters.md).

A room of its own because a memory is written once and never updated (seed 000): what changes
lives here, over the ObjectStore port, the same on every backend.
"""
