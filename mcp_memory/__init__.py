"""mcp-memory: an MCP server that gives AI agents a memory that outlives a run.

It is also a library. The public API, importable from `mcp_memory`:

    Settings          every setting, validated (Settings.from_env() reads the environment)
    open_service      open the configured storage and embedder: a ready MemoryService
    MemoryService     recall, remember, list, forget, stats, tenants, compact, calibrate, close
    Caller            who asks: a tenant, and optionally a conversation
    Memory            one stored memory
    Ranked            one recalled memory with its similarity, score and standing
    RecallResult      what recall found, ranked, with a confidence level
    RememberResult    the memory stored, or the one that already said it
    ListResult        a page of the caller's memories, newest first, and the cursor of the next
    ForgetResult      whether the memory was deleted
    StatsResult       how many memories the caller can see, by type
    TenantsResult     every tenant with memories, and how many (operator)
    CompactReport     what compact folded for one tenant (operator)
    CompactAllResult  compact for every tenant (operator)
    MemoryServerError the base of every error the service raises on purpose
    InvalidArgument   a request the service refuses, naming the field and the limit
    ContextError      a tenant or conversation that cannot be used
    StartupError      storage or an embedder that cannot be opened as configured
    ConfigError       a setting that cannot be used

For example:

    import asyncio
    from mcp_memory import Caller, open_service

    async def main():
        service = await open_service()  # reads the store, embedding and recall settings
        try:
            await service.remember(Caller("acme"), "Deploys go out on Tuesdays.")
            print((await service.recall(Caller("acme"), "when do we deploy?")).results)
        finally:
            await service.close()

    asyncio.run(main())

Importing this package is cheap on purpose: the names above load on first use
(PEP 562), and nothing heavy (onnxruntime, boto3, psycopg) is imported until a
command or a service needs it.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)

#: read from core/version.py on first use, as the names below are
_VERSION = ("__version__", "DISTRIBUTION")

#: public name -> the module that defines it
_PUBLIC = {
    "Settings": "mcp_memory.config",
    "open_service": "mcp_memory.app",
    "MemoryService": "mcp_memory.core.service",
    "Caller": "mcp_memory.core.model",
    "Memory": "mcp_memory.core.model",
    "Ranked": "mcp_memory.core.model",
    "RecallResult": "mcp_memory.core.service",
    "RememberResult": "mcp_memory.core.service",
    "ListResult": "mcp_memory.core.paging",
    "ForgetResult": "mcp_memory.core.service",
    "StatsResult": "mcp_memory.core.service",
    "TenantsResult": "mcp_memory.core.tenants",
    "CompactReport": "mcp_memory.core.counters.tracker",
    "CompactAllResult": "mcp_memory.core.tenants",
    "MemoryServerError": "mcp_memory.core.errors",
    "InvalidArgument": "mcp_memory.core.errors",
    "ContextError": "mcp_memory.core.errors",
    "StartupError": "mcp_memory.core.errors",
    "ConfigError": "mcp_memory.core.errors",
}

__all__ = [
    "__version__",
    "Settings",
    "open_service",
    "MemoryService",
    "Caller",
    "Memory",
    "Ranked",
    "RecallResult",
    "RememberResult",
    "ListResult",
    "ForgetResult",
    "StatsResult",
    "TenantsResult",
    "CompactReport",
    "CompactAllResult",
    "MemoryServerError",
    "InvalidArgument",
    "ContextError",
    "StartupError",
    "ConfigError",
]

if TYPE_CHECKING:
    from typing import Any

    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.counters.tracker import CompactReport
    from mcp_memory.core.errors import ConfigError, ContextError, InvalidArgument, MemoryServerError, StartupError
    from mcp_memory.core.model import Caller, Memory, Ranked
    from mcp_memory.core.paging import ListResult
    from mcp_memory.core.service import (
        ForgetResult,
        MemoryService,
        RecallResult,
        RememberResult,
        StatsResult,
    )
    from mcp_memory.core.tenants import CompactAllResult, TenantsResult
    from mcp_memory.core.version import DISTRIBUTION as DISTRIBUTION
    from mcp_memory.core.version import __version__


def __getattr__(name: str) -> Any:
    module = "mcp_memory.core.version" if name in _VERSION else _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'mcp_memory' has no attribute {name!r}")
    __import__(module)
    value = getattr(sys.modules[module], name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
