"""The HTTP request headers that carry the caller (docs/context.md, docs/http.md).

Core parses and validates the values (core/identity.py); this edge knows the
header names, which one wins, and how to tell a missing header apart: it is the
client's configuration of the MCP server (its headers), not the agent, that sets them.
"""

from __future__ import annotations

from mcp_memory.core.errors import ContextError
from mcp_memory.core.identity import RawValue, parse_conversation, parse_tenant, single_value
from mcp_memory.core.model import Caller

__all__ = [
    "CONVERSATION_HEADER",
    "STAMPED_TENANT_HEADER",
    "TENANT_HEADER",
    "caller_from_headers",
    "parse_tenant_header",
    "tenant_required_message",
]

TENANT_HEADER = "x-memory-tenant"
STAMPED_TENANT_HEADER = "x-tenant-id"
CONVERSATION_HEADER = "x-conversation-id"


def tenant_required_message(name: str) -> str:
    return (
        f"{name} header is required: send the tenant's name in it with every request "
        "(an MCP client sends it from the headers of its server entry)"
    )


def parse_tenant_header(value: RawValue, name: str) -> str:
    """A validated tenant from header `name`; a missing one says where to set it."""
    return parse_tenant(value, name, missing=tenant_required_message(name))


def caller_from_headers(explicit: RawValue, stamped: RawValue, conversation: RawValue) -> Caller:
    """The caller of an HTTP request: conversation first, then the tenant (docs/context.md).

    A non-blank `x-memory-tenant` wins; a blank one gives way to `x-tenant-id`.
    Either header sent more than once is refused, whether or not the other one
    is there too.
    """
    conv = parse_conversation(conversation, CONVERSATION_HEADER)
    explicit_one = single_value(explicit, TENANT_HEADER)
    stamped_one = single_value(stamped, STAMPED_TENANT_HEADER)
    if explicit_one is not None and explicit_one.strip():
        return Caller(parse_tenant_header(explicit_one, TENANT_HEADER), conv)
    if stamped_one is not None and stamped_one.strip():
        return Caller(parse_tenant_header(stamped_one, STAMPED_TENANT_HEADER), conv)
    raise ContextError(tenant_required_message(TENANT_HEADER))
