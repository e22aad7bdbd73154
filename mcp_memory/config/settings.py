"""`Settings`: every section in one object, read in one fixed order (docs/configuration.md).

`Settings.from_env()` reads them all, as serve-http and the CLI need; `open_service()` reads
only the sections a service uses (config.SERVICE_SECTIONS). The variables are read in one fixed
order, so the first bad value is the one reported, by name, with the value that was refused
(never a secret); a reader of fewer sections reports the first bad one among its own.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_memory.config import SECTIONS, Env, embedding, recall, serve, store
from mcp_memory.config.embedding import EmbeddingSection
from mcp_memory.config.recall import RecallSection
from mcp_memory.config.serve import ServeSection
from mcp_memory.config.store import StoreSection
from mcp_memory.core.errors import ConfigError, ContextError
from mcp_memory.core.identity import parse_conversation, parse_tenant

# --------------------------------------------------------------------------- the counters and caller sections
# (the counters are the service's, docs/counters.md; the caller's defaults serve serve-stdio and the
# CLI's commands, which a library script names itself: a `Caller`)


@dataclass(frozen=True)
class CountersSection:
    """How often this process writes its access counters, when a reader folds shards in, and
    the host name in this process's shard id."""

    stats_flush_ms: int = 30_000
    stats_compact_threshold: int = 20
    hostname: str = "localhost"


@dataclass(frozen=True)
class CallerSection:
    """MEMORY_TENANT and MEMORY_CONVERSATION, for serve-stdio and the CLI."""

    tenant: str | None = None
    conversation: str | None = None


def counters(env: Env) -> dict[str, Any]:
    return {
        "stats_flush_ms": env.integer("STATS_FLUSH_MS", CountersSection.stats_flush_ms),
        "stats_compact_threshold": env.integer("STATS_COMPACT_THRESHOLD", CountersSection.stats_compact_threshold),
    }


def hostname(env: Env) -> dict[str, Any]:
    return {"hostname": env.raw("HOSTNAME") or socket.gethostname()}


def caller(env: Env) -> dict[str, Any]:
    tenant = env.raw("MEMORY_TENANT")
    conversation = env.raw("MEMORY_CONVERSATION")
    try:
        if tenant is not None:
            tenant = parse_tenant(tenant, "MEMORY_TENANT")
        conversation = parse_conversation(conversation, "MEMORY_CONVERSATION")
    except ContextError as exc:
        raise ConfigError(str(exc)) from None
    return {"tenant": tenant, "conversation": conversation}


# --------------------------------------------------------------------------- every section

#: Every reader, in the order the variables are checked (kept from the single reader this
#: replaced, so the first bad variable reported is the same); each gives fields of its section and
#: may read the sections an earlier one gave (the embedding section needs the backend).
_READERS: tuple[tuple[str, Callable[[Env, dict[str, dict[str, Any]]], dict[str, Any]]], ...] = (
    ("serve", lambda env, _: serve.listen(env)),
    ("store", lambda env, _: store.choose(env)),
    ("embedding", lambda env, got: embedding.model(env, got["store"]["backend"])),
    (
        "recall",
        lambda env, got: recall.relevance(
            env, got["embedding"]["embedding_provider"], got["embedding"].get("embedding_model", "")
        ),
    ),
    ("counters", lambda env, _: counters(env)),
    ("store", lambda env, _: store.tuning(env)),
    ("caller", lambda env, _: caller(env)),
    ("embedding", lambda env, _: embedding.scripts(env)),
    ("recall", lambda env, _: recall.retrieval(env)),
    ("serve", lambda env, _: serve.serving(env)),
    ("counters", lambda env, _: hostname(env)),
)


@dataclass(frozen=True)
class Settings:
    """Every setting, validated, by section: each component is handed its own (the stores
    `store`, the embedders `embedding`, the service `recall` and `counters`, a local command
    `caller`, serve-http `serve`). Secrets are kept out of repr()."""

    store: StoreSection = field(default_factory=StoreSection)
    embedding: EmbeddingSection = field(default_factory=EmbeddingSection)
    recall: RecallSection = field(default_factory=RecallSection)
    counters: CountersSection = field(default_factory=CountersSection)
    caller: CallerSection = field(default_factory=CallerSection)
    serve: ServeSection = field(default_factory=ServeSection)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, sections: Collection[str] = SECTIONS) -> Settings:
        """Read and validate the variables of `sections` (every one by default); raises
        ConfigError naming the first bad one. A section not read keeps its defaults."""
        unknown = set(sections) - set(SECTIONS)
        if unknown or ("embedding" in sections and "store" not in sections):
            raise ValueError(f"sections must be among {SECTIONS}, with store for embedding, got {sorted(sections)}")
        if "recall" in sections and "embedding" not in sections:
            raise ValueError("the recall section needs the embedding section")
        env = Env(os.environ if environ is None else environ)
        got: dict[str, dict[str, Any]] = {}
        for section, read in _READERS:
            if section in sections:
                got.setdefault(section, {}).update(read(env, got))
        return cls(**{section: _SHAPES[section](**values) for section, values in got.items()})


#: Each section's shape, by its name in SECTIONS.
_SHAPES: dict[str, Callable[..., Any]] = {
    "store": StoreSection,
    "embedding": EmbeddingSection,
    "recall": RecallSection,
    "counters": CountersSection,
    "caller": CallerSection,
    "serve": ServeSection,
}
