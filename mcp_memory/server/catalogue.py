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

from mcp_memory.core.arguments import LIMIT_MAX, Terms
from mcp_memory.core.model import Caller

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

LIMIT_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX}


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool = False


#: A tool's work: (service, caller, arguments) -> the text the model reads.
Handler = Callable[[Any, Caller, Mapping[str, Any]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what tools/list shows, and what tools/call runs."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    #: The start of the isError text when something other than an argument fails.
    failure: str = STORE_FAILURE
