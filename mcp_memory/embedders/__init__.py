"""Embedders: pick one from the settings, importing only what it needs.

Each provider's module is imported inside `open_embedder`, so importing this
package never pulls in onnxruntime, tokenizers, boto3 or aiohttp; a server that
embeds with Bedrock never loads onnxruntime, and `mcp-memory --help` stays fast.
Opening is cheap for every provider: the model, the HTTP session or the boto3
client is made on the first `embed`.
"""

from __future__ import annotations

from typing import Protocol

from mcp_memory.core.errors import StartupError
from mcp_memory.embedders.base import Embedder, check_vector, check_vectors, describe

__all__ = ["Embedder", "EmbedderSettings", "check_vector", "check_vectors", "describe", "open_embedder"]


class EmbedderSettings(Protocol):
    """The settings the providers read (config.Settings has them all)."""

    @property
    def embedding_provider(self) -> str: ...
    @property
    def embedding_model(self) -> str: ...
    @property
    def embedding_dim(self) -> int: ...
    @property
    def embedding_base_url(self) -> str | None: ...
    @property
    def embedding_api_key(self) -> str | None: ...
    @property
    def aws_region(self) -> str: ...


def open_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder `settings.embedding_provider` names. Cheap: models load on first use."""
    provider = settings.embedding_provider
    if provider == "local":
        from mcp_memory.embedders.local.embedder import LocalEmbedder

        return LocalEmbedder()
    if provider == "fake":
        from mcp_memory.embedders.fake import FakeEmbedder

        return FakeEmbedder(dim=settings.embedding_dim)
    if provider == "openai":
        from mcp_memory.embedders.openai import OpenAIEmbedder

        if not settings.embedding_base_url or not settings.embedding_api_key:
            raise StartupError("EMBEDDING_PROVIDER=openai needs EMBEDDING_BASE_URL and EMBEDDING_API_KEY")
        return OpenAIEmbedder(
            settings.embedding_base_url,
            settings.embedding_api_key,
            settings.embedding_model,
            settings.embedding_dim,
        )
    if provider == "bedrock":
        from mcp_memory.embedders.bedrock import BedrockEmbedder
        from mcp_memory.runtime.aws import require_boto3

        require_boto3("EMBEDDING_PROVIDER=bedrock")
        return BedrockEmbedder(settings.embedding_model, settings.embedding_dim, settings.aws_region)
    raise StartupError(f'unknown embedding provider "{provider}"')
