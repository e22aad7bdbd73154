"""The Embedder port and the checks every returned vector must pass (B §13)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mcp_memory.core.errors import EmbeddingError

if TYPE_CHECKING:  # numpy loads with the first vector, not before the MCP handshake
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    provider: str
    model: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, shape (len(texts), dim), float32, every row checked."""

    async def close(self) -> None:
        """Release sessions, threads and files."""


def describe(embedder: Embedder) -> str:
    """`provider:model, <dim>d` for the boot log."""
    return f"{embedder.provider}:{embedder.model}, {embedder.dim}d"


def check_vector(value: Any, model: str, dim: int) -> np.ndarray:
    """The common checks, in the reference order: a numeric array, the right
    dimension, not all zeros. Returns the vector as float32."""
    import numpy as np

    try:
        vector = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        vector = None
    if vector is None or vector.ndim != 1 or vector.size == 0 or not np.all(np.isfinite(vector)):
        raise EmbeddingError("the embedding service returned a response with no embedding in it")
    if vector.shape[0] != dim:
        raise EmbeddingError(
            f'model "{model}" returned {vector.shape[0]} dimensions but the vector index expects {dim}. '
            "An index's dimension cannot be changed after creation: set EMBEDDING_DIM and "
            "EMBEDDING_MODEL to match, or create a new index for this model."
        )
    if not np.any(vector):
        raise EmbeddingError("the embedding service returned an all-zero vector")
    return vector


def check_vectors(values: Sequence[Any], model: str, dim: int, expected: int) -> np.ndarray:
    """Check a batch: one vector per input text, each passing `check_vector`."""
    import numpy as np

    if len(values) != expected:
        raise count_mismatch(len(values), expected)
    if expected == 0:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([check_vector(v, model, dim) for v in values])


def count_mismatch(got: int, expected: int) -> EmbeddingError:
    """The error for an answer that does not hold one embedding per text."""
    return EmbeddingError(f"the embedding service returned {got} embeddings for {expected} texts")
