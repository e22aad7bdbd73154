"""The embedding section of the settings: the provider, its model and width, what it needs
(docs/embedders.md).

Its shape lives with the embedders that read it, so a provider's opener takes it as it is; its
reader is config/embedding.py, which checks each variable against the rows of embedders.PROVIDERS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_memory.embedders import LOCAL_DIM, LOCAL_MODEL


@dataclass(frozen=True)
class EmbeddingSection:
    """How text becomes a vector."""

    embedding_provider: str = "local"
    embedding_model: str = LOCAL_MODEL
    embedding_dim: int = LOCAL_DIM
    embedding_base_url: str | None = None
    embedding_api_key: str | None = field(default=None, repr=False)
    #: EMBEDDING_SCRIPTS: the Unicode scripts the model reads; an empty set for "all"; None
    #: (unset) leaves it to the provider (the local model: Latin; the others: every script).
    embedding_scripts: frozenset[str] | None = None
