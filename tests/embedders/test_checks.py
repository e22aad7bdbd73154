"""Every returned vector passes the reference checks, in the reference order (docs/embedders.md)."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders import check_vector, check_vectors

NO_EMBEDDING = "the embedding service returned a response with no embedding in it"
ALL_ZERO = "the embedding service returned an all-zero vector"


@pytest.mark.parametrize(
    "value",
    [None, "0.1,0.2,0.3", {"embedding": [0.1]}, [], [[0.1, 0.2, 0.3]], ["a", "b", "c"], [0.1, float("nan"), 0.3]],
    ids=["none", "string", "object", "empty", "nested", "words", "nan"],
)
def test_anything_but_a_list_of_numbers_has_no_embedding_in_it(value):
    with pytest.raises(EmbeddingError) as refused:
        check_vector(value, "m", 3)

    assert str(refused.value) == NO_EMBEDDING


def test_a_vector_of_the_wrong_dimension_is_refused_with_how_to_fix_it():
    with pytest.raises(EmbeddingError) as refused:
        check_vector([0.1, 0.2], "text-embedding-3-small", 3)

    message = str(refused.value)
    assert 'model "text-embedding-3-small" returned 2 dimensions but the vector index expects 3' in message
    assert "cannot be changed after creation" in message
    assert "EMBEDDING_DIM" in message and "EMBEDDING_MODEL" in message


def test_an_all_zero_vector_is_refused():
    with pytest.raises(EmbeddingError) as refused:
        check_vector([0.0, 0.0, 0.0], "m", 3)

    assert str(refused.value) == ALL_ZERO


def test_the_checks_run_in_the_reference_order():
    # Not numbers beats wrong length; wrong length beats all zeros.
    with pytest.raises(EmbeddingError, match="no embedding in it"):
        check_vector(["a", "b"], "m", 3)
    with pytest.raises(EmbeddingError, match="returned 2 dimensions but the vector index expects 3"):
        check_vector([0.0, 0.0], "m", 3)


def test_a_good_vector_comes_back_as_float32():
    vector = check_vector([0.6, 0, 0.8], "m", 3)

    assert vector.dtype == np.float32
    np.testing.assert_allclose(vector, [0.6, 0.0, 0.8], rtol=1e-6)


def test_a_vector_comes_back_at_unit_length_whatever_the_providers_norm():
    # An OpenAI-compatible server that does not normalise (norm 50 here): SQLite's scan is a dot
    # product, so an unscaled vector would make every similarity threshold mean something else.
    vector = check_vector([30.0, 0.0, 40.0], "m", 3)

    np.testing.assert_allclose(vector, [0.6, 0.0, 0.8], rtol=1e-6)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-6


def test_a_vector_near_float32s_largest_or_smallest_values_is_scaled_to_unit_length_too():
    for value in (3e38, 1e-40):
        vector = check_vector([value, value, 0.0, value], "m", 4)

        np.testing.assert_allclose(vector, [3**-0.5, 3**-0.5, 0.0, 3**-0.5], rtol=1e-6)


def test_a_batch_must_have_one_vector_per_text():
    with pytest.raises(EmbeddingError, match="returned 1 embeddings for 2 texts"):
        check_vectors([[0.1, 0.2, 0.3]], "m", 3, expected=2)

    assert check_vectors([], "m", 3, expected=0).shape == (0, 3)
