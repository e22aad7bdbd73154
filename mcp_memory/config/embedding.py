"""The embedding section: the provider, its model and width, and what it needs (docs/embedders.md).

Which variables a provider needs and the rule its model and width follow are rows of
embedders.PROVIDERS; how a URL or a key is spelled is this section's business.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcp_memory.config import Env, one_of, scrub
from mcp_memory.core.errors import ConfigError
from mcp_memory.core.fusion import check_scripts
from mcp_memory.embedders import PROVIDERS
from mcp_memory.embedders import EmbeddingSection as EmbeddingSection
from mcp_memory.stores import BACKENDS

EMBEDDING_DIM_MAX = 16_000


def model(env: Env, backend: str) -> dict[str, Any]:
    """The provider (the backend's default when unset), its model and width, and what it needs."""
    provider = env.raw("EMBEDDING_PROVIDER") or BACKENDS[backend].default_provider
    if provider not in PROVIDERS:
        raise ConfigError(f'EMBEDDING_PROVIDER must be {one_of(tuple(PROVIDERS))}, got "{provider}"')
    entry = PROVIDERS[provider]
    needed = {name.lower(): _required(env, name, f"when EMBEDDING_PROVIDER={provider}") for name in entry.requires}
    name = env.raw("EMBEDDING_MODEL") or entry.model
    dim = env.integer("EMBEDDING_DIM", entry.dim, EMBEDDING_DIM_MAX)
    if entry.check is not None:
        entry.check(name, dim)
    return {"embedding_provider": provider, "embedding_model": name, "embedding_dim": dim, **needed}


def scripts(env: Env) -> dict[str, Any]:
    """EMBEDDING_SCRIPTS: "all", or Unicode script names separated by commas (docs/recall.md)."""
    raw = env.raw("EMBEDDING_SCRIPTS")
    if raw is None:
        return {"embedding_scripts": None}
    if raw.strip().lower() == "all":
        return {"embedding_scripts": frozenset()}
    names = [n.strip() for n in raw.split(",") if n.strip()]
    if not names:
        raise ConfigError(f'EMBEDDING_SCRIPTS must be "all" or script names such as "Latin,Hangul", got "{raw}"')
    try:
        return {"embedding_scripts": check_scripts(names)}
    except ValueError as exc:
        raise ConfigError(f"EMBEDDING_SCRIPTS: {exc}") from None


def _required(env: Env, name: str, why: str) -> str:
    """A variable that must be set, checked as its kind is spelled (a URL, a key)."""
    raw = env.raw(name)
    if raw is None:
        raise ConfigError(f"{name} is required {why}")
    spelled = {"EMBEDDING_BASE_URL": _base_url, "EMBEDDING_API_KEY": _api_key}.get(name)
    return raw if spelled is None else spelled(raw)


def _base_url(raw: str) -> str:
    message = (
        f'EMBEDDING_BASE_URL must be an HTTP(S) base URL without credentials, query or fragment, got "{scrub(raw)}"'
    )
    try:
        parts = urlsplit(raw)
        has_credentials = parts.username is not None or parts.password is not None
        _ = parts.port  # raises on a malformed port
    except ValueError:
        raise ConfigError(message) from None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or has_credentials
        or parts.query
        or parts.fragment
        or "?" in raw
        or "#" in raw
    ):
        raise ConfigError(message)
    return raw.rstrip("/")


def _api_key(raw: str) -> str:
    if not all(" " <= ch <= "~" for ch in raw):  # never echoed: it is a secret
        raise ConfigError(
            "EMBEDDING_API_KEY may hold printable ASCII only (it is sent in an HTTP header); "
            "a server that needs no key accepts any placeholder, e.g. not-required"
        )
    return raw
