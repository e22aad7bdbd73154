"""MCP prompts and resources, for clients without hooks (docs/hooks.md#mcp-prompts-and-resources).

- the prompt `recall-context` (optional `topic`): the SessionStart digest as a user message;
- the resource template `memory://memories/{id}`, one memory; the resource `memory://recent`,
  the newest memories of this tenant and conversation; resources/list walks every visible
  memory, a page at a time (MemoryService.list, its opaque cursor).

The visibility rules are the tools': the caller is resolved per request as for tools/call, and
another tenant's or conversation's id reads exactly as a missing one. Results of the 2026-07-28
revision carry its cache fields: anything read from the store is `private` and stale at once
(ttl 0); the template and prompt lists, the same for everyone, are `public` for an hour.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from mcp_memory.core.arguments import MEMORY_ID
from mcp_memory.core.errors import ContextError, InvalidArgument
from mcp_memory.core.model import Caller, Memory
from mcp_memory.server.budget import DEFAULT_BUDGET, QUERY_CHARS
from mcp_memory.server.protocol import render
from mcp_memory.server.protocol.context import digest_text
from mcp_memory.server.protocol.quoting import inline
from mcp_memory.server.protocol.tools import ToolLayer

MEMORY_URI = "memory://memories/"
MEMORY_TEMPLATE = "memory://memories/{id}"
RECENT_URI = "memory://recent"
#: How many memories memory://recent holds, and one resources/list page.
RECENT_COUNT = 20
LIST_PAGE = 50
#: The longest resource URI read (a memory's is 44 characters); longer ones are refused unread.
URI_MAX = 200
PROMPT_NAME = "recall-context"
#: Cache fields (2026-07-28): per-caller data never shared, fresh lists of static entries.
STATIC_TTL_MS = 3_600_000
TITLE_CHARS = 80

CallerResolver = Callable[[Any], Caller]

RECENT = types.Resource(
    uri=RECENT_URI,
    name="recent",
    title="Recent memories",
    description=f"The {RECENT_COUNT} newest memories of this project (and this conversation's own).",
    mime_type="text/plain",
)
TEMPLATE = types.ResourceTemplate(
    uri_template=MEMORY_TEMPLATE,
    name="memory",
    title="A memory by id",
    description="One stored memory, by the id recall or list_memories showed.",
    mime_type="text/plain",
)
PROMPT = types.Prompt(
    name=PROMPT_NAME,
    title="Recall context",
    description="What this project remembers, the most trusted and recently used first; "
    "with a topic, the memories about it first.",
    arguments=[
        types.PromptArgument(
            name="topic",
            description=f"Optional: what the work is about (at most {QUERY_CHARS} characters).",
            required=False,
        )
    ],
)


class PromptsAndResources:
    """The prompt and resource handlers, each a method that the SDK's server calls as
    `handler(ctx, params)`: the SDK's own shape for a handler, as web/pages are Starlette's.
    Only server/protocol/server.py imports this module, once the SDK is loaded."""

    def __init__(self, tools: ToolLayer, resolve_caller: CallerResolver, ready: Callable[[], None]) -> None:
        self.service = tools.service
        self.resolve_caller = resolve_caller
        self.ready = ready

    def register(self, server: Any) -> None:
        """Add the handlers to the low-level `server` (its capabilities follow from them)."""
        server.add_request_handler("resources/list", types.PaginatedRequestParams, self.list_resources)
        server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, self.list_templates)
        server.add_request_handler("resources/read", types.ReadResourceRequestParams, self.read_resource)
        server.add_request_handler("prompts/list", types.PaginatedRequestParams, self.list_prompts)
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, self.get_prompt)

    def _caller(self, ctx: Any) -> Caller:
        try:
            return self.resolve_caller(ctx)
        except ContextError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    async def list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        self.ready()
        caller = self._caller(ctx)
        cursor = getattr(params, "cursor", None) if params is not None else None
        try:
            page = await self.service.list(caller, limit=LIST_PAGE, cursor=cursor)
        except InvalidArgument as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        listed = [_resource(m) for m in page.memories]
        if cursor is None:
            listed.insert(0, RECENT)
        return types.ListResourcesResult(
            resources=listed, next_cursor=page.next_cursor, ttl_ms=0, cache_scope="private"
        )

    async def list_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        self.ready()
        return types.ListResourceTemplatesResult(
            resource_templates=[TEMPLATE], ttl_ms=STATIC_TTL_MS, cache_scope="public"
        )

    async def read_resource(self, ctx: Any, params: Any) -> types.ReadResourceResult:
        self.ready()
        uri = str(params.uri)
        if len(uri) > URI_MAX:
            raise MCPError(INVALID_PARAMS, f"uri is too long (max {URI_MAX} characters)")
        caller = self._caller(ctx)
        if uri == RECENT_URI:
            text = render.list_text(await self.service.list(caller, limit=RECENT_COUNT))
        elif uri.startswith(MEMORY_URI) and MEMORY_ID.fullmatch(uri[len(MEMORY_URI) :]):
            memory = await self.service.get(caller, uri[len(MEMORY_URI) :])
            if memory is None:
                raise _not_found(uri)
            text = f"{render.PREFIX} {render.NOTES_ARE_DATA}\n\n{render.render_memory(memory, 1)}"
        else:
            raise _not_found(uri)
        contents: list[types.TextResourceContents | types.BlobResourceContents] = [
            types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)
        ]
        return types.ReadResourceResult(contents=contents, ttl_ms=0, cache_scope="private")

    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        self.ready()
        return types.ListPromptsResult(prompts=[PROMPT], ttl_ms=STATIC_TTL_MS, cache_scope="public")

    async def get_prompt(self, ctx: Any, params: Any) -> types.GetPromptResult:
        self.ready()
        if params.name != PROMPT_NAME:
            raise MCPError(
                INVALID_PARAMS, f"no prompt named {inline(params.name[:64])!r}; the one prompt is {PROMPT_NAME}"
            )
        arguments = params.arguments or {}
        unknown = sorted(set(arguments) - {"topic"})
        if unknown:
            raise MCPError(INVALID_PARAMS, f"{PROMPT_NAME} takes only the argument topic")
        topic = arguments.get("topic")
        if topic is not None and len(topic) > QUERY_CHARS:
            raise MCPError(INVALID_PARAMS, f"topic is too long (max {QUERY_CHARS} characters)")
        caller = self._caller(ctx)
        focus = topic.strip() if topic and topic.strip() else None
        try:
            result = await self.service.digest(caller, topic=focus)
        except InvalidArgument as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        text, _ = digest_text(result, DEFAULT_BUDGET, topic=focus)
        content = types.TextContent(type="text", text=text or render.render_no_memories())
        return types.GetPromptResult(
            description=f"What this project remembers{f' about {inline(focus)}' if focus else ''}.",
            messages=[types.PromptMessage(role="user", content=content)],
        )


def _title(memory: Memory) -> str:
    text = " ".join(memory.content.split())
    return inline(text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…")


def _resource(memory: Memory) -> types.Resource:
    facets = [memory.memory_type, f"stored {memory.created_at[:10]}"]
    if memory.scope == "conversation":
        facets.insert(1, "this conversation only")
    return types.Resource(
        uri=f"{MEMORY_URI}{memory.id}",
        name=memory.id,
        title=_title(memory),
        description=", ".join(facets),
        mime_type="text/plain",
    )


def _not_found(uri: str) -> MCPError:
    return MCPError(INVALID_PARAMS, "Resource not found", data={"uri": uri})
