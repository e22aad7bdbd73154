"""The tool layer: the catalogue a model sees, argument checks, dispatch to the
service, errors as `isError` results, and one `tool_call` log line per call.

Nothing here knows how the caller was identified: the transport resolves the
tenant and conversation and hands over a Caller. No schema has a tenant or
conversation property, on purpose: a model that can name a tenant can read
someone else's memories.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mcp_memory.core import arguments as checks
from mcp_memory.core.arguments import Terms
from mcp_memory.core.echo import strip_echoes
from mcp_memory.core.errors import InvalidArgument, StoreError
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.core.requests import ForgetRequest, ListRequest, RecallRequest, RememberRequest, StatsRequest
from mcp_memory.core.service import MemoryService
from mcp_memory.server.protocol import render, structured
from mcp_memory.server.protocol.catalogue import (
    READ_ONLY,
    STORE_FAILURE,
    TOOL_TERMS,
    Answer,
    Hints,
    ToolResult,
    ToolSpec,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mcp_memory.config import Settings

__all__ = ["TOOLS", "ToolLayer", "ToolResult", "ToolSpec", "build_tool_layer"]


# --------------------------------------------------------------------------- handlers


async def _recall(service: MemoryService, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
    result = await service.recall_request(caller, RecallRequest.parse(args))
    return Answer(render.recall_text(result), structured.recall_data(result))


async def _remember(service: MemoryService, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
    request = RememberRequest.parse(args, caller=caller, no_conversation=terms.no_conversation)
    result = await service.remember_request(caller, request)
    return Answer(render.remember_text(result), structured.remember_data(result))


async def _list(service: MemoryService, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
    result = await service.list_request(caller, ListRequest.parse(args))
    return Answer(render.list_page_text(result), structured.list_data(result))


async def _forget(service: MemoryService, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
    result = await service.forget_request(caller, ForgetRequest.parse(args))
    return Answer(render.forget_text(result), structured.forget_data(result))


async def _stats(service: MemoryService, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
    result = await service.stats(caller)
    return Answer(render.stats_text(result), structured.stats_data(result))


# --------------------------------------------------------------------------- the catalogue, in order

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "recall",
        "Recall memories",
        "Search what this project has remembered, by meaning. Call it at the start of a task, "
        "before asking the user to explain something again: decisions and their reasons, conventions, "
        "commands that worked, references. Returns the memories themselves (not a summary), ranked, "
        "with a confidence level. An empty result means nothing relevant was stored, not that the "
        "subject has no answer.",
        RecallRequest.schema(),
        structured.RECALL_OUTPUT,
        _recall,
    ),
    ToolSpec(
        "remember",
        "Remember a fact",
        "Store something worth knowing in a later run: a decision and the reason for it, a convention, "
        "a command that turned out to be right, a reference. A near-identical memory is not written "
        "twice: you are told which existing memory already says it, and the tags and category you "
        "passed are discarded.",
        RememberRequest.schema(),
        structured.REMEMBER_OUTPUT,
        _remember,
        # an identical repeat writes nothing ("Already known")
        Hints(read_only=False, destructive=True, idempotent=True, open_world=False),
    ),
    ToolSpec(
        "list_memories",
        "List memories",
        "List this project's memories, newest first, without searching; use recall to search by "
        "meaning. Includes this conversation's own notes and never another conversation's.",
        ListRequest.schema(),
        structured.LIST_OUTPUT,
        _list,
    ),
    ToolSpec(
        "forget",
        "Forget a memory",
        "Permanently delete one memory by id, for a fact that has become wrong. When it is merely "
        "outdated, remember the correction with `replaces` naming it; a correction remembered without "
        "it ranks above the older memory, which recall marks as possibly superseded.",
        ForgetRequest.schema(),
        structured.FORGET_OUTPUT,
        _forget,
        Hints(read_only=False, destructive=True, idempotent=True, open_world=False),
    ),
    ToolSpec(
        "memory_stats",
        "Count memories",
        "Count the memories this conversation can see, by type. Exact up to 10,000 memories; past "
        "that it reports a lower bound and says so.",
        StatsRequest.schema(),
        structured.STATS_OUTPUT,
        _stats,
        READ_ONLY,
    ),
)


#: How a call to a name that is not a tool is logged and counted: the name is the caller's
#: text, and would give a metric a new series per name.
UNKNOWN_TOOL = "unknown"


class Closeable(Protocol):
    async def close(self) -> None: ...


#: A store that fails during a write (a connection lost while it commits) cannot say whether
#: the memory was stored; remember's dedup makes the retry land on it if it was (docs/tools.md).
IN_DOUBT = (
    "The memory may have been stored before the failure: calling remember again with the same "
    "content is safe, it is never stored twice."
)


class ToolLayer:
    """The catalogue and the dispatcher, with per-call logging.

    `extra` tools are appended after the five memory tools, in order; given as a function,
    it is called at the first use of the catalogue (serve-stdio's hook tool: its module is not
    imported before the handshake is answered, tests/cli/test_stdio_imports.py);
    `resources` (e.g. the search_docs retriever) are closed by `close()`. The
    service is not: whoever opened it closes it.
    """

    def __init__(
        self,
        service: MemoryService,
        log: JsonLog,
        *,
        extra: Sequence[ToolSpec] | Callable[[], Sequence[ToolSpec]] = (),
        resources: Sequence[Closeable] = (),
        terms: Terms = TOOL_TERMS,
    ) -> None:
        self.service = service
        self.log = log
        #: How refusals name what the caller can do about them over this transport.
        self.terms = terms
        self._extra = extra
        self._built: dict[str, ToolSpec] | None = None
        self._resources = list(resources)

    @property
    def _specs(self) -> dict[str, ToolSpec]:
        if self._built is None:
            extra = self._extra() if callable(self._extra) else self._extra
            self._built = {spec.name: spec for spec in (*TOOLS, *extra)}
        return self._built

    @property
    def catalogue(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """A tool's input schema, None for a name the catalogue lacks."""
        spec = self._specs.get(name)
        return None if spec is None else spec.input_schema

    def failure_text(self, tool: str, exc: BaseException, sent: Sequence[str] = ()) -> str:
        """The isError text of a failure, without any echo of the `sent` arguments; a store
        failure of `remember` says the write may have landed and that a retry is safe."""
        spec = self._specs.get(tool)
        text = f"Error: {spec.failure if spec else STORE_FAILURE} — {strip_echoes(str(exc), sent)}"
        if tool == "remember" and isinstance(exc, StoreError):
            text += f" {IN_DOUBT}"
        return text

    async def close(self) -> None:
        """Release what the extra tools hold (clients, threads); closing twice is harmless."""
        resources, self._resources = self._resources, []
        for resource in resources:
            await resource.close()

    async def call(self, name: str, arguments: Mapping[str, Any] | None, caller: Caller) -> ToolResult:
        started = time.perf_counter()
        spec = self._specs.get(name)
        args = arguments if isinstance(arguments, Mapping) else {}
        try:
            if spec is None:
                result = ToolResult(f'Error: unknown tool "{name}".', is_error=True)
            else:
                answer = await spec.handler(self.service, caller, args, self.terms)
                result = ToolResult(answer.text, data=answer.data)
        except InvalidArgument as exc:
            result = ToolResult(f"Error: {exc}", is_error=True)
        except Exception as exc:
            # a dependency's error text may quote what it was sent (content, a query, the
            # conversation a store filtered on)
            sent = checks.string_arguments(args) + ([caller.conversation] if caller.conversation else [])
            self.log.error("tool_failed", exc, sent=sent, tenant=caller.tenant, tool=name)
            result = ToolResult(self.failure_text(name, exc, sent), is_error=True)
        self.log.info(
            "tool_call",
            tenant=caller.tenant,
            tool=name if spec is not None else UNKNOWN_TOOL,
            ms=round((time.perf_counter() - started) * 1000),
            ok=not result.is_error,
            inConversation=caller.conversation is not None,
        )
        return result


