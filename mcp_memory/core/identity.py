"""Tenant and conversation values: parsed and validated the same way whether
they arrive as HTTP headers, CLI flags or environment variables (B §3, A8, A10).

Each function takes the *name* of where the value came from, so a refusal names
the header, flag or variable the user has to fix.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from mcp_memory.core.errors import ContextError
from mcp_memory.core.model import Caller

TENANT_MAX = 128
CONVERSATION_MAX = 512

TENANT_HEADER = "x-memory-tenant"
STAMPED_TENANT_HEADER = "x-tenant-id"
CONVERSATION_HEADER = "x-conversation-id"

_TENANT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_CONVERSATION_RE = re.compile(r"[\x21-\x7e]+")

RawValue = str | Sequence[str] | None


def _single(value: RawValue, name: str) -> str | None:
    """One value, or a refusal when it was sent more than once (A10)."""
    if value is None or isinstance(value, str):
        return value
    values = list(value)
    if len(values) > 1:
        raise ContextError(f"{name} was sent more than once")
    return values[0] if values else None


def tenant_required_message(name: str) -> str:
    if name.startswith("x-"):
        return f"{name} header is required — set it on the MCP server entry in the registry"
    return f"{name} is required"


def parse_tenant(value: RawValue, name: str) -> str:
    """A validated tenant (trimmed), or ContextError naming `name` (B §3.3)."""
    raw = _single(value, name)
    tenant = (raw or "").strip()
    if not tenant:
        raise ContextError(tenant_required_message(name))
    if len(tenant) > TENANT_MAX:
        raise ContextError(f"{name} is too long (max {TENANT_MAX} characters)")
    if not _TENANT_RE.fullmatch(tenant):
        raise ContextError(
            f"{name} must start with a letter or digit and contain only letters, digits, '.', '_' or '-'"
        )
    return tenant


def parse_conversation(value: RawValue, name: str = CONVERSATION_HEADER) -> str | None:
    """A validated conversation key, None when absent or blank (B §3.4)."""
    raw = _single(value, name)
    conversation = (raw or "").strip()
    if not conversation:
        return None
    if len(conversation) > CONVERSATION_MAX:
        raise ContextError(f"{name} is too long (max {CONVERSATION_MAX} characters)")
    if not _CONVERSATION_RE.fullmatch(conversation):
        raise ContextError(f"{name} may carry printable ASCII only, with no whitespace")
    return conversation


def caller_from_headers(explicit: RawValue, stamped: RawValue, conversation: RawValue) -> Caller:
    """The caller of an HTTP request: conversation first, then the tenant (B §3.2).

    A non-blank `x-memory-tenant` wins; a blank one gives way to `x-tenant-id`.
    Either header sent more than once is refused, whether or not the other one
    is there too.
    """
    conv = parse_conversation(conversation, CONVERSATION_HEADER)
    explicit_one = _single(explicit, TENANT_HEADER)
    stamped_one = _single(stamped, STAMPED_TENANT_HEADER)
    if explicit_one is not None and explicit_one.strip():
        return Caller(parse_tenant(explicit_one, TENANT_HEADER), conv)
    if stamped_one is not None and stamped_one.strip():
        return Caller(parse_tenant(stamped_one, STAMPED_TENANT_HEADER), conv)
    raise ContextError(tenant_required_message(TENANT_HEADER))


def caller_from_options(
    tenant: str | None,
    conversation: str | None,
    *,
    tenant_name: str = "--tenant",
    conversation_name: str = "--conversation",
    default_tenant: str | None = None,
) -> Caller:
    """The caller of a CLI command or a stdio server (A8)."""
    conv = parse_conversation(conversation, conversation_name)
    if (tenant is None or not tenant.strip()) and default_tenant is not None:
        tenant = default_tenant
    return Caller(parse_tenant(tenant, tenant_name), conv)


def conversation_digest(conversation: str) -> str:
    """First 16 hex chars of SHA-256 of the conversation (the index-key suffix, B §10.5)."""
    return hashlib.sha256(conversation.encode("utf-8")).hexdigest()[:16]
