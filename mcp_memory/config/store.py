"""The store section: which backend, why, and what it needs (docs/storage.md).

Which variables a backend needs and what else it reads (the embedded database's place) are
rows of stores.BACKENDS; this section reads the rows as they are, so a new row is checked
without an edit here.
"""

from __future__ import annotations

import re
from typing import Any

from mcp_memory.config import Env, and_, one_of
from mcp_memory.core.errors import ConfigError
from mcp_memory.stores import BACKENDS
from mcp_memory.stores.section import StoreSection as StoreSection

#: pgvector's own bound on hnsw.ef_search (its GUC refuses more).
EF_SEARCH_MAX = 1000

#: A knowledge base id, or its ARN (the pattern botocore's Retrieve model declares).
_KNOWLEDGE_BASE_ID = re.compile(
    r"[0-9a-zA-Z]{10}|arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:knowledge-base/[0-9a-zA-Z]{10}"
)


def choose(env: Env) -> dict[str, Any]:
    """The backend and its reason, what it requires, what every row reads, and the knowledge base."""
    backend, reason = _storage(env)
    values: dict[str, Any] = {"backend": backend, "backend_reason": reason}
    values.update({name.lower(): env.raw(name) for name in BACKENDS[backend].requires})
    for row in BACKENDS.values():
        if row.reads is not None:
            values.update(row.reads(env.raw))
    values["knowledge_base_id"] = _knowledge_base_id(env)
    values["aws_region"] = env.raw("AWS_REGION") or StoreSection.aws_region
    return values


def tuning(env: Env) -> dict[str, Any]:
    """What the chosen backend is tuned with."""
    default = StoreSection.postgres_hnsw_min_memories
    return {
        "postgres_hnsw_min_memories": env.integer("POSTGRES_HNSW_MIN_MEMORIES", default, 10**9, minimum=0),
        "postgres_hnsw_ef_search": env.integer(
            "POSTGRES_HNSW_EF_SEARCH", StoreSection.postgres_hnsw_ef_search, EF_SEARCH_MAX, minimum=1
        ),
        "postgres_hnsw_recall": env.flag("POSTGRES_HNSW_RECALL"),
        "sqlite_ann_min_memories": _sqlite_ann_min_memories(env),
        "vector_index": env.raw("VECTOR_INDEX") or StoreSection.vector_index,
    }


def _sqlite_ann_min_memories(env: Env) -> int:
    """The threshold, refused when it is on and the `ann` extra (usearch) is not installed: a
    setting that silently did nothing would leave remember on the exact scan unnoticed."""
    value = env.integer("SQLITE_ANN_MIN_MEMORIES", StoreSection.sqlite_ann_min_memories, 10**9, minimum=0)
    if value > 0:
        import importlib.util

        if importlib.util.find_spec("usearch") is None:
            from mcp_memory.core.version import install_hint

            raise ConfigError(
                f"SQLITE_ANN_MIN_MEMORIES={value} needs the approximate index library: "
                f"{install_hint('ann')}; or set SQLITE_ANN_MIN_MEMORIES=0"
            )
    return value


def _storage(env: Env) -> tuple[str, str]:
    """Forced by MEMORY_BACKEND, else selected by presence, else embedded SQLite (docs/storage.md)."""
    forced = env.raw("MEMORY_BACKEND")
    if forced is not None:
        if forced not in BACKENDS:
            raise ConfigError(f'MEMORY_BACKEND must be {one_of(tuple(BACKENDS))}, got "{forced}"')
        env.required_together(BACKENDS[forced].requires, f"when MEMORY_BACKEND={forced}")
        return forced, f"MEMORY_BACKEND={forced}"
    for backend in BACKENDS.values():
        if any(env.raw(name) is not None for name in backend.requires):
            env.required_together(backend.requires, f"for the {backend.label} backend")
            return backend.name, f"{and_(backend.requires)} set"
    embedded = next(backend for backend in BACKENDS.values() if not backend.requires)
    selectors = " nor ".join("/".join(backend.requires) for backend in BACKENDS.values() if backend.requires)
    return embedded.name, f"embedded default: neither {selectors} is set"


def _knowledge_base_id(env: Env) -> str | None:
    """Checked here, because botocore would refuse a malformed id on every search."""
    raw = env.raw("KNOWLEDGE_BASE_ID")
    if raw is not None and not _KNOWLEDGE_BASE_ID.fullmatch(raw):
        raise ConfigError(
            "KNOWLEDGE_BASE_ID must be a Bedrock knowledge base id (10 letters and digits, "
            f'e.g. ABCDE12345) or its ARN, got "{raw}"'
        )
    return raw
