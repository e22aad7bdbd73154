"""The word-embedding table stays int8 in memory, and the model's output is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory.embedders.local import minilm as _minilm
from mcp_memory.embedders.local.lazy_table import TABLE, gather_before_dequantize

TEXTS = [
    "We deploy with blue-green releases on Fridays",
    "hi",
    "The database password is rotated monthly by the platform team. " * 12,  # long: cut at 256 tokens
    "Ünïcödé, emoji 🚀 and CJK 记忆 all reach the table",
]


@pytest.fixture(scope="module")
def shipped_bytes() -> bytes:
    return _minilm.default_model_path().read_bytes()


@pytest.fixture(scope="module")
def tokenizer_json() -> str:
    return _minilm.default_tokenizer_path().read_text(encoding="utf-8")


def test_the_rewritten_model_gives_bit_identical_vectors_to_the_shipped_one(shipped_bytes, tokenizer_json):
    shipped = _minilm.MiniLM.load(shipped_bytes, tokenizer_json, 1)
    rewritten = _minilm.MiniLM.load(gather_before_dequantize(shipped_bytes), tokenizer_json, 1)

    expected = shipped.embed(shipped.tokenize(TEXTS))
    actual = rewritten.embed(rewritten.tokenize(TEXTS))

    assert actual.shape == (4, 384)
    assert np.array_equal(actual, expected)


def test_the_rewrite_replaces_the_whole_table_dequantization_with_a_per_row_one(shipped_bytes):
    rewritten = gather_before_dequantize(shipped_bytes)

    assert f"{TABLE}_cast".encode() in shipped_bytes
    assert f"{TABLE}_cast".encode() not in rewritten
    assert f"{TABLE}_mul".encode() not in rewritten
    assert b"__rows_q" in rewritten and b"__rows_scale" in rewritten
    # the other tables' dequantization is untouched
    assert b"inner.embeddings.position_embeddings.weight_cast" in rewritten


def test_a_model_without_the_expected_chain_comes_back_unchanged():
    # A ModelProto with only ir_version (field 1) set, and bytes that are not protobuf at all.
    tiny = bytes([0x08, 0x0A])
    garbage = b"\xff\xff\xff not a model"

    assert gather_before_dequantize(tiny) is tiny
    assert gather_before_dequantize(garbage) is garbage


def test_rewriting_twice_changes_nothing_more(shipped_bytes):
    once = gather_before_dequantize(shipped_bytes)

    assert gather_before_dequantize(once) is once
