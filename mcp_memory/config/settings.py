"""`Settings`: every section in one object, read in one fixed order (docs/configuration.md).

`Settings.from_env()` reads them all, as serve-http and the CLI need; `open_service()` reads
only the sections a service uses (config.SERVICE_SECTIONS). The variables are read in one fixed
order, so the first bad value is the one reported, by name, with the value that was refused
(never a secret); a reader of fewer sections reports the first bad one among its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_memory.config import SECTIONS, embedding, local, recall, serve, store
from mcp_memory.config.embedding import EmbeddingSection
from mcp_memory.config.env import Env
from mcp_memory.config.local import CallerSection, CountersSection
from mcp_memory.config.recall import RecallSection
from mcp_memory.config.serve import ServeSection
from mcp_memory.config.store import StoreSection
from mcp_memory.core.redact import redact_url

#: Every reader, in the order the variables are checked (kept from the single reader this
#: replaced, so the first bad variable reported is the same); each gives Settings fields and may
#: read the fields an earlier one gave (the embedding section needs the backend).
_READERS: tuple[tuple[str, Callable[[Env, dict[str, Any]], dict[str, Any]]], ...] = (
    ("serve", lambda env, _: serve.listen(env)),
    ("store", lambda env, _: store.choose(env)),
    ("embedding", lambda env, got: embedding.model(env, got["backend"])),
    ("recall", lambda env, got: recall.relevance(env, got["embedding_provider"])),
    ("counters", lambda env, _: local.counters(env)),
    ("store", lambda env, _: store.tuning(env)),
    ("caller", lambda env, _: local.caller(env)),
    ("embedding", lambda env, _: embedding.scripts(env)),
    ("recall", lambda env, _: recall.retrieval(env)),
    ("serve", lambda env, _: serve.serving(env)),
    ("counters", lambda env, _: local.hostname(env)),
)


@dataclass(frozen=True)
class Settings(ServeSection, CallerSection, CountersSection, RecallSection, EmbeddingSection, StoreSection):
    """Every setting, validated: the store, embedding, recall, counters, caller and serve
    sections' fields in one object. Secrets are kept out of repr()."""

    @property
    def redacted_database_url(self) -> str | None:
        return redact_url(self.database_url) if self.database_url else None

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
        got: dict[str, Any] = {}
        for section, read in _READERS:
            if section in sections:
                got.update(read(env, got))
        return cls(**got)
