"""The counters and caller sections: how this process counts uses, and who a local command is.

The counters are the service's (docs/counters.md); the caller's defaults serve serve-stdio and
the CLI's commands, which a library script names itself (a `Caller`).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from mcp_memory.config import Env
from mcp_memory.core.errors import ConfigError, ContextError
from mcp_memory.core.identity import DEFAULT_TENANT as DEFAULT_TENANT
from mcp_memory.core.identity import parse_conversation, parse_tenant


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
