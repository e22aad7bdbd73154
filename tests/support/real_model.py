"""The real local model, remembered: each text is embedded once per session.

The dedup table is about the local model's own cosines (the fake embedder does not
put a fact and its correction at 0.97), so its texts go through all-MiniLM-L6-v2;
`real_model` in tests/conftest.py is one for the whole run, so a text the dedup table and
remember's hint tests share is embedded once.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from mcp_memory.embedders.local.embedder import LocalEmbedder


class RememberedModel:
    provider = "local"
    model = "all-MiniLM-L6-v2"
    dim = 384
    scripts = LocalEmbedder.scripts

    def __init__(self) -> None:
        self._inner = LocalEmbedder()
        self._vectors: dict[str, np.ndarray] = {}

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, await self._inner.embed(missing)):
                self._vectors[text] = vector
        return np.stack([self._vectors[t] for t in texts])

    async def cosine(self, a: str, b: str) -> float:
        """Their cosine as remember sees it (the service embeds the NFKC form)."""
        va, vb = await self.embed([unicodedata.normalize("NFKC", a), unicodedata.normalize("NFKC", b)])
        return float(np.dot(va, vb))

    async def close(self) -> None:
        """A service closing its embedder leaves the shared model running."""

    async def shutdown(self) -> None:
        await self._inner.close()
