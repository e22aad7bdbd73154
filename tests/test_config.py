"""Settings.from_env: every variable validated up front, first error wins (docs/storage.md, docs/embedders.md, docs/recall.md, docs/operations.md).

Every test passes a dict; os.environ is never touched.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from mcp_memory.config import Settings, redact_url
from mcp_memory.core.errors import ConfigError

BASE = {"HOME": "/home/ada", "HOSTNAME": "pod-1"}
OPENAI = {"EMBEDDING_PROVIDER": "openai", "EMBEDDING_BASE_URL": "https://llm.example/v1", "EMBEDDING_API_KEY": "sk-key"}
BUCKETS = {"VECTOR_BUCKET": "vectors", "STATE_BUCKET": "state"}


def load(**env: str) -> Settings:
    return Settings.from_env({**BASE, **env})


def refusal(**env: str) -> str:
    with pytest.raises(ConfigError) as refused:
        load(**env)
    return str(refused.value)


# --------------------------------------------------------------------------- defaults


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of our own: platformdirs reads the platform's variables itself."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return tmp_path


def at_home(home: Path, **env: str) -> Settings:
    return Settings.from_env({**BASE, "HOME": str(home), **env})


def test_with_nothing_set_memories_go_to_embedded_sqlite_in_the_platform_data_directory(home: Path) -> None:
    settings = at_home(home)
    assert settings.store.backend == "sqlite"
    assert settings.store.db_path == platformdirs.user_data_path("mcp-tenant-memory", appauthor=False) / "memory.db"
    assert settings.store.db_path_notice is None


def test_on_linux_the_database_goes_under_xdg_data_home_in_a_directory_of_its_own(home: Path) -> None:
    assert at_home(home).store.db_path == home / ".local" / "share" / "mcp-tenant-memory" / "memory.db"
    assert (
        at_home(home, XDG_DATA_HOME=str(home / "data")).store.db_path
        == home / "data" / "mcp-tenant-memory" / "memory.db"
    )


def test_on_linux_the_variables_given_to_from_env_choose_the_data_directory_not_the_processs_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "process-home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "process-data"))
    given = tmp_path / "given-home"
    assert (
        Settings.from_env({**BASE, "HOME": str(given)}).store.db_path
        == given / ".local" / "share" / "mcp-tenant-memory" / "memory.db"
    )
    assert (
        Settings.from_env({**BASE, "HOME": str(given), "XDG_DATA_HOME": str(tmp_path / "given-data")}).store.db_path
        == tmp_path / "given-data" / "mcp-tenant-memory" / "memory.db"
    )


def test_a_database_at_the_old_default_place_is_still_used_with_a_notice_saying_how_to_move_it(home: Path) -> None:
    old = home / ".local" / "share" / "mcp-memory" / "memory.db"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"")
    settings = at_home(home)
    new = platformdirs.user_data_path("mcp-tenant-memory", appauthor=False) / "memory.db"
    assert settings.store.db_path == old
    assert settings.store.db_path_notice == (
        f"note: using the database at {old}, the old default place; the default is now {new}. "
        f"To move it, stop every mcp-memory process, then: mkdir -p '{new.parent}' && "
        f"mv '{old}'* '{new.parent}/' (or set MEMORY_DB_PATH={old} to keep it there)"
    )


def test_once_moved_the_new_database_wins_and_the_old_one_is_named_as_unused(home: Path) -> None:
    old = home / ".local" / "share" / "mcp-memory" / "memory.db"
    new = platformdirs.user_data_path("mcp-tenant-memory", appauthor=False) / "memory.db"
    for path in (old, new):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    settings = at_home(home)
    assert settings.store.db_path == new
    assert settings.store.db_path_notice == f"note: an older database at {old} is not used; this one is {new}"


def test_another_servers_files_in_the_old_directory_are_not_taken_for_a_database(home: Path) -> None:
    peer = home / ".local" / "share" / "mcp-memory"
    (peer / "backups").mkdir(parents=True)
    (peer / "sqlite_vec.db").write_bytes(b"")
    settings = at_home(home)
    assert settings.store.db_path == platformdirs.user_data_path("mcp-tenant-memory", appauthor=False) / "memory.db"
    assert settings.store.db_path_notice is None


def test_the_old_place_follows_xdg_data_home_as_it_did(home: Path) -> None:
    old = home / "data" / "mcp-memory" / "memory.db"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"")
    assert at_home(home, XDG_DATA_HOME=str(home / "data")).store.db_path == old


def test_memory_db_path_overrides_the_location_and_expands_the_home_directory() -> None:
    assert load(MEMORY_DB_PATH="/srv/memory.db").store.db_path == Path("/srv/memory.db")
    expanded = load(MEMORY_DB_PATH="~/notes/memory.db").store.db_path
    assert expanded == Path("~/notes/memory.db").expanduser()
    assert "~" not in str(expanded)


def test_defaults_embed_locally_with_minilm() -> None:
    settings = load()
    assert settings.embedding.embedding_provider == "local"
    assert settings.embedding.embedding_model == "all-MiniLM-L6-v2"
    assert settings.embedding.embedding_dim == 384
    assert settings.embedding.embedding_base_url is None
    assert settings.embedding.embedding_api_key is None


def test_other_defaults() -> None:
    settings = load()
    assert settings.serve.port == 3000
    assert settings.serve.host == "127.0.0.1"
    assert settings.counters.stats_flush_ms == 30_000
    assert settings.counters.stats_compact_threshold == 20
    assert settings.store.aws_region == "ap-northeast-2"
    assert settings.store.knowledge_base_id is None
    assert settings.serve.mcp_api_key is None
    assert settings.caller.tenant is None
    assert settings.caller.conversation is None
    assert settings.counters.hostname == "pod-1"


def test_the_local_model_defaults_to_its_calibrated_floor_and_high_mark() -> None:
    settings = load()
    assert (settings.recall.recall_min_similarity, settings.recall.recall_high_similarity) == (0.2, 0.6)


def test_other_providers_default_to_the_reference_floor_and_the_a6_high_mark() -> None:
    settings = load(EMBEDDING_PROVIDER="fake")
    assert settings.recall.recall_min_similarity == 0.1
    assert settings.recall.recall_high_similarity == pytest.approx(0.3)


def test_setting_only_the_floor_derives_the_high_mark_from_it() -> None:
    settings = load(RECALL_MIN_SIMILARITY="0.25")
    assert settings.recall.recall_high_similarity == pytest.approx(0.625)  # min(0.75, 0.625)


def test_setting_only_the_high_mark_keeps_the_calibrated_floor() -> None:
    assert load(RECALL_HIGH_SIMILARITY="0.7").recall.recall_min_similarity == 0.2


def test_blank_values_mean_use_the_default() -> None:
    settings = load(PORT="  ", RECALL_MIN_SIMILARITY="", EMBEDDING_PROVIDER=" ", MCP_API_KEY="  ")
    assert settings.serve.port == 3000
    assert settings.recall.recall_min_similarity == 0.2
    assert settings.embedding.embedding_provider == "local"
    assert settings.serve.mcp_api_key is None


def test_values_are_trimmed() -> None:
    settings = load(PORT=" 8080 ", MCP_API_KEY=" secret ", HOST=" 0.0.0.0 ")
    assert settings.serve.port == 8080
    assert settings.serve.mcp_api_key == "secret"
    assert settings.serve.host == "0.0.0.0"


# --------------------------------------------------------------------------- storage selection (docs/storage.md)


def test_a_database_url_selects_postgres_and_is_trimmed() -> None:
    settings = load(DATABASE_URL="  postgres://u:pw@db:5432/memory  ")
    assert settings.store.backend == "postgres"
    assert settings.store.database_url == "postgres://u:pw@db:5432/memory"


def test_a_database_url_wins_over_buckets() -> None:
    settings = load(DATABASE_URL="postgres://db/memory", **BUCKETS)
    assert settings.store.backend == "postgres"
    assert settings.store.vector_bucket is None
    assert settings.store.state_bucket is None


def test_both_buckets_select_s3_with_bedrock_embeddings() -> None:
    settings = load(**BUCKETS)
    assert settings.store.backend == "s3"
    assert settings.store.vector_bucket == "vectors"
    assert settings.store.state_bucket == "state"
    assert settings.store.vector_index == "memories"
    assert settings.embedding.embedding_provider == "bedrock"
    assert settings.embedding.embedding_model == "amazon.titan-embed-text-v2:0"
    assert settings.embedding.embedding_dim == 1024
    assert settings.embedding.embedding_api_key is None


def test_vector_index_can_be_renamed() -> None:
    assert load(VECTOR_INDEX=" notes ", **BUCKETS).store.vector_index == "notes"


def test_a_vector_bucket_alone_asks_for_the_state_bucket() -> None:
    message = refusal(VECTOR_BUCKET="vectors")
    assert message.startswith("STATE_BUCKET is required")


def test_a_state_bucket_alone_asks_for_the_vector_bucket() -> None:
    message = refusal(STATE_BUCKET="state")
    assert message.startswith("VECTOR_BUCKET is required")


@pytest.mark.parametrize(
    ("env", "backend"),
    [
        ({"MEMORY_BACKEND": "sqlite", "DATABASE_URL": "postgres://db/m"}, "sqlite"),
        ({"MEMORY_BACKEND": "postgres", "DATABASE_URL": "postgres://db/m", **BUCKETS}, "postgres"),
        ({"MEMORY_BACKEND": "s3", "DATABASE_URL": "postgres://db/m", **BUCKETS}, "s3"),
        ({"MEMORY_BACKEND": " s3 ", **BUCKETS}, "s3"),
    ],
)
def test_memory_backend_forces_the_choice(env: dict[str, str], backend: str) -> None:
    settings = load(**env)
    assert settings.store.backend == backend
    assert "MEMORY_BACKEND" in settings.store.backend_reason


def test_forcing_postgres_without_a_database_url_is_refused() -> None:
    assert refusal(MEMORY_BACKEND="postgres", **BUCKETS).startswith("DATABASE_URL is required")


@pytest.mark.parametrize("buckets", [{}, {"VECTOR_BUCKET": "v"}, {"STATE_BUCKET": "s"}])
def test_forcing_s3_without_both_buckets_is_refused(buckets: dict[str, str]) -> None:
    message = refusal(MEMORY_BACKEND="s3", DATABASE_URL="postgres://db/m", **buckets)
    assert "BUCKET" in message
    assert "required when MEMORY_BACKEND=s3" in message


def test_an_unknown_backend_is_refused_naming_the_variable_and_the_value() -> None:
    message = refusal(MEMORY_BACKEND="mysql")
    assert "MEMORY_BACKEND" in message
    assert '"mysql"' in message


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({}, "embedded default"),
        ({"DATABASE_URL": "postgres://db/m"}, "DATABASE_URL is set"),
        (BUCKETS, "VECTOR_BUCKET and STATE_BUCKET are set"),
        ({"MEMORY_BACKEND": "sqlite"}, "MEMORY_BACKEND=sqlite"),
    ],
)
def test_the_backend_reason_says_why_the_storage_was_chosen(env: dict[str, str], why: str) -> None:
    assert why in load(**env).store.backend_reason


# --------------------------------------------------------------------------- knowledge base


def test_a_blank_knowledge_base_id_means_no_search_docs() -> None:
    assert load(KNOWLEDGE_BASE_ID="   ").store.knowledge_base_id is None


def test_a_knowledge_base_id_is_trimmed() -> None:
    # The reference's test used " KB123 "; real ids are 10 letters and digits (see below).
    assert load(KNOWLEDGE_BASE_ID=" KB12345678 ").store.knowledge_base_id == "KB12345678"


def test_a_knowledge_base_arn_is_accepted() -> None:
    arn = "arn:aws:bedrock:eu-west-1:123456789012:knowledge-base/ABCDE12345"
    assert load(KNOWLEDGE_BASE_ID=arn).store.knowledge_base_id == arn


@pytest.mark.parametrize("raw", ["KB123", "kb-1234567", "KB12345678X", "arn:aws:s3:::docs"])
def test_a_malformed_knowledge_base_id_is_refused_at_start_up_not_on_every_search(raw: str) -> None:
    assert refusal(KNOWLEDGE_BASE_ID=raw) == (
        "KNOWLEDGE_BASE_ID must be a Bedrock knowledge base id (10 letters and digits, e.g. ABCDE12345) "
        f'or its ARN, got "{raw}"'
    )


# --------------------------------------------------------------------------- embedding (docs/embedders.md)


def test_openai_needs_a_base_url_first() -> None:
    assert refusal(EMBEDDING_PROVIDER="openai").startswith("EMBEDDING_BASE_URL is required")


def test_openai_then_needs_an_api_key() -> None:
    message = refusal(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL="https://llm.example/v1")
    assert message.startswith("EMBEDDING_API_KEY is required")


def test_openai_defaults_to_text_embedding_3_small() -> None:
    settings = load(**OPENAI)
    assert settings.embedding.embedding_provider == "openai"
    assert settings.embedding.embedding_model == "text-embedding-3-small"
    assert settings.embedding.embedding_dim == 1536
    assert settings.embedding.embedding_api_key == "sk-key"


def test_openai_takes_another_model_and_dimension() -> None:
    settings = load(**OPENAI, EMBEDDING_MODEL="Qwen3-Embedding-4B", EMBEDDING_DIM="2560")
    assert settings.embedding.embedding_model == "Qwen3-Embedding-4B"
    assert settings.embedding.embedding_dim == 2560


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("https://llm.example/v1", "https://llm.example/v1"),
        ("https://llm.example/v1///", "https://llm.example/v1"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
        (" http://embed:8080/openai/v1/ ", "http://embed:8080/openai/v1"),
    ],
)
def test_a_base_url_is_kept_without_trailing_slashes(raw: str, kept: str) -> None:
    assert load(**{**OPENAI, "EMBEDDING_BASE_URL": raw}).embedding.embedding_base_url == kept


@pytest.mark.parametrize(
    "raw",
    [
        "ftp://llm.example/v1",
        "llm.example/v1",
        "https://",
        "https://llm.example/v1?api-version=2",
        "https://llm.example/v1#frag",
        "https://user@llm.example/v1",
        "https://llm.example:99999/v1",
    ],
)
def test_a_base_url_that_is_not_a_plain_http_base_is_refused(raw: str) -> None:
    message = refusal(**{**OPENAI, "EMBEDDING_BASE_URL": raw})
    assert message.startswith("EMBEDDING_BASE_URL must be an HTTP(S) base URL without credentials, query or fragment")


@pytest.mark.parametrize(
    "raw",
    [
        "https://user:hunter2@llm.example/v1",
        "https://user:hun/ter2@llm.example/v1",
        "https://user:hun#ter2@llm.example/v1",
        "https://user:hun?ter2@llm.example/v1",
        "https://user:hun@ter2@llm.example/v1",
        "https://llm.example/v1?key=hunter2",
    ],
)
def test_a_refused_base_url_never_shows_its_secret(raw: str) -> None:
    message = refusal(**{**OPENAI, "EMBEDDING_BASE_URL": raw})
    assert message.startswith("EMBEDDING_BASE_URL must be")
    assert "ter2" not in message
    assert "hunter2" not in message


def test_a_refused_base_url_is_echoed_with_only_its_secrets_masked() -> None:
    assert refusal(**{**OPENAI, "EMBEDDING_BASE_URL": "ftp://llm.example/v1"}).endswith('got "ftp://llm.example/v1"')
    assert refusal(**{**OPENAI, "EMBEDDING_BASE_URL": "https://u:pw@llm.example/v1?k=v"}).endswith(
        'got "https://***@llm.example/v1?***"'
    )


@pytest.mark.parametrize("key", ["sk-a\nb", "sk-a\x00b", "sk-\u00e9t\u00e9"])
def test_an_api_key_that_cannot_go_in_a_header_is_refused_without_echoing_it(key: str) -> None:
    message = refusal(**{**OPENAI, "EMBEDDING_API_KEY": key})
    assert message.startswith("EMBEDDING_API_KEY may hold printable ASCII only")
    assert key not in message and "sk-" not in message


def test_bedrock_can_be_chosen_with_the_embedded_store_and_defaults_to_titan_v2_at_1024() -> None:
    settings = load(EMBEDDING_PROVIDER="bedrock")
    assert (settings.store.backend, settings.embedding.embedding_provider) == ("sqlite", "bedrock")
    assert (settings.embedding.embedding_model, settings.embedding.embedding_dim) == (
        "amazon.titan-embed-text-v2:0",
        1024,
    )


@pytest.mark.parametrize("dim", ["256", "512", "1024"])
def test_titan_v2_takes_the_widths_it_can_return(dim: str) -> None:
    assert load(EMBEDDING_PROVIDER="bedrock", EMBEDDING_DIM=dim).embedding.embedding_dim == int(dim)


@pytest.mark.parametrize("dim", ["384", "1536", "16000"])
def test_titan_v2_refuses_another_width_naming_the_allowed_ones(dim: str) -> None:
    assert refusal(EMBEDDING_PROVIDER="bedrock", EMBEDDING_DIM=dim) == (
        f'EMBEDDING_DIM must be 256, 512 or 1024 for amazon.titan-embed-text-v2:0 (the widths it can return), got "{dim}"'
    )


def test_another_bedrock_model_keeps_the_general_width_rule() -> None:
    settings = load(EMBEDDING_PROVIDER="bedrock", EMBEDDING_MODEL="amazon.titan-embed-text-v1", EMBEDDING_DIM="1536")
    assert (settings.embedding.embedding_model, settings.embedding.embedding_dim) == (
        "amazon.titan-embed-text-v1",
        1536,
    )


def test_a_misspelt_provider_is_refused_naming_the_value() -> None:
    message = refusal(EMBEDDING_PROVIDER="opneai")
    assert message.startswith("EMBEDDING_PROVIDER must be")
    assert '"opneai"' in message


def test_the_provider_name_is_case_sensitive() -> None:
    assert '"OpenAI"' in refusal(EMBEDDING_PROVIDER="OpenAI")


def test_the_local_provider_refuses_another_model() -> None:
    message = refusal(EMBEDDING_MODEL="bge-small-en")
    assert message.startswith("EMBEDDING_MODEL must be")
    assert '"bge-small-en"' in message


def test_the_local_provider_refuses_another_dimension() -> None:
    assert refusal(EMBEDDING_DIM="768").startswith("EMBEDDING_DIM must be 384")


def test_the_local_provider_accepts_its_own_model_and_dimension_spelt_out() -> None:
    settings = load(EMBEDDING_MODEL="all-MiniLM-L6-v2", EMBEDDING_DIM="384")
    assert (settings.embedding.embedding_model, settings.embedding.embedding_dim) == ("all-MiniLM-L6-v2", 384)


@pytest.mark.parametrize("raw", ["0", "-1", "16001", "abc", "1.5"])
def test_an_embedding_dimension_must_be_an_integer_up_to_16000(raw: str) -> None:
    message = refusal(**OPENAI, EMBEDDING_DIM=raw)
    assert message == f'EMBEDDING_DIM must be an integer between 1 and 16000, got "{raw}"'


# --------------------------------------------------------------------------- similarity floor and HIGH (docs/recall.md)


@pytest.mark.parametrize(("raw", "floor"), [("0.25", 0.25), ("1", 1.0), (" 0.5 ", 0.5)])
def test_a_floor_in_zero_to_one_is_accepted(raw: str, floor: float) -> None:
    assert load(RECALL_MIN_SIMILARITY=raw).recall.recall_min_similarity == floor


def test_a_floor_of_zero_is_refused_because_everything_would_be_high() -> None:
    message = refusal(RECALL_MIN_SIMILARITY="0")
    assert "must be greater than 0" in message
    assert message.startswith("RECALL_MIN_SIMILARITY")


@pytest.mark.parametrize("raw", ["-0.5", "2", "many", "nan", "inf"])
def test_a_floor_outside_zero_to_one_is_refused_naming_the_value(raw: str) -> None:
    assert refusal(RECALL_MIN_SIMILARITY=raw) == (
        f'RECALL_MIN_SIMILARITY must be greater than 0 and at most 1, got "{raw}"'
    )


def test_the_high_similarity_follows_the_floor_by_default() -> None:
    assert load(RECALL_MIN_SIMILARITY="0.5").recall.recall_high_similarity == 0.75
    assert load(RECALL_MIN_SIMILARITY="0.2").recall.recall_high_similarity == pytest.approx(0.6)


def test_an_explicit_high_similarity_is_used() -> None:
    assert load(RECALL_HIGH_SIMILARITY="0.45").recall.recall_high_similarity == 0.45
    assert load(RECALL_MIN_SIMILARITY="0.5", RECALL_HIGH_SIMILARITY="0.5").recall.recall_high_similarity == 0.5


@pytest.mark.parametrize("raw", ["0.05", "1.01", "high"])
def test_a_high_similarity_below_the_floor_or_above_one_is_refused(raw: str) -> None:
    message = refusal(RECALL_HIGH_SIMILARITY=raw, RECALL_MIN_SIMILARITY="0.1")
    assert message.startswith("RECALL_HIGH_SIMILARITY must be at least RECALL_MIN_SIMILARITY (0.1)")
    assert f'"{raw}"' in message


def test_a_cosine_spread_gives_the_agnostic_model_its_scale_from_the_floor() -> None:
    assert load(EMBEDDING_PROVIDER="fake").recall.agnostic_scale is None
    read = load(EMBEDDING_PROVIDER="fake", RECALL_MIN_SIMILARITY="0.3", RECALL_COSINE_SPREAD="0.12").recall
    assert read.recall_cosine_spread == 0.12 and read.agnostic_scale == (0.3, 0.42)


@pytest.mark.parametrize("raw", ["0", "-0.1", "1.5", "wide"])
def test_a_cosine_spread_outside_zero_to_one_is_refused_naming_it(raw: str) -> None:
    assert (
        refusal(RECALL_COSINE_SPREAD=raw) == f'RECALL_COSINE_SPREAD must be greater than 0 and at most 1, got "{raw}"'
    )


def test_a_probability_floor_is_read_when_set_and_is_the_models_own_otherwise() -> None:
    assert load().recall.recall_min_probability is None
    assert load(RECALL_MIN_PROBABILITY="0.19").recall.recall_min_probability == 0.19


@pytest.mark.parametrize("raw", ["0", "-0.2", "1.5", "likely"])
def test_a_probability_floor_outside_zero_to_one_is_refused_naming_it(raw: str) -> None:
    assert (
        refusal(RECALL_MIN_PROBABILITY=raw)
        == f'RECALL_MIN_PROBABILITY must be greater than 0 and at most 1, got "{raw}"'
    )


def test_recall_retrieval_is_hybrid_unless_set() -> None:
    assert load().recall.recall_retrieval == "hybrid"
    assert load(RECALL_RETRIEVAL="dense").recall.recall_retrieval == "dense"
    assert load(RECALL_RETRIEVAL=" keyword ").recall.recall_retrieval == "keyword"


@pytest.mark.parametrize("raw", ["bm25", "Hybrid", "vector"])
def test_an_unknown_recall_retrieval_is_refused_with_the_choices(raw: str) -> None:
    assert refusal(RECALL_RETRIEVAL=raw) == f'RECALL_RETRIEVAL must be "hybrid", "dense" or "keyword", got "{raw}"'


# --------------------------------------------------------------------------- integers


@pytest.mark.parametrize("raw", ["65536", "abc", "-1", "80.5"])
def test_a_port_outside_0_to_65535_is_refused_naming_port(raw: str) -> None:
    assert refusal(PORT=raw) == f'PORT must be an integer between 0 and 65535, got "{raw}"'


def test_ports_at_both_ends_are_accepted() -> None:
    assert load(PORT="1").serve.port == 1
    assert load(PORT="65535").serve.port == 65535


def test_port_0_asks_for_any_free_port_as_the_port_option_does() -> None:
    assert load(PORT="0").serve.port == 0


@pytest.mark.parametrize("name", ["STATS_FLUSH_MS", "STATS_COMPACT_THRESHOLD"])
@pytest.mark.parametrize("raw", ["0", "-5", "ten", "2.5"])
def test_stats_settings_must_be_positive_integers(name: str, raw: str) -> None:
    assert refusal(**{name: raw}) == f'{name} must be a positive integer, got "{raw}"'


def test_stats_settings_are_read() -> None:
    settings = load(STATS_FLUSH_MS="5000", STATS_COMPACT_THRESHOLD="1")
    assert (settings.counters.stats_flush_ms, settings.counters.stats_compact_threshold) == (5000, 1)


def test_a_postgresql_tenant_of_100000_memories_gets_an_hnsw_index_unless_told_otherwise() -> None:
    from mcp_memory.stores.postgres.ann import DEFAULT_MIN_MEMORIES, EF_SEARCH

    assert load().store.postgres_hnsw_min_memories == 100_000 == DEFAULT_MIN_MEMORIES
    assert load().store.postgres_hnsw_ef_search == EF_SEARCH
    assert load(POSTGRES_HNSW_MIN_MEMORIES="250000").store.postgres_hnsw_min_memories == 250_000
    assert load(POSTGRES_HNSW_MIN_MEMORIES="0").store.postgres_hnsw_min_memories == 0  # never


@pytest.mark.parametrize("raw", ["-1", "many", "1e5", "1000000001"])
def test_the_hnsw_threshold_must_be_a_whole_number_of_memories(raw: str) -> None:
    assert refusal(POSTGRES_HNSW_MIN_MEMORIES=raw) == (
        f'POSTGRES_HNSW_MIN_MEMORIES must be an integer between 0 and 1000000000, got "{raw}"'
    )


def test_the_hnsw_walk_keeps_200_candidates_and_recall_ranks_exactly_unless_told_otherwise() -> None:
    settings = load()
    assert (settings.store.postgres_hnsw_ef_search, settings.store.postgres_hnsw_recall) == (200, False)
    settings = load(POSTGRES_HNSW_EF_SEARCH="1000", POSTGRES_HNSW_RECALL="true")
    assert (settings.store.postgres_hnsw_ef_search, settings.store.postgres_hnsw_recall) == (1000, True)


@pytest.mark.parametrize("raw", ["0", "1001", "lots", "2.5"])
def test_the_hnsw_walk_size_must_be_within_pgvectors_bounds(raw: str) -> None:
    assert refusal(POSTGRES_HNSW_EF_SEARCH=raw) == (
        f'POSTGRES_HNSW_EF_SEARCH must be an integer between 1 and 1000, got "{raw}"'
    )


def test_ranking_through_the_hnsw_index_is_a_yes_or_no() -> None:
    assert refusal(POSTGRES_HNSW_RECALL="sometimes") == 'POSTGRES_HNSW_RECALL must be true or false, got "sometimes"'


def test_no_sqlite_tenant_checks_duplicates_through_the_approximate_index_unless_a_threshold_is_set() -> None:
    assert load().store.sqlite_ann_min_memories == 0
    assert load(SQLITE_ANN_MIN_MEMORIES="50000").store.sqlite_ann_min_memories == 50_000
    assert load(SQLITE_ANN_MIN_MEMORIES="0").store.sqlite_ann_min_memories == 0  # never


def test_an_sqlite_index_threshold_without_the_ann_extra_is_refused_naming_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "usearch", None)  # as if the ann extra were not installed
    assert refusal(SQLITE_ANN_MIN_MEMORIES="200000") == (
        "SQLITE_ANN_MIN_MEMORIES=200000 needs the approximate index library: "
        "from a checkout, pip install '.[ann]' (once released: pip install 'mcp-tenant-memory[ann]'); "
        "or set SQLITE_ANN_MIN_MEMORIES=0"
    )
    assert load(SQLITE_ANN_MIN_MEMORIES="0").store.sqlite_ann_min_memories == 0  # off needs nothing


@pytest.mark.parametrize("raw", ["-1", "lots", "2e5", "1000000001"])
def test_the_sqlite_index_threshold_must_be_a_whole_number_of_memories(raw: str) -> None:
    assert refusal(SQLITE_ANN_MIN_MEMORIES=raw) == (
        f'SQLITE_ANN_MIN_MEMORIES must be an integer between 0 and 1000000000, got "{raw}"'
    )


# --------------------------------------------------------------------------- HTTP limits


def test_http_limits_default_to_ten_thirty_and_five_seconds_and_a_cap_from_the_file_limit() -> None:
    limits = load().serve.http_limits
    assert (limits.header_timeout_ms, limits.body_timeout_ms, limits.keep_alive_ms) == (10_000, 30_000, 5_000)
    assert limits.max_connections is None  # server/http/connections.py: 1000, or fewer under a low file limit


def test_http_limits_are_read() -> None:
    limits = load(
        HTTP_HEADER_TIMEOUT_MS="500", HTTP_BODY_TIMEOUT_MS="700", HTTP_KEEP_ALIVE_MS="900", HTTP_MAX_CONNECTIONS="12"
    ).serve.http_limits
    assert (limits.header_timeout_ms, limits.body_timeout_ms, limits.keep_alive_ms) == (500, 700, 900)
    assert limits.max_connections == 12


@pytest.mark.parametrize(
    "name", ["HTTP_HEADER_TIMEOUT_MS", "HTTP_BODY_TIMEOUT_MS", "HTTP_KEEP_ALIVE_MS", "HTTP_MAX_CONNECTIONS"]
)
@pytest.mark.parametrize("raw", ["0", "-5", "ten", "2.5"])
def test_http_limits_must_be_positive_integers(name: str, raw: str) -> None:
    assert refusal(**{name: raw}) == f'{name} must be a positive integer, got "{raw}"'


def test_the_default_connection_cap_leaves_room_under_a_low_file_limit() -> None:
    import resource

    from mcp_memory.config import HttpLimits
    from mcp_memory.server.http.connections import connection_cap

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        assert connection_cap(HttpLimits()) == 256 - 64
        assert connection_cap(HttpLimits(max_connections=5000)) == 5000  # set: taken as it is
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    if soft >= 1064:
        assert connection_cap(HttpLimits()) == 1000


# --------------------------------------------------------------------------- caller defaults (docs/context.md)


def test_memory_tenant_and_conversation_are_read_and_trimmed() -> None:
    settings = load(MEMORY_TENANT=" acme ", MEMORY_CONVERSATION=" chat:1 ")
    assert (settings.caller.tenant, settings.caller.conversation) == ("acme", "chat:1")


def test_a_malformed_memory_tenant_is_refused_naming_the_variable() -> None:
    assert refusal(MEMORY_TENANT="../other") == (
        "MEMORY_TENANT must start with a letter or digit and contain only letters, digits, '.', '_' or '-'"
    )


def test_a_malformed_memory_conversation_is_refused_naming_the_variable() -> None:
    assert refusal(MEMORY_CONVERSATION="has space") == (
        "MEMORY_CONVERSATION may carry printable ASCII only, with no whitespace"
    )


# --------------------------------------------------------------------------- order of errors


@pytest.mark.parametrize(
    ("env", "reported"),
    [
        ({"PORT": "65536", "RECALL_MIN_SIMILARITY": "0"}, "PORT"),
        ({"PORT": "65536", "VECTOR_BUCKET": "v"}, "PORT"),
        ({"VECTOR_BUCKET": "v", "EMBEDDING_PROVIDER": "nope"}, "STATE_BUCKET"),
        ({"MEMORY_BACKEND": "nope", "EMBEDDING_PROVIDER": "nope"}, "MEMORY_BACKEND"),
        ({"EMBEDDING_PROVIDER": "openai", "EMBEDDING_DIM": "0"}, "EMBEDDING_BASE_URL"),
        ({**OPENAI, "EMBEDDING_API_KEY": "", "EMBEDDING_DIM": "0"}, "EMBEDDING_API_KEY"),
        ({"EMBEDDING_MODEL": "other", "EMBEDDING_DIM": "0"}, "EMBEDDING_DIM"),
        ({"EMBEDDING_MODEL": "other", "RECALL_MIN_SIMILARITY": "0"}, "EMBEDDING_MODEL"),
        ({"RECALL_MIN_SIMILARITY": "0", "STATS_FLUSH_MS": "0"}, "RECALL_MIN_SIMILARITY"),
        ({"STATS_FLUSH_MS": "0", "STATS_COMPACT_THRESHOLD": "0"}, "STATS_FLUSH_MS"),
        ({"STATS_COMPACT_THRESHOLD": "0", "MEMORY_TENANT": "../x"}, "STATS_COMPACT_THRESHOLD"),
    ],
)
def test_the_first_error_in_the_documented_order_is_the_one_reported(env: dict[str, str], reported: str) -> None:
    assert refusal(**env).startswith(reported)


# --------------------------------------------------------------------------- secrets


def test_the_settings_repr_shows_no_secret() -> None:
    settings = load(
        DATABASE_URL="postgres://memory:db-pass-123@db:5432/memory",
        MCP_API_KEY="mcp-key-456",
        **{**OPENAI, "EMBEDDING_API_KEY": "embed-key-789"},
    )
    text = repr(settings)
    for secret in ("db-pass-123", "mcp-key-456", "embed-key-789"):
        assert secret not in text
    assert "postgres" in text  # still says which storage it is


def test_the_redacted_database_url_hides_the_password() -> None:
    settings = load(DATABASE_URL="postgres://memory:db-pass-123@db:5432/memory")
    assert settings.store.redacted_database_url == "postgres://memory:***@db:5432/memory"
    assert load().store.redacted_database_url is None


def test_redact_url_masks_the_password() -> None:
    assert redact_url("postgres://u:secret@h:5432/db") == "postgres://u:***@h:5432/db"


def test_redact_url_masks_a_password_given_as_a_query_parameter() -> None:
    assert redact_url("postgresql://u@h/db?sslmode=require&password=secret") == (
        "postgresql://u@h/db?sslmode=require&password=***"
    )


def test_redact_url_keeps_an_ipv6_host_readable() -> None:
    assert redact_url("postgres://u:secret@[::1]:5432/db") == "postgres://u:***@[::1]:5432/db"


def test_redact_url_leaves_a_url_without_a_password_alone() -> None:
    assert redact_url("postgres://u@h:5432/db") == "postgres://u@h:5432/db"
    assert redact_url("postgresql://h/db?sslmode=require") == "postgresql://h/db?sslmode=require"


def test_redact_url_shows_a_url_it_cannot_parse_as_written_with_the_password_masked() -> None:
    # the user sees their mistake (issue 36): an unclosed bracket, a port that is not a number
    assert redact_url("postgres://u:secret@[::1") == "postgres://u:***@[::1"
    assert redact_url("postgres://u:secret@h:port/db") == "postgres://u:***@h:port/db"
    assert redact_url("postgres://app:hunter2secret/x@/mem?host=/tmp") == "postgres://app:***@/mem?host=/tmp"
    assert redact_url("postgres://app:secret/db") == "postgres://app:***/db"  # the @host left off
    assert redact_url("host=/tmp user=app password='se cret' dbname=mem") == (
        "host=/tmp user=app password=*** dbname=mem"
    )


@pytest.mark.parametrize(
    "url", ["x", "localhost", "postgres://h1:5432,h2:5433/db", "postgresql://[::1]:5432/db", "postgres:///mem"]
)
def test_redact_url_shows_a_value_without_a_password_as_it_is(url: str) -> None:
    assert redact_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "postgres://u:se#cret@h/db",
        "postgres://u:se?cret@h/db",
        "postgres://u:se/cret@h/db",
        "postgres://u:se@cret@h/db",
        "postgresql://u@h/db?password=secret",
        "postgresql://u@h/db?sslmode=require&password=secret",
        "host=h user=u password=secret dbname=db",
    ],
)
def test_redact_url_never_shows_a_password_however_the_url_is_written(url: str) -> None:
    redacted = redact_url(url)
    assert "secret" not in redacted
    assert "cret" not in redacted


# --------------------------------------------------------------------------- EMBEDDING_SCRIPTS


def test_the_scripts_a_model_reads_are_the_providers_own_unless_embedding_scripts_says_otherwise() -> None:
    from mcp_memory.embedders import open_embedder

    assert open_embedder(load().embedding).scripts == frozenset({"Latin"})  # the local model reads English
    assert open_embedder(load(**OPENAI).embedding).scripts is None  # a remote model: every script
    # An English-only model behind an OpenAI-compatible server, and the local model declared
    # multilingual by an operator who knows better: the setting wins either way.
    assert open_embedder(load(**OPENAI, EMBEDDING_SCRIPTS="Latin").embedding).scripts == frozenset({"Latin"})
    assert open_embedder(load(EMBEDDING_SCRIPTS="all").embedding).scripts is None
    assert load(EMBEDDING_SCRIPTS=" Latin , Hangul ").embedding.embedding_scripts == frozenset({"Latin", "Hangul"})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("Lattin", 'EMBEDDING_SCRIPTS: "Lattin" is not a Unicode script name'),
        ("Latin,Klingon", '"Klingon" is not a Unicode script name'),
        (",", 'EMBEDDING_SCRIPTS must be "all" or script names such as "Latin,Hangul", got ","'),
    ],
)
def test_an_unknown_script_is_refused_naming_the_variable_and_the_name(raw: str, message: str) -> None:
    assert message in refusal(EMBEDDING_SCRIPTS=raw)
