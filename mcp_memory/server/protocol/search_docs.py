"""search_docs: the shared documentation library, a Bedrock Knowledge Base (docs/search_docs.md).

Offered only when KNOWLEDGE_BASE_ID is set (tools.build_tool_layer adds it,
last). The library is shared by every tenant: the tenant is still required to
reach the tool (the transport resolves it first) and is logged, but it is not
a filter. Importing this module imports neither boto3 nor botocore; the
bedrock-agent-runtime client is made on the first search, on a worker thread.

Failures read "the documentation index could not be searched — …", never
"memory store": a model told the memory store failed would stop using recall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_memory.core import arguments as rules
from mcp_memory.core.arguments import Terms
from mcp_memory.core.errors import DocsError, InvalidArgument
from mcp_memory.core.model import Caller
from mcp_memory.core.ranking import percent
from mcp_memory.core.requests import Request, arg
from mcp_memory.runtime.aws import AwsClient, Closed
from mcp_memory.server.protocol.catalogue import LIMIT_SCHEMA, Answer, Hints, ToolSpec
from mcp_memory.server.protocol.quoting import echoed, inline, quoted

PREFIX = "[DOCS]"
QUERY_MAX_CHARS = 1000
EXCERPT_MAX_CHARS = 2000
DEFAULT_LIMIT = 5
TRUNCATED = "… (truncated — read the source document for the rest)"
FAILURE = "the documentation index could not be searched"
#: Where a result's source is, by location type; S3 first, as the reference reads only that one.
_SOURCE_FIELDS = (
    ("s3Location", "uri"),
    ("webLocation", "url"),
    ("confluenceLocation", "url"),
    ("sharePointLocation", "url"),
    ("salesforceLocation", "url"),
    ("kendraDocumentLocation", "uri"),
)

DESCRIPTION = (
    "Search the shared documentation library by meaning: how-tos, policies, runbooks and reference "
    "material. Use it when recall does not answer the question. Returns the most relevant excerpts "
    "with their source, not whole documents; read the source for the rest. An empty result means "
    "nothing close to the question is indexed, not that the subject has no answer."
)


def _query(field: str, value: object) -> str:
    """At most QUERY_MAX_CHARS, counted in code points (docs/memories.md)."""
    query = rules.text(field, value)
    if len(query) > QUERY_MAX_CHARS:
        raise InvalidArgument(
            f"{{field}} is {len(query)} characters; the maximum is {QUERY_MAX_CHARS}. "
            "Ask about one thing, in a sentence or two.",
            field=field,
        )
    return query


@dataclass(frozen=True, slots=True)
class SearchDocsRequest(Request):
    """search_docs' arguments (core/requests.py)."""

    query: str = arg(
        "query",
        _query,
        {
            "type": "string",
            "description": f"What you are looking for, in natural language (max {QUERY_MAX_CHARS} characters).",
        },
    )
    limit: int = arg(
        "limit", rules.limit, {**LIMIT_SCHEMA, "description": f"Default {DEFAULT_LIMIT}."}, default=DEFAULT_LIMIT
    )


INPUT_SCHEMA = SearchDocsRequest.schema()


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "excerpt": {"type": "string"},
                    "source": {"type": "string"},
                    "standing": {"type": "number"},
                },
                "required": ["excerpt"],
            },
        },
    },
    "required": ["query", "results"],
}
#: Reads a library this server does not own, and changes nothing.
HINTS = Hints(read_only=True, open_world=True)


@dataclass(frozen=True, slots=True)
class DocHit:
    excerpt: str
    source: str | None = None
    score: float | None = None


def parse_results(payload: Any) -> list[DocHit]:
    """Keep a result's text, source and score; skip blank excerpts; ignore everything else."""
    results = payload.get("retrievalResults") if isinstance(payload, Mapping) else None
    if not isinstance(results, list):
        raise DocsError("the knowledge base returned a response with no retrieval results in it")
    hits = []
    for result in results:
        if not isinstance(result, Mapping):
            continue
        text = _get(result, "content", "text")
        if not isinstance(text, str) or not text.strip():
            continue
        hits.append(DocHit(text.strip(), _source(result.get("location")), _score(result.get("score"))))
    return hits


