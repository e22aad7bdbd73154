"""Embedders: pick one from the settings, importing only what it needs.

PROVIDERS is the one table of providers (name, default model and width,
opener, calibrated marks, the settings it needs and the rule its model and
width must follow) that config/embedding.py and the tests read; adding a provider is its
module and one row here. Each provider's module is imported inside `open_embedder`, so importing this
package never pulls in onnxruntime, tokenizers, boto3 or aiohttp; a server that
embeds with Bedrock never loads onnxruntime, and `mcp-memory --help` stays fast.
Opening is cheap for every provider: the model, the HTTP session or the boto3
client is made on the first `embed`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_memory.core.errors import ConfigError, StartupError
from mcp_memory.embedders.base import Embedder, check_vector, check_vectors, describe

__all__ = [
    "PROVIDERS",
    "Embedder",
    "EmbeddingSection",
    "Provider",
    "check_vector",
    "check_vectors",
    "describe",
    "open_embedder",
]


@dataclass(frozen=True)
class Provider:
    """One embedding provider: its name (EMBEDDING_PROVIDER), its default model and
    width, how it is opened, the floor and HIGH mark measured for a model we ship,
    and the settings it needs. config/embedding.py and the tests read this table."""

    name: str
    model: str
    dim: int
    #: `open(section, aws_region)`: the embedder, cheap (its model, session or client comes on first use).
    open: Callable[[EmbeddingSection, str | None], Embedder]
    #: (RECALL_MIN_SIMILARITY, RECALL_HIGH_SIMILARITY) measured by `mcp-memory calibrate --builtin`.
    calibrated: tuple[float, float] | None = None
    #: The variables it cannot work without, checked in this order and each read into the
    #: Settings field of the same name in lower case (config/embedding.py knows how each is spelled).
    requires: tuple[str, ...] = ()
    #: `check(model, dim)`: raises ConfigError, naming the variable, when this provider cannot
    #: embed with that model at that width.
    check: Callable[[str, int], None] | None = None


LOCAL_MODEL, LOCAL_DIM = "all-MiniLM-L6-v2", 384
#: EMBEDDING_PROVIDER=local-multilingual (the optional extra `multilingual`).
MULTILINGUAL_MODEL, MULTILINGUAL_DIM = "multilingual-e5-small-q4", 384
#: Amazon Titan Text Embeddings V2 returns only these widths (its `dimensions` parameter).
TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMS = (256, 512, 1024)


@dataclass(frozen=True)
class EmbeddingSection:
    """The embedding section of the settings: how text becomes a vector. Read by
    config/embedding.py against the rows of PROVIDERS; each provider's opener takes it as it is."""

    embedding_provider: str = "local"
    embedding_model: str = LOCAL_MODEL
    embedding_dim: int = LOCAL_DIM
    embedding_base_url: str | None = None
    embedding_api_key: str | None = field(default=None, repr=False)
    #: EMBEDDING_SCRIPTS: the Unicode scripts the model reads; an empty set for "all"; None
    #: (unset) leaves it to the provider (the local model: Latin; the others: every script).
    embedding_scripts: frozenset[str] | None = None


def _only(provider: str, shipped: str, width: int) -> Callable[[str, int], None]:
    """The check of a provider that runs one model we ship, at its one width."""

    def check(model: str, dim: int) -> None:
        if model != shipped:
            raise ConfigError(
                f'EMBEDDING_MODEL must be "{shipped}" under EMBEDDING_PROVIDER={provider} '
                f'(the only model it runs), got "{model}"'
            )
        if dim != width:
            raise ConfigError(f'EMBEDDING_DIM must be {width} for {shipped}, got "{dim}"')

    return check


def _a_width_titan_returns(model: str, dim: int) -> None:
    if model == TITAN_V2 and dim not in TITAN_V2_DIMS:
        raise ConfigError(
            f'EMBEDDING_DIM must be 256, 512 or 1024 for {TITAN_V2} (the widths it can return), got "{dim}"'
        )


def _open_local(settings: EmbeddingSection, aws_region: str | None) -> Embedder:
    from mcp_memory.embedders.local.embedder import LocalEmbedder

    return LocalEmbedder()


def _open_multilingual(settings: EmbeddingSection, aws_region: str | None) -> Embedder:
    from mcp_memory.embedders.local.multilingual import MultilingualEmbedder

    return MultilingualEmbedder()


def _open_fake(settings: EmbeddingSection, aws_region: str | None) -> Embedder:
    from mcp_memory.embedders.fake import FakeEmbedder

    return FakeEmbedder(dim=settings.embedding_dim)


def _open_openai(settings: EmbeddingSection, aws_region: str | None) -> Embedder:
    from mcp_memory.embedders.openai import OpenAIEmbedder

    if not settings.embedding_base_url or not settings.embedding_api_key:
        raise StartupError("EMBEDDING_PROVIDER=openai needs EMBEDDING_BASE_URL and EMBEDDING_API_KEY")
    return OpenAIEmbedder(
        settings.embedding_base_url,
        settings.embedding_api_key,
        settings.embedding_model,
        settings.embedding_dim,
    )


def _open_bedrock(settings: EmbeddingSection, aws_region: str | None) -> Embedder:
    from mcp_memory.embedders.bedrock import BedrockEmbedder
    from mcp_memory.runtime.aws import require_boto3

    require_boto3("EMBEDDING_PROVIDER=bedrock")
    if aws_region is None:  # the embedder's own default region
        return BedrockEmbedder(settings.embedding_model, settings.embedding_dim)
    return BedrockEmbedder(settings.embedding_model, settings.embedding_dim, aws_region)


#: Every embedding provider, in the order messages list them.
PROVIDERS: dict[str, Provider] = {
    provider.name: provider
    for provider in (
        Provider(
            "local",
            LOCAL_MODEL,
            LOCAL_DIM,
            _open_local,
            calibrated=(0.2, 0.6),
            check=_only("local", LOCAL_MODEL, LOCAL_DIM),
        ),
        Provider(
            "local-multilingual",
            MULTILINGUAL_MODEL,
            MULTILINGUAL_DIM,
            _open_multilingual,
            calibrated=(0.43, 0.6),
            check=_only("local-multilingual", MULTILINGUAL_MODEL, MULTILINGUAL_DIM),
        ),
        Provider(
            "openai",
            "text-embedding-3-small",
            1536,
            _open_openai,
            requires=("EMBEDDING_BASE_URL", "EMBEDDING_API_KEY"),
        ),
        Provider("bedrock", TITAN_V2, 1024, _open_bedrock, check=_a_width_titan_returns),
        Provider("fake", "fake-bag-of-words", 64, _open_fake),
    )
}


def open_embedder(settings: EmbeddingSection, aws_region: str | None = None) -> Embedder:
    """The embedder the embedding section names (Bedrock in `aws_region`, the store section's).
    Cheap: models load on first use."""
    provider = PROVIDERS.get(settings.embedding_provider)
    if provider is None:
        raise StartupError(f'unknown embedding provider "{settings.embedding_provider}"')
    embedder = provider.open(settings, aws_region)
    if settings.embedding_scripts is not None:  # EMBEDDING_SCRIPTS: the operator knows the model
        embedder.scripts = settings.embedding_scripts or None  # empty: every script
    return embedder
