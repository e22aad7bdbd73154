"""open_embedder builds the embedder the settings name."""

from __future__ import annotations

import pytest

from mcp_memory.config import Settings
from mcp_memory.embedders import Embedder, describe, open_embedder
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.embedders.local import LocalEmbedder
from mcp_memory.errors import StartupError


async def test_the_default_settings_open_the_local_embedder_without_loading_it():
    embedder = open_embedder(Settings.from_env({"HOME": "/home/user"}))
    try:
        assert isinstance(embedder, LocalEmbedder)
        assert isinstance(embedder, Embedder)
        assert describe(embedder) == "local:all-MiniLM-L6-v2, 384d"
        assert not embedder.loaded
    finally:
        await embedder.close()


async def test_the_fake_provider_opens_a_fake_embedder_of_the_configured_dimension():
    settings = Settings.from_env({"HOME": "/home/user", "EMBEDDING_PROVIDER": "fake", "EMBEDDING_DIM": "32"})

    embedder = open_embedder(settings)

    assert isinstance(embedder, FakeEmbedder)
    assert (await embedder.embed(["hello"])).shape == (1, 32)


@pytest.mark.parametrize("provider", ["openai", "bedrock"])
def test_a_provider_not_in_this_build_is_refused_by_name(provider):
    settings = Settings(embedding_provider=provider)

    with pytest.raises(StartupError, match=f"the {provider} embedder is not available in this build"):
        open_embedder(settings)
