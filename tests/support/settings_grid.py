"""Every resulting setting and every refusal over a large grid of environments, one line each.

Run before and after a change to how settings are read, and diff the two outputs: a re-layout
of the readers must change no line (`python -m tests.support.settings_grid OUT`). Three grids:
the storage, embedding and relevance variables in full product; every pair of values of every
variable (so which of two bad variables is reported first is pinned); and the embedded
database's place against a legacy file that exists or not. With `--service`, each line also
gives what `open_service()` alone reads (the store, embedding, recall sections).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from mcp_memory.config import Settings
from mcp_memory.core.errors import ConfigError

UNSET = None
BASE = {"HOSTNAME": "pod-1"}

#: The product grid: storage, embedding, relevance.
PRODUCT: dict[str, tuple[str | None, ...]] = {
    "MEMORY_BACKEND": (UNSET, "sqlite", "postgres", "s3", "sqlit"),
    "DATABASE_URL": (UNSET, "postgresql://ada:pw@db/memory"),
    "VECTOR_BUCKET": (UNSET, "vectors"),
    "STATE_BUCKET": (UNSET, "state"),
    "KNOWLEDGE_BASE_ID": (UNSET, "ABCDE12345", "ABC"),
    "EMBEDDING_PROVIDER": (UNSET, "local", "local-multilingual", "openai", "bedrock", "fake", "acme"),
    "EMBEDDING_DIM": (UNSET, "256", "99999"),
    "EMBEDDING_BASE_URL+KEY": (UNSET, "ok", "bad"),
    "RECALL_MIN_SIMILARITY": (UNSET, "0.3", "2"),
    "RECALL_HIGH_SIMILARITY": (UNSET, "0.5", "high"),
}
EMBEDDING_PAIRS = {
    "ok": {"EMBEDDING_BASE_URL": "http://localhost:8000/v1/", "EMBEDDING_API_KEY": "sk-test"},
    "bad": {"EMBEDDING_BASE_URL": "ftp://u:secret@host/x?q=1", "EMBEDDING_API_KEY": "kéy"},
}

#: The pair grid: every variable read, a good and a bad value or two each.
PAIRS: dict[str, tuple[str, ...]] = {
    "HOST": ("0.0.0.0",),
    "PORT": ("0", "8080", "70000", "x"),
    "MCP_API_KEY": ("k",),
    "AWS_REGION": ("us-east-1",),
    "MEMORY_BACKEND": ("postgres", "nope"),
    "DATABASE_URL": ("postgresql://ada:pw@db/memory",),
    "POSTGRES_HNSW_MIN_MEMORIES": ("0", "5000", "-1"),
    "POSTGRES_HNSW_EF_SEARCH": ("400", "0"),
    "POSTGRES_HNSW_RECALL": ("true", "maybe"),
    "SQLITE_ANN_MIN_MEMORIES": ("0", "5000", "x"),
    "VECTOR_BUCKET": ("v",),
    "VECTOR_INDEX": ("other",),
    "KNOWLEDGE_BASE_ID": ("ABCDE12345", "bad"),
    "EMBEDDING_PROVIDER": ("openai", "bedrock", "x"),
    "EMBEDDING_MODEL": ("m",),
    "EMBEDDING_DIM": ("512", "0"),
    "EMBEDDING_BASE_URL": ("https://e.example/v1", "nope"),
    "EMBEDDING_API_KEY": ("sk", "k\x01"),
    "EMBEDDING_SCRIPTS": ("all", "Latin,Hangul", ",", "Klingon"),
    "RECALL_MIN_SIMILARITY": ("0.25", "0"),
    "RECALL_HIGH_SIMILARITY": ("0.9", "0.05"),
    "RECALL_COSINE_SPREAD": ("0.118", "0"),
    "RECALL_MIN_PROBABILITY": ("0.19", "0"),
    "RECALL_RETRIEVAL": ("dense", "keyword", "sparse"),
    "MEMORY_TENANT": ("acme", "bad tenant!"),
    "MEMORY_CONVERSATION": ("c-1", "x" * 300),
    "STATS_FLUSH_MS": ("1000", "0"),
    "STATS_COMPACT_THRESHOLD": ("5", "-3"),
    "HTTP_HEADER_TIMEOUT_MS": ("100", "z"),
    "HTTP_BODY_TIMEOUT_MS": ("100",),
    "HTTP_KEEP_ALIVE_MS": ("0",),
    "HTTP_MAX_CONNECTIONS": ("10", "0"),
    "MCP_OAUTH_ISSUER": ("https://issuer.example", "http://127.0.0.1:9000", "http://evil.example"),
    "MCP_OAUTH_JWKS_URL": ("https://issuer.example/jwks", "https://u:p@x/#f"),
    "MCP_RESOURCE_URL": ("https://me.example/mcp",),
    "MCP_OAUTH_AUDIENCE": ("aud",),
    "MCP_OAUTH_ALGORITHMS": ("RS256,ES256", "HS256", " , "),
    "MCP_OAUTH_LEEWAY_S": ("10", "301"),
    "MCP_OAUTH_JWKS_CACHE_S": ("60",),
    "MCP_SCOPE_READ": ("r", 'a "b"'),
    "MCP_SCOPE_WRITE": ("w",),
    "MCP_TENANT_CLAIM": ("tenants",),
    "MCP_OAUTH_INTROSPECTION_URL": ("https://issuer.example/introspect",),
    "MCP_OAUTH_CLIENT_ID": ("id",),
    "MCP_OAUTH_CLIENT_SECRET": ("secret",),
    "MCP_OAUTH_INTROSPECTION_CACHE_S": ("30", "4000"),
    "MCP_OAUTH_ALLOW_HTTP_LOOPBACK": ("true", "maybe"),
    "RATE_LIMIT_PER_TENANT": ("5", "0", "nan"),
    "RATE_LIMIT_BURST": ("7", "100001"),
    "MAX_CONCURRENT_CALLS": ("8",),
    "MAX_CONCURRENT_PER_TENANT": ("0", "3", "x"),
    "METRICS_PORT": ("9464", "0"),
    "METRICS_HOST": ("0.0.0.0",),
    "METRICS_TENANT_LABEL": ("yes", "2"),
    "UI_ENABLED": ("on", "y"),
    "MEMORY_DB_PATH": ("~/x.db",),
    "HOSTNAME": ("  ",),
}


def product_grid() -> Iterator[dict[str, str]]:
    names = list(PRODUCT)
    for values in itertools.product(*PRODUCT.values()):
        env: dict[str, str] = {}
        for name, value in zip(names, values):
            if value is UNSET:
                continue
            if name == "EMBEDDING_BASE_URL+KEY":
                env.update(EMBEDDING_PAIRS[value])
            else:
                env[name] = value
        yield env


def pair_grid() -> Iterator[dict[str, str]]:
    names = list(PAIRS)
    for name in names:
        for value in PAIRS[name]:
            yield {name: value}
    for a, b in itertools.combinations(names, 2):
        for va, vb in itertools.product(PAIRS[a], PAIRS[b]):
            yield {a: va, b: vb}


def place_grid(root: Path) -> Iterator[dict[str, str]]:
    """The embedded database's place: HOME and XDG_DATA_HOME, with a legacy file or not."""
    for n, (xdg, legacy, path) in enumerate(itertools.product((False, True), (False, True), (False, True))):
        home = root / f"home{n}"
        data = root / f"xdg{n}" if xdg else home / ".local" / "share"
        if legacy:
            (data / "mcp-memory").mkdir(parents=True, exist_ok=True)
            (data / "mcp-memory" / "memory.db").write_bytes(b"")
        env = {"HOME": str(home)}
        if xdg:
            env["XDG_DATA_HOME"] = str(data)
        if path:
            env["MEMORY_DB_PATH"] = str(home / "own.db")
        yield env


