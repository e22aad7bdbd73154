"""A deterministic embedder for tests: a bag of hashed words.

It reproduces the reference server's test embedder bit for bit, so its
documented similarity scale holds (docs/embedders.md): roughly the fraction of words two
texts share. 9/10 words shared → 0.93; 7/10 → 0.86; 4/10 → 0.68; nothing shared
→ about 0. Fixtures meaning "the same fact" must repeat almost every word, and
"different facts" must not share boilerplate. It is not a semantic model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from mcp_memory.embedders.base import Embedder, check_vectors

_TOKEN_SPLIT = re.compile(r"[^a-z0-9가-힣]+")


@lru_cache(maxsize=8192)
def _token_vector(token: str, dim: int) -> np.ndarray:
    values: list[float] = []
    block = 0
    while len(values) < dim:
        digest = hashlib.sha256(f"{token}:{block}".encode()).digest()
        values.extend(b / 255 - 0.5 for b in digest)
        block += 1
    return np.asarray(values[:dim], dtype=np.float64)


def fake_vector(text: str, dim: int = 64) -> np.ndarray:
    tokens = [t for t in _TOKEN_SPLIT.split(text.lower()) if len(t) >= 2] or [" empty"]
    total = np.zeros(dim, dtype=np.float64)
    for token in tokens:
        total += _token_vector(token, dim)
    norm = float(np.linalg.norm(total))
    return (total / norm if norm else total).astype(np.float32)


class FakeEmbedder(Embedder):
    provider = "fake"
    model = "fake-bag-of-words"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return check_vectors([fake_vector(t, self.dim) for t in texts], self.model, self.dim, len(texts))

    async def close(self) -> None:
        return None
