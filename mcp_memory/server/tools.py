"""The tool layer: the catalogue a model sees, argument checks, dispatch to the
service, errors as `isError` results, and one `tool_call` log line per call.

Nothing here knows how the caller was identified: the transport resolves the
tenant and conversation and hands over a Caller. No schema has a tenant or
conversation property, on purpose: a model that can name a tenant can read
someone else's memories.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mcp_memory.core.echo import strip_echoes
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.limits import CONTENT_MAX_BYTES, content_overflow
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import MEMORY_TYPES, MODES, SCOPES, Caller
from mcp_memory.core.service import LIMIT_MAX, LIST_DEFAULT_LIMIT, MemoryService

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mcp_memory.config import Settings

CATEGORY_MAX_BYTES = 128
TAGS_MAX = 20
TAG_MAX_BYTES = 64


#: What a dependency failure says, unless a tool names its own dependency.
STORE_FAILURE = "the memory store could not complete this request"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    #: The start of the isError text when something other than an argument fails (B §6.4).
    failure: str = STORE_FAILURE


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool = False


LIMIT_SCHEMA = {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "recall",
        "Search what this project has remembered, by meaning. Call it at the start of a task, "
        "before asking the user to explain something again: decisions and their reasons, conventions, "
        "commands that worked, references. Returns the memories themselves (not a summary), ranked, "
        "with a confidence level. You see the project's memories plus notes kept for this conversation, "
        "never another conversation's. An empty result means nothing relevant was stored, not that the "
        "subject has no answer.",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to know, in natural language."},
                "limit": {
                    **LIMIT_SCHEMA,
                    "description": "How many memories to return (1-50). Defaults to the mode's own limit: "
                    "3 precision, 5 balanced, 10 exploratory.",
                },
                "mode": {
                    "type": "string",
                    "enum": list(MODES),
                    "description": "precision: a few close matches. balanced (default): the usual trade-off. "
                    "exploratory: more results on looser matching; use it when balanced found nothing.",
                },
            },
            "required": ["query"],
        },
    ),
    ToolSpec(
        "remember",
        "Store something worth knowing in a later run: a decision and the reason for it, a convention, "
        "a command that turned out to be right, a reference. A near-identical memory is not written "
        "twice: you are told which existing memory already says it, and the tags and category you "
        "passed are discarded. By default the memory belongs to the project and every conversation "
        "sees it; scope 'conversation' keeps it for this conversation only.",
        {
            "type": "object",
            "properties": {
                "content": {
                    "type": "string",
                    "description": "The fact, phrased so it makes sense months from now without this "
                    f"conversation (max {CONTENT_MAX_BYTES} bytes).",
                },
                "scope": {
                    "type": "string",
                    "enum": list(SCOPES),
                    "description": "project (default): shared by every conversation of the project. "
                    "conversation: only this conversation sees it; needs a conversation on the request "
                    "(the platform sends one for chats, threads and A2A calls).",
                },
                "type": {
                    "type": "string",
                    "enum": list(MEMORY_TYPES),
                    "description": "project (default): how this project is built or decided. pattern: a "
                    "reusable snippet or command. reference: an external fact or link. conversation: "
                    "something the user said that should persist.",
                },
                "category": {
                    "type": "string",
                    "description": "Optional sub-label such as decision, architecture or convention "
                    f"(max {CATEGORY_MAX_BYTES} bytes).",
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": f"Optional labels (max {TAGS_MAX}, each up to {TAG_MAX_BYTES} bytes).",
                },
            },
            "required": ["content"],
        },
    ),
    ToolSpec(
        "list_memories",
        "List this project's memories, newest first, without searching; use recall to search by "
        "meaning. Includes this conversation's own notes and never another conversation's.",
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": list(MEMORY_TYPES), "description": "Only memories of this type."},
                "limit": {**LIMIT_SCHEMA, "description": f"How many to list (1-50). Default {LIST_DEFAULT_LIMIT}."},
            },
        },
    ),
    ToolSpec(
        "forget",
        "Permanently delete one memory by id, for a fact that has become wrong. When it is merely "
        "outdated, prefer remembering the correction: the newer memory outranks the older one.",
        {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The memory's id, as recall or list_memories showed it."}
            },
            "required": ["id"],
        },
    ),
    ToolSpec(
        "memory_stats",
        "Count the memories this conversation can see, by type. Exact up to 10,000 memories; past "
        "that it reports a lower bound and says so.",
        {"type": "object", "properties": {}},
    ),
)


# --------------------------------------------------------------------------- argument checks (B §6.2)


#: Tab, newline and carriage return are text; every other control character (NUL
#: first: PostgreSQL cannot store it) and a lone surrogate (no UTF-8 spelling) is not.
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def check_text(name: str, value: str) -> str:
    """`value` unless it holds a character no store can keep; refused naming `name`."""
    bad = _NOT_TEXT.search(value)
    if bad is not None:
        raise InvalidArgument(
            f"`{name}` contains a control character (U+{ord(bad.group()):04X} at position {bad.start()}); "
            "only text is accepted: tab and newline are, other control characters are not."
        )
    return value


def string_arguments(args: Mapping[str, Any]) -> list[str]:
    """Every string among the arguments (tags included): what a failure must not echo."""
    found: list[str] = []
    for value in args.values():
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found.extend(item for item in value if isinstance(item, str))
    return found


def require_string(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"`{name}` is required and must be a non-empty string.")
    return check_text(name, value)


def optional_limit(args: Mapping[str, Any], fallback: int | None) -> int | None:
    value = args.get("limit")
    if value is None:
        return fallback
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value != int(value)
        or not 1 <= value <= LIMIT_MAX
    ):
        raise InvalidArgument(f"`limit` must be an integer between 1 and {LIMIT_MAX}.")
    return int(value)


def optional_type(args: Mapping[str, Any]) -> str | None:
    value = args.get("type")
    if value is None:
        return None
    if value not in MEMORY_TYPES:
        raise InvalidArgument(f"`type` must be one of: {', '.join(MEMORY_TYPES)}.")
    return value


def optional_scope(args: Mapping[str, Any]) -> str:
    value = args.get("scope")
    if value is None:
        return "project"
    if value not in SCOPES:
        raise InvalidArgument(f"`scope` must be one of: {', '.join(SCOPES)}.")
    return value


def optional_mode(args: Mapping[str, Any]) -> str | None:
    value = args.get("mode")
    if value is None:
        return None
    if value not in MODES:
        raise InvalidArgument("`mode` must be precision, balanced or exploratory.")
    return value


def optional_tags(args: Mapping[str, Any]) -> list[str]:
    value = args.get("tags")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InvalidArgument("`tags` must be an array of strings.")
    for tag in value:
        check_text("tags", tag)
    tags = [t.strip() for t in value if t.strip()]
    if len(tags) > TAGS_MAX:
        raise InvalidArgument(f"`tags` may hold at most {TAGS_MAX} entries.")
    for tag in tags:
        if len(tag.encode("utf-8")) > TAG_MAX_BYTES:
            raise InvalidArgument(
                f'each tag may be at most {TAG_MAX_BYTES} bytes; "{tag[:30]}…" is longer. '
                "Tags are short labels; put the detail in the content."
            )
    return tags


def check_content(content: str) -> None:
    size = content_overflow(content)
    if size is not None:
        raise InvalidArgument(
            f"`content` is {size} bytes; the maximum a single memory may hold is {CONTENT_MAX_BYTES}. "
            "Store the essential fact, and leave the detail where it lives."
        )


def optional_category(args: Mapping[str, Any]) -> str | None:
    value = args.get("category")
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgument("`category` must be a string.")
    check_text("category", value)
    if len(value.encode("utf-8")) > CATEGORY_MAX_BYTES:
        raise InvalidArgument(
            f"`category` may be at most {CATEGORY_MAX_BYTES} bytes. Use a short label such as decision or convention."
        )
    return value.strip() or None


def not_in_conversation(source: str) -> str:
    return (
        f"scope 'conversation' needs a conversation, but this request is not in one: no {source} "
        "reached the server. Store it for the project instead, or leave scope unset."
    )


# Each parser checks one tool's arguments in the reference order (the first error wins)
# and returns the service call's keyword arguments. The CLI uses the same parsers.


def recall_args(args: Mapping[str, Any]) -> dict[str, Any]:
    mode = optional_mode(args)
    query = require_string(args, "query")
    return {"query": query, "limit": optional_limit(args, None), "mode": mode}


def remember_args(
    args: Mapping[str, Any], caller: Caller, conversation_source: str = "X-Conversation-Id"
) -> dict[str, Any]:
    content = require_string(args, "content")
    check_content(content)
    category = optional_category(args)
    scope = optional_scope(args)
    if scope == "conversation" and not caller.conversation:
        raise InvalidArgument(not_in_conversation(conversation_source))
    memory_type = optional_type(args) or "project"
    tags = optional_tags(args)
    return {"content": content, "memory_type": memory_type, "category": category, "tags": tags, "scope": scope}


def list_args(args: Mapping[str, Any]) -> dict[str, Any]:
    memory_type = optional_type(args)
    return {"memory_type": memory_type, "limit": optional_limit(args, LIST_DEFAULT_LIMIT)}


def forget_args(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"memory_id": require_string(args, "id")}


# --------------------------------------------------------------------------- dispatch


Handler = Callable[[MemoryService, Caller, Mapping[str, Any]], Awaitable[str]]


async def _recall(service: MemoryService, caller: Caller, args: Mapping[str, Any]) -> str:
    return (await service.recall(caller, **recall_args(args))).text()


async def _remember(service: MemoryService, caller: Caller, args: Mapping[str, Any]) -> str:
    return (await service.remember(caller, **remember_args(args, caller))).text()


async def _list(service: MemoryService, caller: Caller, args: Mapping[str, Any]) -> str:
    return (await service.list(caller, **list_args(args))).text()


async def _forget(service: MemoryService, caller: Caller, args: Mapping[str, Any]) -> str:
    return (await service.forget(caller, **forget_args(args))).text()


async def _stats(service: MemoryService, caller: Caller, args: Mapping[str, Any]) -> str:
    return (await service.stats(caller)).text()


HANDLERS: dict[str, Handler] = {
    "recall": _recall,
    "remember": _remember,
    "list_memories": _list,
    "forget": _forget,
    "memory_stats": _stats,
}


class Closeable(Protocol):
    async def close(self) -> None: ...


class ToolLayer:
    """The catalogue and the dispatcher, with per-call logging.

    `extra` tools are appended after the five memory tools, in order;
    `resources` (e.g. the search_docs retriever) are closed by `close()`. The
    service is not: whoever opened it closes it.
    """

    def __init__(
        self,
        service: MemoryService,
        log: JsonLog,
        *,
        extra: Mapping[str, tuple[ToolSpec, Handler]] | None = None,
        resources: Sequence[Closeable] = (),
    ) -> None:
        self.service = service
        self.log = log
        self._handlers: dict[str, Handler] = dict(HANDLERS)
        self._specs: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
        for name, (spec, handler) in (extra or {}).items():
            self._specs[name] = spec
            self._handlers[name] = handler
        self._resources = list(resources)

    @property
    def catalogue(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def failure_text(self, tool: str, exc: BaseException, sent: Sequence[str] = ()) -> str:
        """The isError text of a failure, without any echo of the `sent` arguments."""
        spec = self._specs.get(tool)
        return f"Error: {spec.failure if spec else STORE_FAILURE} — {strip_echoes(str(exc), sent)}"

    async def close(self) -> None:
        """Release what the extra tools hold (clients, threads); closing twice is harmless."""
        resources, self._resources = self._resources, []
        for resource in resources:
            await resource.close()

    async def call(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller) -> ToolResult:
        started = time.perf_counter()
        handler = self._handlers.get(name)
        args = arguments if isinstance(arguments, Mapping) else {}
        try:
            if handler is None:
                result = ToolResult(f'Error: unknown tool "{name}".', is_error=True)
            else:
                result = ToolResult(await handler(self.service, caller, args))
        except InvalidArgument as exc:
            result = ToolResult(f"Error: {exc}", is_error=True)
        except Exception as exc:
            # a dependency's error text may quote what it was sent (content, a query)
            sent = string_arguments(args)
            self.log.error("tool_failed", exc, sent=sent, tenant=caller.tenant, tool=name)
            result = ToolResult(self.failure_text(name, exc, sent), is_error=True)
        self.log.info(
            "tool_call",
            tenant=caller.tenant,
            tool=name,
            ms=round((time.perf_counter() - started) * 1000),
            ok=not result.is_error,
            inConversation=caller.conversation is not None,
        )
        return result


def build_tool_layer(settings: Settings, service: MemoryService, log: JsonLog, *, retriever: Any = None) -> ToolLayer:
    """The tools this deployment offers, for every transport alike: the five memory
    tools, then search_docs when KNOWLEDGE_BASE_ID is set (absent otherwise: neither
    listed nor callable). Close the layer (`await layer.close()`) before the service.

    `retriever` replaces the Bedrock Knowledge Base retriever (tests). boto3 is not
    imported here, only checked for: the client is made on the first search.
    """
    if not settings.knowledge_base_id:
        return ToolLayer(service, log)
    from mcp_memory.server import search_docs as docs

    if retriever is None:
        from mcp_memory.runtime.aws import require_boto3

        require_boto3("KNOWLEDGE_BASE_ID (search_docs)")
        retriever = docs.DocsRetriever(settings.knowledge_base_id, settings.aws_region)
    spec, handler = docs.search_docs_tool(retriever)
    return ToolLayer(service, log, extra={spec.name: (spec, handler)}, resources=[retriever])
