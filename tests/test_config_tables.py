"""A backend or a provider is one row of its table, and config reads the rows as they are.

stores.BACKENDS and embedders.PROVIDERS say which variables each entry needs, the
provider a backend embeds with by default, and the rule a provider's model and
width follow; Settings.from_env checks them all with no name of its own. A row
added here (and removed after the test) is checked with the same words as the
shipped ones, without an edit to config/.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from mcp_memory import embedders, stores
from mcp_memory.config import Settings
from mcp_memory.core.errors import ConfigError
from mcp_memory.embedders import EmbeddingSection, Provider
from mcp_memory.stores import Backend
from mcp_memory.stores.section import StoreSection

BASE = {"HOME": "/home/ada", "HOSTNAME": "pod-1"}
KB = "ABCDE12345"


async def _never(settings: object, model: str, dim: int) -> tuple:
    raise AssertionError("opening is not configuration")


def _acme_width(model: str, dim: int) -> None:
    if dim != 256:
        raise ConfigError(f'EMBEDDING_DIM must be 256 for {model}, got "{dim}"')


opened: list[str] = []


def _open_acme(settings: object, aws_region: str | None) -> object:
    opened.append("acme")
    return "the acme embedder"


@pytest.fixture
def new_rows(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A backend that needs a bucket and a knowledge base, and a provider that needs a key."""
    monkeypatch.setitem(
        stores.BACKENDS,
        "vault",
        Backend(
            "vault",
            _never,
            lambda settings: "vault://",
            requires=("VECTOR_BUCKET", "KNOWLEDGE_BASE_ID"),
            default_provider="acme",
            label="Vault",
        ),
    )
    monkeypatch.setitem(
        embedders.PROVIDERS,
        "acme",
        Provider("acme", "acme-embed-1", 256, _open_acme, requires=("EMBEDDING_API_KEY",), check=_acme_width),
    )
    opened.clear()
    yield


def load(**env: str) -> Settings:
    return Settings.from_env({**BASE, **env})


def refusal(**env: str) -> str:
    with pytest.raises(ConfigError) as refused:
        load(**env)
    return str(refused.value)


def test_a_new_backend_is_accepted_by_name_and_listed_when_the_name_is_wrong(new_rows: None) -> None:
    assert refusal(MEMORY_BACKEND="vaults") == (
        'MEMORY_BACKEND must be "sqlite", "postgres", "s3" or "vault", got "vaults"'
    )


def test_a_new_backends_settings_are_required_in_the_words_every_backend_gets(new_rows: None) -> None:
    assert refusal(MEMORY_BACKEND="vault") == (
        "VECTOR_BUCKET and KNOWLEDGE_BASE_ID are required when MEMORY_BACKEND=vault"
    )
    assert refusal(MEMORY_BACKEND="vault", VECTOR_BUCKET="v") == (
        "KNOWLEDGE_BASE_ID is required when MEMORY_BACKEND=vault (VECTOR_BUCKET is set)"
    )
    # Chosen by presence, after the shipped rows: only KNOWLEDGE_BASE_ID points at it.
    assert refusal(KNOWLEDGE_BASE_ID=KB) == "VECTOR_BUCKET is required for the Vault backend (KNOWLEDGE_BASE_ID is set)"


def test_a_new_backend_gets_its_settings_and_its_default_provider(new_rows: None) -> None:
    settings = load(KNOWLEDGE_BASE_ID=KB, VECTOR_BUCKET="v", MEMORY_BACKEND="vault", EMBEDDING_API_KEY="k")

    assert (settings.store.backend, settings.store.backend_reason) == ("vault", "MEMORY_BACKEND=vault")
    assert (settings.store.vector_bucket, settings.store.knowledge_base_id, settings.store.state_bucket) == (
        "v",
        KB,
        None,
    )
    assert (
        settings.embedding.embedding_provider,
        settings.embedding.embedding_model,
        settings.embedding.embedding_dim,
    ) == (
        "acme",
        "acme-embed-1",
        256,
    )


def test_the_embedded_default_names_every_backend_that_presence_would_choose(new_rows: None) -> None:
    assert load().store.backend_reason == (
        "embedded default: neither DATABASE_URL nor VECTOR_BUCKET/STATE_BUCKET nor VECTOR_BUCKET/KNOWLEDGE_BASE_ID is set"
    )


def test_a_new_providers_settings_and_its_own_rule_are_checked(new_rows: None) -> None:
    assert refusal(EMBEDDING_PROVIDER="acme") == "EMBEDDING_API_KEY is required when EMBEDDING_PROVIDER=acme"
    # The key is checked as every EMBEDDING_API_KEY is, and never echoed.
    assert "printable ASCII only" in refusal(EMBEDDING_PROVIDER="acme", EMBEDDING_API_KEY="kéy")
    assert refusal(EMBEDDING_PROVIDER="acme", EMBEDDING_API_KEY="k", EMBEDDING_DIM="512") == (
        'EMBEDDING_DIM must be 256 for acme-embed-1, got "512"'
    )
    assert refusal(EMBEDDING_PROVIDER="acmee") == (
        'EMBEDDING_PROVIDER must be "local", "local-multilingual", "openai", "bedrock", "fake" or "acme", got "acmee"'
    )


def test_a_new_provider_is_opened_by_its_own_row(new_rows: None) -> None:
    settings = load(EMBEDDING_PROVIDER="acme", EMBEDDING_API_KEY="k")

    assert settings.embedding.embedding_api_key == "k"
    assert embedders.open_embedder(settings.embedding) == "the acme embedder"
    assert opened == ["acme"]


def test_every_variable_a_row_needs_has_a_field_of_the_same_name_in_its_rooms_section() -> None:
    backends = {name for row in stores.BACKENDS.values() for name in row.requires}
    providers = {name for row in embedders.PROVIDERS.values() for name in row.requires}

    assert backends | providers == {
        "DATABASE_URL",
        "VECTOR_BUCKET",
        "STATE_BUCKET",
        "EMBEDDING_BASE_URL",
        "EMBEDDING_API_KEY",
    }
    assert {name.lower() for name in backends} <= {field.name for field in dataclasses.fields(StoreSection)}
    assert {name.lower() for name in providers} <= {field.name for field in dataclasses.fields(EmbeddingSection)}


def test_every_default_provider_is_a_provider() -> None:
    assert {row.default_provider for row in stores.BACKENDS.values()} <= set(embedders.PROVIDERS)


def test_the_hooks_socket_is_named_by_the_variables_the_backends_table_says_choose_a_store() -> None:
    """The same names, in the same order, as before they were read from the table: a hook and a
    serving process of two versions still meet at one socket."""
    assert stores.store_variables() == (
        "MEMORY_BACKEND",
        "MEMORY_DB_PATH",
        "DATABASE_URL",
        "VECTOR_BUCKET",
        "STATE_BUCKET",
        "AWS_REGION",
        "XDG_DATA_HOME",
        "HOME",
    )


def test_a_new_backends_own_variables_name_the_hooks_socket_too(new_rows: None) -> None:
    from mcp_memory.server.hooks.folder import store_key

    environment = {"VECTOR_BUCKET": "v", "HOME": "/home/user"}

    assert "KNOWLEDGE_BASE_ID" in stores.store_variables()
    assert store_key("acme", {**environment, "KNOWLEDGE_BASE_ID": "KB12345678"}) != store_key("acme", environment)
