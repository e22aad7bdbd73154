"""Embedders: pick one from the settings, importing only what it needs.

Each provider's module is imported inside `open_embedder`, so importing this
package never pulls in onnxruntime, tokenizers, boto3 or aiohttp; a server that
embeds with Bedrock never loads onnxruntime, and `mcp-memory --help` stays fast.
Opening is cheap for every provider: the model, the HTTP session or the boto3
client is made on the first `embed`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from mcp_memory.core.errors import StartupError
from mcp_memory.embedders.base import Embedder, check_vector, check_vectors, describe

__all__ = [
    "PROVIDERS",
    "Embedder",
    "EmbedderSettings",
    "Provider",
    "check_vector",
    "check_vectors",
    "describe",
    "open_embedder",
]


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


@dataclass(frozen=True)
class Provider:
    """One embedding provider: its name (EMBEDDING_PROVIDER), its default model and
    width, how it is opened, and the floor and HIGH mark measured for a model we ship.
    config.py and the tests read this table."""

    name: str
    model: str
    dim: int
    open: Callable[[EmbedderSettings], Embedder]
    #: (RECALL_MIN_SIMILARITY, RECALL_HIGH_SIMILARITY) measured by `mcp-memory calibrate --builtin`.
    calibrated: tuple[float, float] | None = None


def _open_local(settings: EmbedderSettings) -> Embedder:
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    return LocalEmbedder()


def _open_fake(settings: EmbedderSettings) -> Embedder:
    from mcp_memory.embedders.fake import FakeEmbedder

    return FakeEmbedder(dim=settings.embedding_dim)


def _open_openai(settings: EmbedderSettings) -> Embedder:
    from mcp_memory.embedders.openai import OpenAIEmbedder

    if not settings.embedding_base_url or not settings.embedding_api_key:
        raise StartupError("EMBEDDING_PROVIDER=openai needs EMBEDDING_BASE_URL and EMBEDDING_API_KEY")
    return OpenAIEmbedder(
        settings.embedding_base_url,
        settings.embedding_api_key,
        settings.embedding_model,
        settings.embedding_dim,
    )


def _open_bedrock(settings: EmbedderSettings) -> Embedder:
    from mcp_memory.embedders.bedrock import BedrockEmbedder
    from mcp_memory.runtime.aws import require_boto3

    require_boto3("EMBEDDING_PROVIDER=bedrock")
    return BedrockEmbedder(settings.embedding_model, settings.embedding_dim, settings.aws_region)


#: Every embedding provider, in the order messages list them.
PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (
        Provider("local", "all-MiniLM-L6-v2", 384, _open_local, calibrated=(0.2, 0.6)),
        Provider("openai", "text-embedding-3-small", 1536, _open_openai),
        Provider("bedrock", "amazon.titan-embed-text-v2:0", 1024, _open_bedrock),
        Provider("fake", "fake-bag-of-words", 64, _open_fake),
    )
}


def open_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder `settings.embedding_provider` names. Cheap: models load on first use."""
    provider = PROVIDERS.get(settings.embedding_provider)
    if provider is None:
        raise StartupError(f'unknown embedding provider "{settings.embedding_provider}"')
    return provider.open(settings)
