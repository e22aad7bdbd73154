"""The checks every returned vector must pass (docs/embedders.md); the Embedder port is in core/ports.py.

Why: a wrong width or an all-zero vector from a provider would be stored and poison every later
recall, so each embedder's answer is refused here, by name, before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp_memory.core.errors import EmbeddingError
from mcp_memory.core.ports import Embedder, describe

if TYPE_CHECKING:  # numpy loads with the first vector, not before the MCP handshake
    import numpy as np

__all__ = ["Embedder", "check_vector", "check_vectors", "count_mismatch", "describe"]


def check_vector(value: Any, model: str, dim: int) -> np.ndarray:
    """The common checks, in the reference order: a numeric array, the right
    dimension, not all zeros. Returns the vector as float32, scaled to unit length: every backend
    then ranks by cosine (SQLite's scan is a dot product), and the similarity thresholds mean the
    same whatever a provider's norms (docs/embedders.md#checks-on-every-vector)."""
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
    wide = vector.astype(np.float64)  # any finite float32's square fits in float64
    return (wide / np.linalg.norm(wide)).astype(np.float32)


def check_vectors(values: Sequence[Any] | np.ndarray, model: str, dim: int, expected: int) -> np.ndarray:
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
