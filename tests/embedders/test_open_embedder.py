"""open_embedder builds the embedder the settings name."""

from __future__ import annotations

import pytest

from mcp_memory.config import Settings
from mcp_memory.core.errors import StartupError
from mcp_memory.embedders import Embedder, EmbeddingSection, describe, open_embedder
from mcp_memory.embedders.bedrock import BedrockEmbedder
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.embedders.local.embedder import LocalEmbedder
from mcp_memory.embedders.openai import OpenAIEmbedder


async def test_the_default_settings_open_the_local_embedder_without_loading_it():
    embedder = open_embedder(Settings.from_env({"HOME": "/home/user"}).embedding)
    try:
        assert isinstance(embedder, LocalEmbedder)
        assert isinstance(embedder, Embedder)
        assert describe(embedder) == "local:all-MiniLM-L6-v2, 384d"
        assert not embedder.loaded
    finally:
        await embedder.close()


async def test_the_fake_provider_opens_a_fake_embedder_of_the_configured_dimension():
    settings = Settings.from_env({"HOME": "/home/user", "EMBEDDING_PROVIDER": "fake", "EMBEDDING_DIM": "32"})

    embedder = open_embedder(settings.embedding, settings.store.aws_region)

    assert isinstance(embedder, FakeEmbedder)
    assert (await embedder.embed(["hello"])).shape == (1, 32)


async def test_the_openai_provider_opens_an_http_embedder_for_the_configured_server() -> None:
    settings = Settings.from_env(
        {
            "HOME": "/home/user",
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_BASE_URL": "http://127.0.0.1:8001/v1/",
            "EMBEDDING_API_KEY": "sk-key",
            "EMBEDDING_MODEL": "Qwen3-Embedding-4B",
            "EMBEDDING_DIM": "2560",
        }
    )

    embedder = open_embedder(settings.embedding, settings.store.aws_region)
    try:
        assert isinstance(embedder, OpenAIEmbedder) and isinstance(embedder, Embedder)
        assert embedder.url == "http://127.0.0.1:8001/v1/embeddings"
        assert describe(embedder) == "openai:Qwen3-Embedding-4B, 2560d"
    finally:
        await embedder.close()


async def test_the_bedrock_provider_opens_titan_v2_in_the_configured_region() -> None:
    settings = Settings.from_env({"HOME": "/home/user", "EMBEDDING_PROVIDER": "bedrock", "AWS_REGION": "eu-west-1"})

    embedder = open_embedder(settings.embedding, settings.store.aws_region)
    try:
        assert isinstance(embedder, BedrockEmbedder) and isinstance(embedder, Embedder)
        assert embedder.region == "eu-west-1"
        assert describe(embedder) == "bedrock:amazon.titan-embed-text-v2:0, 1024d"
    finally:
        await embedder.close()


def test_bedrock_without_boto3_is_refused_at_start_up_with_the_install_hint(monkeypatch) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "boto3" else real_find_spec(name, *a)
    )

    with pytest.raises(StartupError) as refused:
        open_embedder(
            EmbeddingSection(
                embedding_provider="bedrock", embedding_model="amazon.titan-embed-text-v2:0", embedding_dim=1024
            )
        )

    assert str(refused.value) == (
        "EMBEDDING_PROVIDER=bedrock needs boto3, which is not installed: "
        "install the AWS extra: from a checkout, pip install '.[aws]' (once released: pip install 'mcp-tenant-memory[aws]')"
    )


def test_an_unknown_provider_is_refused_by_name() -> None:
    with pytest.raises(StartupError, match='unknown embedding provider "cohere"'):
        open_embedder(EmbeddingSection(embedding_provider="cohere"))
