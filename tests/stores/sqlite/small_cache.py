"""What the vector-cache tests share: small unit vectors, their memories, the exact answer, and
blocks and file thresholds small enough that a few dozen rows exercise them."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory.core.model import Memory
from mcp_memory.stores.sqlite import sidecar
from mcp_memory.stores.sqlite import vectors as sqlite_vectors

DIM = 16
TENANT = "acme"


def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 8 rows, and a snapshot file from 10 rows on."""
    monkeypatch.setattr(sqlite_vectors, "BLOCK_ROWS", 8)
    monkeypatch.setattr(sidecar, "MIN_ROWS", 10)


def unit_rows(seed: int, count: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def memory(i: int, conversation: str | None = None) -> Memory:
    return Memory(
        id=f"m{i:03d}",
        tenant=TENANT,
        content=f"memory {i}",
        created_at="2026-01-01T00:00:00.000Z",
        scope="conversation" if conversation else "project",
        conversation=conversation,
    )


def exact(embeddings: dict[str, np.ndarray], query: np.ndarray, top_k: int) -> list[str]:
    """The ids of the `top_k` rows nearest `query` by a float32 dot product."""
    return sorted(embeddings, key=lambda i: -float(embeddings[i] @ query))[:top_k]
