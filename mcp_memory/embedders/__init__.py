"""Embedders: pick one from the settings, importing only what it needs.

Each provider's module is imported inside `open_embedder`, so importing this
package never pulls in onnxruntime, tokenizers, boto3 or aiohttp; a server that
embeds with Bedrock never loads onnxruntime, and `mcp-memory --help` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_memory.embedders.base import Embedder, check_vector, check_vectors, describe
from mcp_memory.errors import StartupError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mcp_memory.config import Settings

__all__ = ["Embedder", "check_vector", "check_vectors", "describe", "open_embedder"]


def open_embedder(settings: Settings) -> Embedder:
    """The embedder `settings.embedding_provider` names. Cheap: models load on first use."""
    provider = settings.embedding_provider
    if provider == "local":
        from mcp_memory.embedders.local import LocalEmbedder

        return LocalEmbedder()
    if provider == "fake":
        from mcp_memory.embedders.fake import FakeEmbedder

        return FakeEmbedder(dim=settings.embedding_dim)
    if provider in ("openai", "bedrock"):
        # TODO: openai.py (aiohttp, B §13.2) and bedrock.py (boto3, B §13.1) are being
        # written separately; wire them here with the same lazy import.
        raise StartupError(f"the {provider} embedder is not available in this build")
    raise StartupError(f'unknown embedding provider "{provider}"')
