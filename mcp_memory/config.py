"""Settings.from_env(environ): the only reader of the environment.

Everything is validated up front, in a fixed order, so the first bad value is
the one reported, by name, with the value that was refused (never a secret).

Which variables a storage backend or an embedding provider needs, and the rule
a provider's model and width follow, are rows of their tables
(stores/__init__.py BACKENDS, embedders/__init__.py PROVIDERS); this reader
reads the tables as they are, so a new row is checked without an edit here.
How a variable is spelled (a URL, a key) is this module's business.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp_memory.core.errors import ConfigError, ContextError
from mcp_memory.core.fusion import check_scripts
from mcp_memory.core.identity import parse_conversation, parse_tenant
from mcp_memory.core.model import RETRIEVALS, Retrieval
from mcp_memory.core.ranking import default_high_similarity
from mcp_memory.core.redact import redact_url
from mcp_memory.core.version import DISTRIBUTION
from mcp_memory.embedders import PROVIDERS as EMBEDDING_PROVIDERS
from mcp_memory.stores import BACKENDS as STORE_BACKENDS

#: The tenant of every local entry point (serve-stdio and the CLI's commands) when neither
#: --tenant nor MEMORY_TENANT names one, so what a desktop client stored is what a terminal reads.
DEFAULT_TENANT = "local"
#: The data directory's name under the platform's user data directory (platformdirs); no peer uses it.
DATA_DIR_NAME = DISTRIBUTION
DB_FILE_NAME = "memory.db"
#: Where the database was kept before: $XDG_DATA_HOME (else ~/.local/share) / mcp-memory, a
#: directory another memory server (mcp-memory-service) also uses.
LEGACY_DATA_DIR_NAME = "mcp-memory"

DEFAULT_FLOOR = 0.1
#: Relevance floor and HIGH mark measured for a model we ship, by `mcp-memory calibrate --builtin`
#: (see docs/calibration.md). Other providers default to DEFAULT_FLOOR and the HIGH rule of docs/recall.md#confidence: their model is
#: the deployment's choice, and only the deployment can measure it.
CALIBRATED_DEFAULTS: dict[str, tuple[float, float]] = {
    p.name: p.calibrated for p in EMBEDDING_PROVIDERS.values() if p.calibrated is not None
}


def _one_of(names: tuple[str, ...]) -> str:
    """`"a", "b" or "c"`, for a message listing the accepted values."""
    quoted = [f'"{name}"' for name in names]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _and(names: list[str] | tuple[str, ...]) -> str:
    """`A`, `A and B`, `A, B and C`, and the verb that goes with them."""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{listed} {'is' if len(names) == 1 else 'are'}"


EMBEDDING_DIM_MAX = 16_000
PORT_MAX = 65_535

_INTEGER = re.compile(r"\+?[0-9]+")
#: A knowledge base id, or its ARN (the pattern botocore's Retrieve model declares).
_KNOWLEDGE_BASE_ID = re.compile(
    r"[0-9a-zA-Z]{10}|arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:knowledge-base/[0-9a-zA-Z]{10}"
)


@dataclass(frozen=True)
class HttpLimits:
    """How long each phase of an HTTP request may take, and how many connections may be open
    (server/http_limits.py). Times in milliseconds; `max_connections` None: 1000, or fewer when
    the process may not open that many files."""

    header_timeout_ms: int = 10_000
    body_timeout_ms: int = 30_000
    keep_alive_ms: int = 5_000
    max_connections: int | None = None


#: The algorithms a token may be signed with: asymmetric only. `none` and the HS* family are never
#: accepted (an HS256 token "signed" with the issuer's public key would otherwise pass).
ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
DEFAULT_SCOPES = ("memory:read", "memory:write", "memory:forget")


@dataclass(frozen=True)
class OAuthSettings:
    """An OAuth 2.1 resource server (server/oauth.py): JWT access tokens from `issuer`, checked
    against its JWKS, issued for `audience` (by default this server's resource URL)."""

    issuer: str
    jwks_url: str
    resource_url: str
    audience: str
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    leeway_s: int = 30
    #: How long fetched keys are trusted without a successful refetch; then requests fail closed.
    jwks_cache_s: int = 3600
    #: The least time between two JWKS fetches (an unknown `kid` cannot make us fetch in a loop).
    jwks_min_refresh_s: int = 10
    #: The longest one JWKS fetch may take (connecting, the answer, the body).
    jwks_timeout_s: float = 5.0
    read_scope: str = DEFAULT_SCOPES[0]
    write_scope: str = DEFAULT_SCOPES[1]
    forget_scope: str = DEFAULT_SCOPES[2]
    #: The claim listing the tenants a token may use (a string or a list); None: headers decide.
    tenant_claim: str | None = None
    #: http:// issuer and JWKS URLs on a loopback address (tests only).
    allow_http_loopback: bool = False
    #: RFC 7662 introspection for opaque tokens (server/introspection.py), with the client's credentials.
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    #: How long an active introspection answer is used at most (and never past the token's exp).
    introspection_cache_s: int = 60

    @property
    def scopes(self) -> tuple[str, str, str]:
        return self.read_scope, self.write_scope, self.forget_scope


@dataclass(frozen=True)
class CallLimits:
    """Per-process backpressure on `serve-http` (server/limits.py): a token bucket per tenant
    (`rate_per_s` sustained, `burst` at once), a cap on requests being answered at once, and
    the share of that cap one tenant may hold (`per_tenant`; None: a quarter of it)."""

    rate_per_s: float = 20.0
    burst: int = 40
    max_concurrent: int = 64
    per_tenant: int | None = None

    @property
    def tenant_share(self) -> int:
        """How many requests one tenant may have answered at once in this process."""
        share = self.per_tenant if self.per_tenant is not None else self.max_concurrent // 4
        return max(1, min(share, self.max_concurrent))


@dataclass(frozen=True)
class MetricsSettings:
    """Prometheus metrics (server/metrics.py), served on their own port when `port` is set."""

    port: int | None = None
    host: str = "127.0.0.1"
    tenant_label: bool = False


@dataclass(frozen=True)
class Settings:
    """Every setting, validated. Secrets are kept out of repr()."""

    backend: str = "sqlite"
    #: Why this storage was chosen (printed at start-up).
    backend_reason: str = "embedded default"
    db_path: Path = Path("memory.db")
    #: One line for stderr about where the database lives, when it is not the default place.
    db_path_notice: str | None = None
    database_url: str | None = field(default=None, repr=False)
    #: POSTGRES_HNSW_MIN_MEMORIES: a PostgreSQL tenant this large gets an HNSW index (0: never;
    #: docs/storage.md#large-tenants).
    postgres_hnsw_min_memories: int = 0
    vector_bucket: str | None = None
    vector_index: str = "memories"
    state_bucket: str | None = None
    knowledge_base_id: str | None = None
    embedding_provider: str = "local"
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_dim: int = 384
    embedding_base_url: str | None = None
    embedding_api_key: str | None = field(default=None, repr=False)
    #: EMBEDDING_SCRIPTS: the Unicode scripts the model reads; an empty set for "all"; None
    #: (unset) leaves it to the provider (the local model: Latin; the others: every script).
    embedding_scripts: frozenset[str] | None = None
    recall_min_similarity: float = 0.2  # CALIBRATED_DEFAULTS["local"], the default provider
    recall_high_similarity: float = 0.6
    #: RECALL_RETRIEVAL: "hybrid" (the default), "dense" or "keyword" (docs/recall.md).
    recall_retrieval: Retrieval = "hybrid"
    aws_region: str = "ap-northeast-2"
    host: str = "127.0.0.1"
    port: int = 3000
    mcp_api_key: str | None = field(default=None, repr=False)
    stats_flush_ms: int = 30_000
    stats_compact_threshold: int = 20
    http_limits: HttpLimits = field(default_factory=HttpLimits)
    oauth: OAuthSettings | None = None
    call_limits: CallLimits = field(default_factory=CallLimits)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    hostname: str = "localhost"
    #: UI_ENABLED: serve-http also serves the web view at /ui (docs/web.md).
    ui_enabled: bool = False
    tenant: str | None = None
    conversation: str | None = None

    @property
    def redacted_database_url(self) -> str | None:
        return redact_url(self.database_url) if self.database_url else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read and validate every variable; raises ConfigError naming the first bad one."""
        return _Reader(os.environ if environ is None else environ).settings()


class _Reader:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self.env = environ

    def raw(self, name: str) -> str | None:
        """The trimmed value, None when unset or blank (blank means "use the default")."""
        value = self.env.get(name)
        if value is None:
            return None
        value = value.strip()
        return value or None

    def integer(self, name: str, default: int, maximum: int | None = None, minimum: int = 1) -> int:
        raw = self.raw(name)
        if raw is None:
            return default
        value = int(raw) if _INTEGER.fullmatch(raw) else -1
        if maximum is not None:
            if not minimum <= value <= maximum:
                raise ConfigError(f'{name} must be an integer between {minimum} and {maximum}, got "{raw}"')
        elif value < 1:
            raise ConfigError(f'{name} must be a positive integer, got "{raw}"')
        return value

    def ratio(self, name: str, default: float) -> float:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not 0 < value <= 1:  # NaN fails too
            raise ConfigError(f'{name} must be greater than 0 and at most 1, got "{raw}"')
        return value

    def settings(self) -> Settings:
        host = self.raw("HOST") or "127.0.0.1"
        port = self.integer("PORT", 3000, PORT_MAX, minimum=0)  # 0: any free port, as --port 0
        api_key = self.raw("MCP_API_KEY")
        region = self.raw("AWS_REGION") or "ap-northeast-2"
        backend, reason = self.storage()
        # What the chosen backend needs (storage() checked it is set), in its Settings fields.
        needed: dict[str, Any] = {name.lower(): self.raw(name) for name in STORE_BACKENDS[backend].requires}
        db_path, db_path_notice = self.db_path()
        kb = self.knowledge_base_id()
        provider, model, dim, embedding_needs = self.embedding(backend)
        needed.update(embedding_needs)
        floor, high = self.relevance(provider)
        flush_ms = self.integer("STATS_FLUSH_MS", 30_000)
        threshold = self.integer("STATS_COMPACT_THRESHOLD", 20)
        hnsw_min = self.integer("POSTGRES_HNSW_MIN_MEMORIES", Settings.postgres_hnsw_min_memories, 10**9, minimum=0)
        tenant, conversation = self.caller_defaults()
        settings = Settings(
            backend=backend,
            backend_reason=reason,
            db_path=db_path,
            db_path_notice=db_path_notice,
            postgres_hnsw_min_memories=hnsw_min,
            vector_index=self.raw("VECTOR_INDEX") or "memories",
            knowledge_base_id=kb,
            embedding_provider=provider,
            embedding_model=model,
            embedding_dim=dim,
            embedding_scripts=self.scripts(),
            recall_min_similarity=floor,
            recall_high_similarity=high,
            recall_retrieval=self.retrieval(),
            aws_region=region,
            host=host,
            port=port,
            mcp_api_key=api_key,
            stats_flush_ms=flush_ms,
            stats_compact_threshold=threshold,
            http_limits=self.http_limits(),
            oauth=self.oauth(),
            call_limits=self.call_limits(),
            metrics=self.metrics(host),
            hostname=self.raw("HOSTNAME") or socket.gethostname(),
            ui_enabled=self.flag("UI_ENABLED"),
            tenant=tenant,
            conversation=conversation,
        )
        return replace(settings, **needed)

    def http_limits(self) -> HttpLimits:
        defaults = HttpLimits()
        connections = self.raw("HTTP_MAX_CONNECTIONS")
        return HttpLimits(
            header_timeout_ms=self.integer("HTTP_HEADER_TIMEOUT_MS", defaults.header_timeout_ms),
            body_timeout_ms=self.integer("HTTP_BODY_TIMEOUT_MS", defaults.body_timeout_ms),
            keep_alive_ms=self.integer("HTTP_KEEP_ALIVE_MS", defaults.keep_alive_ms),
            max_connections=None if connections is None else self.integer("HTTP_MAX_CONNECTIONS", 1),
        )

    def flag(self, name: str) -> bool:
        raw = self.raw(name)
        if raw is None:
            return False
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f'{name} must be true or false, got "{raw}"')

    def https_url(self, name: str, loopback_http: bool) -> str:
        """An https URL without credentials or fragment (http:// only on loopback, when allowed)."""
        raw = self.raw(name)
        if raw is None:
            raise ConfigError(f"{name} is required when MCP_OAUTH_ISSUER is set")
        try:
            parts = urlsplit(raw)
            _ = parts.port
        except ValueError:
            parts = None
        ok = parts is not None and bool(parts.hostname) and parts.username is None and not parts.fragment
        if ok and parts is not None and parts.scheme != "https":
            ok = parts.scheme == "http" and loopback_http and _is_loopback_host(parts.hostname or "")
        if not ok:
            hint = " (http:// only on a loopback address with MCP_OAUTH_ALLOW_HTTP_LOOPBACK=true)"
            raise ConfigError(
                f'{name} must be an https:// URL without credentials or fragment{hint}, got "{_scrub(raw)}"'
            )
        return raw

    def oauth(self) -> OAuthSettings | None:
        issuer_raw = self.raw("MCP_OAUTH_ISSUER")
        if issuer_raw is None:
            for name in ("MCP_OAUTH_JWKS_URL", "MCP_RESOURCE_URL", "MCP_TENANT_CLAIM", "MCP_OAUTH_INTROSPECTION_URL"):
                if self.raw(name) is not None:
                    raise ConfigError(f"{name} is set but MCP_OAUTH_ISSUER is not: set the issuer to turn OAuth on")
            return None
        loopback = self.flag("MCP_OAUTH_ALLOW_HTTP_LOOPBACK")
        issuer = self.https_url("MCP_OAUTH_ISSUER", loopback)
        jwks_url = self.https_url("MCP_OAUTH_JWKS_URL", loopback)
        resource = self.https_url("MCP_RESOURCE_URL", loopback)
        algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
        raw_algs = self.raw("MCP_OAUTH_ALGORITHMS")
        if raw_algs is not None:
            algorithms = tuple(a.strip() for a in raw_algs.split(",") if a.strip())
            refused = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
            if refused or not algorithms:
                raise ConfigError(
                    f'MCP_OAUTH_ALGORITHMS may name only {", ".join(ASYMMETRIC_ALGORITHMS)}, got "{raw_algs}"'
                )
        scopes = []
        for name, default in zip(("MCP_SCOPE_READ", "MCP_SCOPE_WRITE", "MCP_SCOPE_FORGET"), DEFAULT_SCOPES):
            scope = self.raw(name) or default
            if not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", scope):  # RFC 6749 scope-token
                raise ConfigError(
                    f'{name} must be one scope token (printable ASCII, no spaces or quotes), got "{scope}"'
                )
            scopes.append(scope)
        claim = self.raw("MCP_TENANT_CLAIM")
        introspection = None
        client_id = client_secret = None
        if self.raw("MCP_OAUTH_INTROSPECTION_URL") is not None:
            introspection = self.https_url("MCP_OAUTH_INTROSPECTION_URL", loopback)
            client_id, client_secret = self.raw("MCP_OAUTH_CLIENT_ID"), self.raw("MCP_OAUTH_CLIENT_SECRET")
            if client_id is None or client_secret is None:
                raise ConfigError(
                    "MCP_OAUTH_CLIENT_ID and MCP_OAUTH_CLIENT_SECRET are required with MCP_OAUTH_INTROSPECTION_URL"
                )
        return OAuthSettings(
            issuer=issuer,
            jwks_url=jwks_url,
            resource_url=resource,
            audience=self.raw("MCP_OAUTH_AUDIENCE") or resource,
            algorithms=algorithms,
            leeway_s=self.integer("MCP_OAUTH_LEEWAY_S", 30, 300),
            jwks_cache_s=self.integer("MCP_OAUTH_JWKS_CACHE_S", 3600, 86_400),
            read_scope=scopes[0],
            write_scope=scopes[1],
            forget_scope=scopes[2],
            tenant_claim=claim,
            allow_http_loopback=loopback,
            introspection_url=introspection,
            client_id=client_id,
            client_secret=client_secret,
            introspection_cache_s=self.integer("MCP_OAUTH_INTROSPECTION_CACHE_S", 60, 3600),
        )

    def call_limits(self) -> CallLimits:
        defaults = CallLimits()
        raw = self.raw("RATE_LIMIT_PER_TENANT")
        rate = defaults.rate_per_s
        if raw is not None:
            try:
                rate = float(raw)
            except ValueError:
                rate = float("nan")
            if not 0 < rate <= 100_000:
                raise ConfigError(f'RATE_LIMIT_PER_TENANT must be requests per second, above 0, got "{raw}"')
        return CallLimits(
            rate_per_s=rate,
            burst=self.integer("RATE_LIMIT_BURST", defaults.burst, 100_000),
            max_concurrent=self.integer("MAX_CONCURRENT_CALLS", defaults.max_concurrent, 10_000),
            per_tenant=self.integer("MAX_CONCURRENT_PER_TENANT", 0, 10_000) or None,
        )

    def metrics(self, host: str) -> MetricsSettings:
        raw = self.raw("METRICS_PORT")
        port = None if raw is None else self.integer("METRICS_PORT", 9464, PORT_MAX)
        return MetricsSettings(
            port=port, host=self.raw("METRICS_HOST") or "127.0.0.1", tenant_label=self.flag("METRICS_TENANT_LABEL")
        )

    def storage(self) -> tuple[str, str]:
        """Forced by MEMORY_BACKEND, else selected by presence, else embedded SQLite (docs/storage.md)."""
        forced = self.raw("MEMORY_BACKEND")
        if forced is not None:
            if forced not in STORE_BACKENDS:
                raise ConfigError(f'MEMORY_BACKEND must be {_one_of(tuple(STORE_BACKENDS))}, got "{forced}"')
            self.required_together(STORE_BACKENDS[forced].requires, f"when MEMORY_BACKEND={forced}")
            return forced, f"MEMORY_BACKEND={forced}"
        for backend in STORE_BACKENDS.values():
            if any(self.raw(name) is not None for name in backend.requires):
                self.required_together(backend.requires, f"for the {backend.label} backend")
                return backend.name, f"{_and(backend.requires)} set"
        embedded = next(backend for backend in STORE_BACKENDS.values() if not backend.requires)
        selectors = " nor ".join("/".join(backend.requires) for backend in STORE_BACKENDS.values() if backend.requires)
        return embedded.name, f"embedded default: neither {selectors} is set"

    def required_together(self, names: tuple[str, ...], why: str) -> None:
        """Refuse, naming what is missing and what is set, unless every one of `names` is set."""
        missing = [name for name in names if self.raw(name) is None]
        if missing:
            present = [name for name in names if name not in missing]
            raise ConfigError(f"{_and(missing)} required {why}" + (f" ({_and(present)} set)" if present else ""))

    def db_path(self) -> tuple[Path, str | None]:
        """MEMORY_DB_PATH, else the platform's user data directory (platformdirs: XDG on Linux,
        ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows) / mcp-tenant-memory.

        A database at the old default place is still used, never replaced: with a notice
        saying where it is and how to move it."""
        raw = self.raw("MEMORY_DB_PATH")
        if raw is not None:
            return Path(raw).expanduser(), None
        import platformdirs

        new = platformdirs.user_data_path(DATA_DIR_NAME, appauthor=False) / DB_FILE_NAME
        legacy = self.legacy_db_path()
        if new.exists() or new == legacy or not legacy.is_file():
            if new != legacy and legacy.is_file():
                return new, f"note: an older database at {legacy} is not used; this one is {new}"
            return new, None
        return legacy, (
            f"note: using the database at {legacy}, the old default place; the default is now {new}. "
            f"To move it, stop every mcp-memory process, then: mkdir -p '{new.parent}' && "
            f"mv '{legacy}'* '{new.parent}/' (or set MEMORY_DB_PATH={legacy} to keep it there)"
        )

    def legacy_db_path(self) -> Path:
        data_home = self.raw("XDG_DATA_HOME")
        if data_home is None:
            home = self.raw("HOME") or str(Path.home())
            data_home = str(Path(home) / ".local" / "share")
        return Path(data_home).expanduser() / LEGACY_DATA_DIR_NAME / DB_FILE_NAME

    def embedding(self, backend: str) -> tuple[str, str, int, dict[str, str]]:
        """The provider, its model and width, and what it needs (Settings field → value)."""
        provider = self.raw("EMBEDDING_PROVIDER") or STORE_BACKENDS[backend].default_provider
        if provider not in EMBEDDING_PROVIDERS:
            raise ConfigError(f'EMBEDDING_PROVIDER must be {_one_of(tuple(EMBEDDING_PROVIDERS))}, got "{provider}"')
        entry = EMBEDDING_PROVIDERS[provider]
        needed = {name.lower(): self.required(name, f"when EMBEDDING_PROVIDER={provider}") for name in entry.requires}
        model = self.raw("EMBEDDING_MODEL") or entry.model
        dim = self.integer("EMBEDDING_DIM", entry.dim, EMBEDDING_DIM_MAX)
        if entry.check is not None:
            entry.check(model, dim)
        return provider, model, dim, needed

    def scripts(self) -> frozenset[str] | None:
        """EMBEDDING_SCRIPTS: "all", or Unicode script names separated by commas (docs/recall.md)."""
        raw = self.raw("EMBEDDING_SCRIPTS")
        if raw is None:
            return None
        if raw.strip().lower() == "all":
            return frozenset()
        names = [n.strip() for n in raw.split(",") if n.strip()]
        if not names:
            raise ConfigError(f'EMBEDDING_SCRIPTS must be "all" or script names such as "Latin,Hangul", got "{raw}"')
        try:
            return check_scripts(names)
        except ValueError as exc:
            raise ConfigError(f"EMBEDDING_SCRIPTS: {exc}") from None

    def required(self, name: str, why: str) -> str:
        """A variable that must be set, checked as its kind is spelled (a URL, a key)."""
        raw = self.raw(name)
        if raw is None:
            raise ConfigError(f"{name} is required {why}")
        spelled = {"EMBEDDING_BASE_URL": _base_url, "EMBEDDING_API_KEY": _api_key}.get(name)
        return raw if spelled is None else spelled(raw)

    def knowledge_base_id(self) -> str | None:
        """Checked here, because botocore would refuse a malformed id on every search."""
        raw = self.raw("KNOWLEDGE_BASE_ID")
        if raw is not None and not _KNOWLEDGE_BASE_ID.fullmatch(raw):
            raise ConfigError(
                "KNOWLEDGE_BASE_ID must be a Bedrock knowledge base id (10 letters and digits, "
                f'e.g. ABCDE12345) or its ARN, got "{raw}"'
            )
        return raw

    def relevance(self, provider: str) -> tuple[float, float]:
        """The floor and the HIGH mark: what is set, else the shipped model's calibrated pair."""
        calibrated = EMBEDDING_PROVIDERS[provider].calibrated
        floor_set = self.raw("RECALL_MIN_SIMILARITY") is not None
        floor = self.ratio("RECALL_MIN_SIMILARITY", calibrated[0] if calibrated else DEFAULT_FLOOR)
        fallback = calibrated[1] if calibrated and not floor_set else default_high_similarity(floor)
        return floor, self.high_similarity(floor, fallback)

    def high_similarity(self, floor: float, fallback: float) -> float:
        raw = self.raw("RECALL_HIGH_SIMILARITY")
        if raw is None:
            return fallback
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not floor <= value <= 1:
            raise ConfigError(
                f'RECALL_HIGH_SIMILARITY must be at least RECALL_MIN_SIMILARITY ({floor:g}) and at most 1, got "{raw}"'
            )
        return value

    def retrieval(self) -> Retrieval:
        raw = self.raw("RECALL_RETRIEVAL")
        if raw is None:
            return "hybrid"
        for name in RETRIEVALS:
            if raw == name:
                return name
        raise ConfigError(f'RECALL_RETRIEVAL must be "hybrid", "dense" or "keyword", got "{raw}"')

    def caller_defaults(self) -> tuple[str | None, str | None]:
        tenant = self.raw("MEMORY_TENANT")
        conversation = self.raw("MEMORY_CONVERSATION")
        try:
            if tenant is not None:
                tenant = parse_tenant(tenant, "MEMORY_TENANT")
            conversation = parse_conversation(conversation, "MEMORY_CONVERSATION")
        except ContextError as exc:
            raise ConfigError(str(exc)) from None
        return tenant, conversation


def _base_url(raw: str) -> str:
    message = (
        f'EMBEDDING_BASE_URL must be an HTTP(S) base URL without credentials, query or fragment, got "{_scrub(raw)}"'
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


def _is_loopback_host(host: str) -> bool:
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _scrub(url: str) -> str:
    """A refused URL fit for an error message: userinfo, query and fragment masked.

    Userinfo is cut at the *last* `@` before anything else, so a password holding an
    unescaped `/`, `?` or `#` is not split off and echoed.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    rest = re.sub(r"([?#]).*", r"\1***", rest, count=1, flags=re.DOTALL)
    return scheme + sep + rest
