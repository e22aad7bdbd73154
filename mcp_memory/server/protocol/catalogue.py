"""What a tool is, for every tool this server offers: its catalogue entry and its
handler side by side, the result it hands back, and the pieces the tools share
(the limit schema, the tools' own wording of argument errors).

tools.py (the memory tools) and search_docs.py both build on this module and on
nothing of each other's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_memory.core.arguments import Terms
from mcp_memory.core.model import Caller
from mcp_memory.core.requests import LIMIT_SCHEMA

#: What a dependency failure says, unless a tool names its own dependency.
STORE_FAILURE = "the memory store could not complete this request"

#: How the tools name their arguments in errors: as the model wrote them.
TOOL_TERMS = Terms(
    name=lambda field: f"`{field}`",
    no_conversation=(
        "scope 'conversation' needs a conversation, but this request is not in one: no X-Conversation-Id "
        "reached the server. Store it for the project instead, or leave scope unset."
    ),
)

#: The same, over stdio: no header to send; the conversation is the server's own.
STDIO_TERMS = Terms(
    name=TOOL_TERMS.name,
    no_conversation=(
        "scope 'conversation' needs a conversation, but this server serves none: start serve-stdio with "
        "--conversation (or set MEMORY_CONVERSATION). Store it for the project instead, or leave scope unset."
    ),
)

__all__ = [
    "LIMIT_SCHEMA",
    "READ_ONLY",
    "STDIO_TERMS",
    "STORE_FAILURE",
    "TOOL_TERMS",
    "Answer",
    "Hints",
    "ToolResult",
    "ToolSpec",
]


@dataclass(frozen=True, slots=True)
class Answer:
    """What a handler hands back: the text a model reads and the same facts as fields."""

    text: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool = False
    #: The structuredContent of a successful call (None for an error).
    data: dict[str, Any] | None = None


#: A tool's work: (service, caller, arguments, the edge's terms for refusals) -> its answer.
Handler = Callable[[Any, Caller, Mapping[str, Any], Terms], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class Hints:
    """MCP's tool annotations. Unset hints are left out of tools/list, where the
    spec's defaults apply (not read-only, destructive, not idempotent, open world)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


READ_ONLY = Hints(read_only=True, open_world=False)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what tools/list shows, and what tools/call runs."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    handler: Handler
    hints: Hints = READ_ONLY
    #: The start of the isError text when something other than an argument fails.
    failure: str = STORE_FAILURE