def outcome(read: Callable[[Mapping[str, str]], Settings], env: Mapping[str, str]) -> str:
    try:
        settings = read({**BASE, **env})
    except ConfigError as exc:
        return f"refused: {exc}"
    # every section's fields in one list, as when Settings was one flat object: a re-layout changes no line
    fields = [item for section in dataclasses.asdict(settings).values() for item in section.items()]
    return repr(sorted((k, sorted(v) if isinstance(v, frozenset) else v) for k, v in fields))


def service_read(env: Mapping[str, str]) -> Settings:
    from mcp_memory.config import SERVICE_SECTIONS

    return Settings.from_env(env, sections=SERVICE_SECTIONS)


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    service = "--service" in argv
    count = 0
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory() as tmp, out.open("w", encoding="utf-8") as sink:
        grids = {"product": product_grid(), "pairs": pair_grid(), "place": place_grid(Path(tmp))}
        for grid, envs in grids.items():
            for env in envs:
                line = f"{grid} {sorted(env.items())!r} -> {outcome(Settings.from_env, env)}"
                if service:
                    line += f" || service: {outcome(service_read, env)}"
                line = line.replace(tmp, "$TMP")
                sink.write(line + "\n")
                digest.update(line.encode())
                count += 1
    print(f"{count} combinations, sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