def _get(mapping: Mapping[str, Any], *path: str) -> Any:
    value: Any = mapping
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _source(location: Any) -> str | None:
    if not isinstance(location, Mapping):
        return None
    for field, key in _SOURCE_FIELDS:
        value = _get(location, field, key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _standings(hits: Sequence[DocHit]) -> list[float | None]:
    """Each hit's score against the top one (0-1), where scores are known."""
    top = max((h.score for h in hits if h.score is not None), default=0.0)
    return [None if h.score is None or top <= 0 else max(0.0, min(1.0, h.score / top)) for h in hits]


def _excerpt(hit: DocHit) -> str:
    if len(hit.excerpt) > EXCERPT_MAX_CHARS:
        return hit.excerpt[:EXCERPT_MAX_CHARS] + TRUNCATED
    return hit.excerpt


def render_docs(query: str, hits: Sequence[DocHit]) -> str:
    """The text search_docs returns: excerpts with their standing against the top one and
    their source. Raw scores are never printed."""
    if not hits:
        return (
            f"{PREFIX} Nothing in the documentation library matched {echoed(query)}. Nothing close to it is "
            "indexed, which is not the same as the subject having no answer; rephrasing the query may help."
        )
    n = len(hits)
    entries = []
    for i, (hit, standing) in enumerate(zip(hits, _standings(hits)), start=1):
        facets = []
        if standing is not None:
            facets.append(f"{percent(standing)}% of the top result")
        if hit.source:
            facets.append(f"source: {inline(hit.source)}")
        head = f"{i}. ({', '.join(facets)})" if facets else f"{i}."
        entries.append(f"{head}\n{quoted(_excerpt(hit))}")
    header = f"{PREFIX} {n} {'excerpt' if n == 1 else 'excerpts'} matched {echoed(query)} in the documentation library."
    return header + "\n\n" + "\n\n".join(entries)


def docs_data(query: str, hits: Sequence[DocHit]) -> dict[str, Any]:
    """The structuredContent of a search: the same excerpts, sources and standings as fields."""
    results = []
    for hit, standing in zip(hits, _standings(hits)):
        entry: dict[str, Any] = {"excerpt": _excerpt(hit)}
        if hit.source:
            entry["source"] = hit.source
        if standing is not None:
            entry["standing"] = round(standing, 4)
        results.append(entry)
    return {"query": query, "results": results}


class DocsRetriever:
    """Retrieve from one knowledge base: `retrieve(query, limit)` → hits, best first."""

    def __init__(self, knowledge_base_id: str, region: str, *, client: Any = None, workers: int = 4) -> None:
        """Cheap: no client is built until the first search. `client` replaces the
        bedrock-agent-runtime client that would be built (tests pass a stubbed one)."""
        self.knowledge_base_id = knowledge_base_id
        self.region = region
        self._aws = AwsClient(
            "bedrock-agent-runtime", region, client=client, workers=workers, thread_name="mcp-memory-docs"
        )

    def __repr__(self) -> str:
        return f"DocsRetriever(knowledge_base_id={self.knowledge_base_id!r}, region={self.region!r})"

    async def retrieve(self, query: str, limit: int) -> list[DocHit]:
        def call(client: Any) -> Any:
            return client.retrieve(
                knowledgeBaseId=self.knowledge_base_id,
                retrievalQuery={"text": query},
                retrievalConfiguration={"vectorSearchConfiguration": {"numberOfResults": limit}},
            )

        try:
            payload = await self._aws.call("Retrieve", call)
        except Closed:
            raise DocsError("the documentation search has been closed") from None
        except Exception as exc:  # botocore ClientError / BotoCoreError: the message names the cause
            raise DocsError(f"the knowledge base could not be searched — {str(exc) or type(exc).__name__}") from exc
        return parse_results(payload)

    async def close(self) -> None:
        await self._aws.close()


def search_docs_tool(retriever: DocsRetriever) -> ToolSpec:
    """The tool ToolLayer appends, searching through `retriever` (the service is not used)."""

    async def handler(service: Any, caller: Caller, args: Mapping[str, Any], terms: Terms) -> Answer:
        request = SearchDocsRequest.parse(args)
        hits = await retriever.retrieve(request.query, request.limit)
        return Answer(render_docs(request.query, hits), docs_data(request.query, hits))

    return ToolSpec(
        "search_docs",
        "Search documentation",
        DESCRIPTION,
        INPUT_SCHEMA,
        OUTPUT_SCHEMA,
        handler,
        HINTS,
        failure=FAILURE,
    )
