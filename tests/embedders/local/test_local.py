"""The local embedder embeds for real, offline, with the model's own semantics."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders import Embedder
from mcp_memory.embedders.local.embedder import LocalEmbedder

DEFAULT_FLOOR = 0.1

#: A stored fact and a question a user would ask for it, sharing almost no words.
PARAPHRASES = [
    (
        "The staging database is restored from the nightly snapshot every Monday at 6am UTC.",
        "When does staging get its data refreshed?",
    ),
    (
        "API keys are rotated every 90 days and stored in the team's Vault under secret/api.",
        "How often do we change our API credentials?",
    ),
    (
        "The frontend is built with React and TypeScript, bundled by Vite.",
        "Which JavaScript framework does the web app use?",
    ),
    (
        "Alice prefers code reviews to be under 400 lines so she can finish them in one sitting.",
        "How big should a pull request be for Alice to review it?",
    ),
    (
        "Customer invoices are generated on the first business day of each month.",
        "When are bills sent to clients?",
    ),
]


async def test_the_local_embedder_returns_one_384_dimension_unit_vector_per_text(local_embedder):
    vectors = await local_embedder.embed(["The build uses Python 3.11.", "Deploys happen on Fridays."])

    assert isinstance(local_embedder, Embedder)
    assert (local_embedder.provider, local_embedder.model, local_embedder.dim) == ("local", "all-MiniLM-L6-v2", 384)
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_the_same_text_always_gets_the_same_vector(local_embedder):
    first = await local_embedder.embed(["Rotate the signing key before the certificate expires."])
    second = await local_embedder.embed(["Rotate the signing key before the certificate expires."])

    np.testing.assert_array_equal(first, second)


async def test_a_batch_gives_the_same_vectors_as_one_text_at_a_time_in_input_order(local_embedder):
    # 70 texts of very different lengths: three batches, and sorting by length
    # reorders them internally; the rows must still come back in input order.
    texts = [f"note {i}: " + "the cache is warmed before traffic shifts " * (i % 9) for i in range(70)]
    texts[5] = ""

    batch = await local_embedder.embed(texts)
    small_batch = await local_embedder.embed(texts[:10])
    singles = np.stack([(await local_embedder.embed([text]))[0] for text in texts])

    np.testing.assert_allclose(batch, singles, atol=1e-5)
    np.testing.assert_allclose(small_batch, singles[:10], atol=1e-5)


async def test_no_texts_gives_an_empty_matrix_without_loading_the_model():
    embedder = LocalEmbedder()
    try:
        vectors = await embedder.embed([])
        assert vectors.shape == (0, 384)
        assert embedder.loads == 0
    finally:
        await embedder.close()


async def test_a_paraphrased_question_finds_its_fact_well_above_the_default_floor(local_embedder):
    facts = await local_embedder.embed([fact for fact, _ in PARAPHRASES])
    questions = await local_embedder.embed([question for _, question in PARAPHRASES])
    similarity = questions @ facts.T  # unit vectors: dot product is cosine

    for i in range(len(PARAPHRASES)):
        own = similarity[i, i]
        others = np.delete(similarity[i], i)
        assert own > 3 * DEFAULT_FLOOR, PARAPHRASES[i]
        assert own > others.max(), PARAPHRASES[i]


async def test_the_int8_model_agrees_with_the_full_precision_model(local_embedder):
    # Reference: the first 8 components from a float32 forward pass of the original
    # sentence-transformers/all-MiniLM-L6-v2 weights (mean pooling, normalised);
    # they match sentence-transformers' published output for this sentence.
    reference = np.array([0.0677, 0.0635, 0.0487, 0.0793, 0.0374, 0.0027, 0.0394, -0.0071])

    (vector,) = await local_embedder.embed(["This is an example sentence"])

    np.testing.assert_allclose(vector[:8], reference, atol=0.01)


async def test_a_2000_word_text_embeds_without_error(local_embedder):
    words = "the release train leaves every second Thursday unless a freeze is declared".split()
    essay = " ".join(words[i % len(words)] for i in range(2000))

    (vector,) = await local_embedder.embed([essay])

    assert vector.shape == (384,)
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)


async def test_texts_are_cut_at_256_tokens(local_embedder):
    # "the", "apple" and "zebra" are one token each; [CLS] and [SEP] take two of
    # the 256 places, so the 254th word is the last one the model sees.
    seen_a, seen_b, cut_a, cut_b = await local_embedder.embed(
        [
            "the " * 253 + "apple",
            "the " * 253 + "zebra",
            "the " * 254 + "apple",
            "the " * 254 + "zebra",
        ]
    )

    assert not np.allclose(seen_a, seen_b, atol=1e-4)
    np.testing.assert_allclose(cut_a, cut_b, atol=1e-6)


async def test_texts_that_are_not_strings_are_refused(local_embedder):
    with pytest.raises(TypeError, match="texts must be strings"):
        await local_embedder.embed(["fine", 42])  # type: ignore[list-item]


async def test_a_closed_embedder_refuses_to_embed():
    embedder = LocalEmbedder()
    await embedder.embed(["load it"])
    await embedder.close()

    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed(["too late"])


async def test_closing_during_the_first_load_fails_the_waiting_call_cleanly():
    embedder = LocalEmbedder()
    waiting = asyncio.create_task(embedder.embed(["loading"]))
    await asyncio.sleep(0)  # the call has handed the load to the worker thread

    await embedder.close()

    with pytest.raises(EmbeddingError, match="closed"):
        await waiting
    assert not embedder.loaded
