"""Settings, by component: each section's shape, defaults and reader in a module of its own.

    env.py        how a variable is read and refused (trimmed; numbers, ratios, flags): the one
                  reader of the environment, the hook's too (server/hooks/events.py)
    store.py      the backend, why it was chosen, what it needs (stores.BACKENDS rows)
    embedding.py  the provider, its model and width, what it needs (embedders.PROVIDERS rows)
    recall.py     the relevance floor, the HIGH mark, the retrieval
    local.py      the access counters, and the caller of serve-stdio and the CLI
    serve.py      where serve-http listens, its timeouts, OAuth, call limits, metrics, web view
    settings.py   `Settings`: every section in one object, read in one fixed order

Importing this package imports none of them: each name below loads its module on first use
(PEP 562), so the hook, which reads its variables through env.py, loads no section, and a
reader of one section loads only that one. The variables are listed in docs/configuration.md.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from mcp_memory.config.serve import CallLimits as CallLimits
    from mcp_memory.config.serve import HttpLimits as HttpLimits
    from mcp_memory.config.serve import MetricsSettings as MetricsSettings
    from mcp_memory.config.serve import OAuthSettings as OAuthSettings
    from mcp_memory.config.settings import Settings as Settings
    from mcp_memory.core.redact import redact_url as redact_url

SECTIONS = ("store", "embedding", "recall", "counters", "caller", "serve")
#: What `open_service()` reads: a library script that remembers needs no caller and no server.
SERVICE_SECTIONS = ("store", "embedding", "recall", "counters")

#: name -> the module that defines it, imported on first use
_LAZY = {
    "Settings": "mcp_memory.config.settings",
    "CallLimits": "mcp_memory.config.serve",
    "HttpLimits": "mcp_memory.config.serve",
    "MetricsSettings": "mcp_memory.config.serve",
    "OAuthSettings": "mcp_memory.config.serve",
    "redact_url": "mcp_memory.core.redact",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
