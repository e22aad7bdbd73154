"""The fake embedder keeps the reference's similarity scale (docs/embedders.md)."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from mcp_memory.embedders.fake import FakeEmbedder

STREAMS = "Rolling deploys drain in-flight streams before the pod exits"
CONNECTIONS = "Rolling deploys drain connections before the node exits"
QUERY = "Rolling deploys drain in-flight streams before the pod"


def spec_vector(text: str, dim: int) -> np.ndarray:
    """The fake embedder (docs/embedders.md) written out again, independently of the package's code."""
    tokens = [t for t in re.split(r"[^a-z0-9가-힣]+", text.lower()) if len(t) >= 2] or [" empty"]
    total = np.zeros(dim)
    for token in tokens:
        values: list[float] = []
        block = 0
        while len(values) < dim:
            values += [b / 255 - 0.5 for b in hashlib.sha256(f"{token}:{block}".encode()).digest()]
            block += 1
        total += np.array(values[:dim])
    return total / np.linalg.norm(total)


async def test_the_fake_embedder_reproduces_the_reference_similarities():
    streams, connections, query = await FakeEmbedder().embed([STREAMS, CONNECTIONS, QUERY])

    assert float(streams @ connections) == pytest.approx(0.69, abs=0.01)
    assert 0.35 < float(streams @ connections) < 0.8  # kept by exploratory, cut by precision
    assert float(query @ streams) == pytest.approx(0.94, abs=0.01)
    assert float(query @ connections) == pytest.approx(0.59, abs=0.01)


@pytest.mark.parametrize("dim", [3, 64, 100])
async def test_the_fake_embedder_follows_the_reference_recipe(dim):
    texts = [STREAMS, "회의는 매주 월요일입니다 on Mondays", "a !", ""]

    vectors = await FakeEmbedder(dim=dim).embed(texts)

    expected = np.stack([spec_vector(text, dim) for text in texts])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)


async def test_the_fake_embedder_is_deterministic_and_unit_length():
    first = await FakeEmbedder().embed([STREAMS, CONNECTIONS, "x"])
    second = await FakeEmbedder().embed([STREAMS, CONNECTIONS, "x"])

    np.testing.assert_array_equal(first, second)
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-6)
