"""Tenant and conversation values: parsed and validated the same way whether
they arrive as HTTP headers, CLI flags or environment variables (docs/context.md, docs/http.md).

Each function takes the *name* of where the value came from, so a refusal names
the header, flag or variable the user has to fix. Which headers carry them is
the HTTP edge's business (server/http/headers.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mcp_memory.core.errors import ContextError

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:  # the hook process validates with this module and never loads the model's dataclasses
    from mcp_memory.core.model import Caller

#: The tenant of every local entry point (serve-stdio and the CLI's commands) when neither
#: --tenant nor MEMORY_TENANT names one, so what a desktop client stored is what a terminal reads.
#: Here, not in config/, so the CLI's --help can name it without importing the settings.
DEFAULT_TENANT = "local"
TENANT_MAX = 128
CONVERSATION_MAX = 512

_TENANT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CONVERSATION_RE = re.compile(r"[\x21-\x7e]+")

RawValue = str | Sequence[str] | None


def single_value(value: RawValue, name: str) -> str | None:
    """One value, or a refusal when it was sent more than once (docs/http.md)."""
    if value is None or isinstance(value, str):
        return value
    values = list(value)
    if len(values) > 1:
        raise ContextError(f"{name} was sent more than once")
    return values[0] if values else None


def parse_tenant(value: RawValue, name: str, *, missing: str | None = None) -> str:
    """A validated tenant (trimmed), or ContextError naming `name` (docs/context.md).

    `missing` is the refusal when no tenant was given (default: "<name> is required").
    """
    raw = single_value(value, name)
    tenant = (raw or "").strip()
    if not tenant:
        raise ContextError(missing or f"{name} is required")
    if len(tenant) > TENANT_MAX:
        raise ContextError(f"{name} is too long (max {TENANT_MAX} characters)")
    if not _TENANT_RE.fullmatch(tenant):
        raise ContextError(
            f"{name} must start with a letter or digit and contain only letters, digits, '.', '_' or '-'"
        )
    return tenant


def parse_conversation(value: RawValue, name: str) -> str | None:
    """A validated conversation key, None when absent or blank (docs/context.md)."""
    raw = single_value(value, name)
    conversation = (raw or "").strip()
    if not conversation:
        return None
    if len(conversation) > CONVERSATION_MAX:
        raise ContextError(f"{name} is too long (max {CONVERSATION_MAX} characters)")
    if not _CONVERSATION_RE.fullmatch(conversation):
        raise ContextError(f"{name} may carry printable ASCII only, with no whitespace")
    return conversation


def caller_from_options(
    tenant: str | None,
    conversation: str | None,
    *,
    tenant_name: str = "--tenant",
    conversation_name: str = "--conversation",
    default_tenant: str | None = None,
) -> Caller:
    """The caller of a CLI command or a stdio server (docs/context.md)."""
    from mcp_memory.core.model import Caller

    conv = parse_conversation(conversation, conversation_name)
    if (tenant is None or not tenant.strip()) and default_tenant is not None:
        tenant = default_tenant
    return Caller(parse_tenant(tenant, tenant_name), conv)