def build_tool_layer(
    settings: Settings,
    service: MemoryService,
    log: JsonLog,
    *,
    retriever: Any = None,
    terms: Terms = TOOL_TERMS,
    extra: Sequence[ToolSpec] | Callable[[], Sequence[ToolSpec]] = (),
) -> ToolLayer:
    """The tools this deployment offers, for every transport alike: the five memory
    tools, then search_docs when KNOWLEDGE_BASE_ID is set (absent otherwise: neither
    listed nor callable), then a runner's `extra` tools (serve-stdio's hook tool).
    Close the layer (`await layer.close()`) before the service.

    `retriever` replaces the Bedrock Knowledge Base retriever (tests). boto3 is not
    imported here, only checked for: the client is made on the first search.
    """
    if not settings.store.knowledge_base_id:
        return ToolLayer(service, log, terms=terms, extra=extra)
    from mcp_memory.server.protocol import search_docs as docs

    if retriever is None:
        from mcp_memory.runtime.aws import require_boto3

        require_boto3("KNOWLEDGE_BASE_ID (search_docs)")
        retriever = docs.DocsRetriever(settings.store.knowledge_base_id, settings.store.aws_region)
    docs_tool = docs.search_docs_tool(retriever)
    if callable(extra):
        built = extra
        return ToolLayer(service, log, extra=lambda: [docs_tool, *built()], resources=[retriever], terms=terms)
    return ToolLayer(service, log, extra=[docs_tool, *extra], resources=[retriever], terms=terms)
