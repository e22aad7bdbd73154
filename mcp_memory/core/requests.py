"""Each operation's arguments as one value: a frozen dataclass per tool, whose fields give the
check, the typed service call and the tool's JSON schema at once, so a new argument is one field
(docs/development.md, "A new argument").

A list argument (tags, replaces) is kept as a tuple. A field is declared with `arg(name, rule, schema)`: the name a tool's caller writes, the rule
that checks what was sent (core/arguments.py) and the JSON schema tools/list shows for it.
Making a request checks it, field by field in `CHECKED` order (the first refusal wins), so
a request that exists is valid: `MemoryService` takes it as it is, and checks nothing twice.
`parse` makes one from what a tool was sent; `schema` is the tool's inputSchema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, InitVar, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from mcp_memory.core import arguments as rules
from mcp_memory.core.arguments import (
    CATEGORY_MAX_BYTES,
    LIMIT_MAX,
    LIST_DEFAULT_LIMIT,
    REPLACES_MAX,
    TAG_MAX_BYTES,
    TAGS_MAX,
)
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.model import MEMORY_TYPES, MODES, SCOPES, Caller, MemoryType, Mode, Scope
from mcp_memory.core.paging import check_cursor
from mcp_memory.core.sizes import CONTENT_MAX_BYTES

#: Every tool's `limit`, before its own description.
LIMIT_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": LIMIT_MAX}
#: recall's and list_memories' `tags`: a memory matches when it carries any of them.
TAGS_FILTER: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "maxItems": TAGS_MAX}
TYPE_FILTER: dict[str, Any] = {
    "type": "string",
    "enum": list(MEMORY_TYPES),
    "description": "Only memories of this type.",
}
#: recall's and list_memories' `since` / `until` (core/timespan.py).
SINCE: dict[str, Any] = {"type": "string", "description": "Stored at or after: ISO 8601 date or time, or age (7d)."}
UNTIL: dict[str, Any] = {"type": "string", "description": "Stored at or before (as since)."}


@dataclass(frozen=True, slots=True)
class Arg:
    """How one field is sent, checked and described."""

    #: The argument's name as a tool's caller writes it (`type`, not memory_type).
    name: str
    #: (name, what was sent) -> the value the service reads; raises InvalidArgument naming it.
    rule: Callable[[str, Any], Any]
    schema: dict[str, Any]
    required: bool


def arg(name: str, rule: Callable[[str, Any], Any], schema: dict[str, Any], *, default: Any = MISSING) -> Any:
    """A request field; without a `default` the argument is required (and listed so)."""
    required = default is MISSING
    return field(default=default, metadata={"arg": Arg(name, rule, schema, required)})


R = TypeVar("R", bound="Request")


class Request:
    """What every request shares: checked when made, parsed from a tool's arguments, described
    by its schema. An optional field sent as None takes its default unchecked."""

    __slots__ = ()
    #: The fields in the order they are checked, when it is not the order they are declared in.
    CHECKED: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        self._check()

    def _check(self, then: Mapping[str, Callable[[], None]] | None = None) -> None:
        """Each field by its rule, in CHECKED order; `then[name]` runs right after `name`'s."""
        declared = {f.name: f for f in fields(self)}  # type: ignore[arg-type]
        for name in self.CHECKED or tuple(declared):
            spec: Arg = declared[name].metadata["arg"]
            value = getattr(self, name)
            if value is None and not spec.required:
                value = declared[name].default
            else:
                value = spec.rule(spec.name, value)
            object.__setattr__(self, name, value)
            if then and name in then:
                then[name]()

    @classmethod
    def parse(cls: type[R], sent: Mapping[str, Any], **context: Any) -> R:
        """The request a tool's arguments make (unknown names are ignored, as MCP allows);
        `context` is what the request's checks need of the caller (RememberRequest's)."""
        values = {f.name: sent.get(f.metadata["arg"].name) for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**values, **context)

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """The tool's inputSchema: each field's schema by its name, the required ones named."""
        specs: list[Arg] = [f.metadata["arg"] for f in fields(cls)]  # type: ignore[arg-type]
        schema: dict[str, Any] = {"type": "object", "properties": {s.name: s.schema for s in specs}}
        required = [s.name for s in specs if s.required]
        if required:
            schema["required"] = required
        return schema


@dataclass(frozen=True, slots=True)
class RecallRequest(Request):
    """recall's arguments (docs/recall.md; their checks: docs/tools.md#argument-checks)."""

    CHECKED: ClassVar[tuple[str, ...]] = ("mode", "query", "limit", "memory_type", "tags", "since", "until")

    query: str = arg(
        "query", rules.query, {"type": "string", "description": "What you want to know, in natural language."}
    )
    limit: int | None = arg(
        "limit",
        rules.limit,
        {**LIMIT_SCHEMA, "description": "Default: the mode's own, 3 precision, 5 balanced, 10 exploratory."},
        default=None,
    )
    mode: Mode | None = arg(
        "mode",
        rules.mode,
        {
            "type": "string",
            "enum": list(MODES),
            "description": "precision: a few close matches. balanced (default): the usual trade-off. "
            "exploratory: more results on looser matching; use it when balanced found nothing.",
        },
        default=None,
    )
    memory_type: MemoryType | None = arg("type", rules.memory_type, TYPE_FILTER, default=None)
    tags: Sequence[str] = arg(
        "tags", rules.tags, {**TAGS_FILTER, "description": "Only memories carrying any of these tags."}, default=()
    )
    since: str | None = arg("since", rules.bound, SINCE, default=None)
    until: str | None = arg("until", rules.bound, UNTIL, default=None)


#: What refuses scope 'conversation' without one, unless the edge words it its own way.
NO_CONVERSATION = "scope 'conversation' needs a conversation, and this request has none"


@dataclass(frozen=True, slots=True)
class RememberRequest(Request):
    """remember's arguments (docs/tools.md#argument-checks). Whether the caller may ask for scope
    'conversation' depends on the caller: given `caller`, it is checked right after the scope
    (the documented order), in the edge's words (`no_conversation`); the service checks it
    again for a request made without one (`check_scope`)."""

    CHECKED: ClassVar[tuple[str, ...]] = ("content", "category", "scope", "memory_type", "tags", "replaces")

    content: str = arg(
        "content",
        rules.content,
        {
            "type": "string",
            "description": "The fact, phrased so it makes sense months from now without this "
            f"conversation (max {CONTENT_MAX_BYTES} bytes).",
        },
    )
    scope: Scope = arg(
        "scope",
        rules.scope,
        {
            "type": "string",
            "enum": list(SCOPES),
            "description": "project (default): every conversation of the project sees it. "
            "conversation: only this conversation sees it.",
        },
        default="project",
    )
    memory_type: MemoryType = arg(
        "type",
        rules.memory_type,
        {
            "type": "string",
            "enum": list(MEMORY_TYPES),
            "description": "project (default): how this project is built or decided. pattern: a "
            "reusable snippet or command. reference: an external fact or link. conversation: "
            "something the user said that should persist.",
        },
        default="project",
    )
    category: str | None = arg(
        "category",
        rules.category,
        {
            "type": "string",
            "description": "Optional sub-label such as decision, architecture or convention "
            f"(max {CATEGORY_MAX_BYTES} bytes).",
        },
        default=None,
    )
    tags: Sequence[str] = arg(
        "tags",
        rules.tags,
        {
            "type": "array",
            "items": {"type": "string"},
            "description": f"Optional labels (max {TAGS_MAX}, each up to {TAG_MAX_BYTES} bytes).",
        },
        default=(),
    )
    replaces: Sequence[str] = arg(
        "replaces",
        rules.replaces,
        {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": REPLACES_MAX,
            "description": f"Ids of memories this one corrects (max {REPLACES_MAX}): they are removed "
            "once it is stored.",
        },
        default=(),
    )

    caller: InitVar[Caller | None] = None
    no_conversation: InitVar[str] = NO_CONVERSATION

    def __post_init__(self, caller: Caller | None, no_conversation: str) -> None:
        if caller is None:
            self._check()
        else:
            self._check({"scope": lambda: self.check_scope(caller, no_conversation)})

    def check_scope(self, caller: Caller, no_conversation: str = NO_CONVERSATION) -> None:
        """Refuse scope 'conversation' from a caller in none, in the edge's own words."""
        if self.scope == "conversation" and not caller.conversation:
            raise InvalidArgument(no_conversation, field="scope")


@dataclass(frozen=True, slots=True)
class ListRequest(Request):
    """list_memories' arguments (docs/tools.md, its section)."""

    memory_type: MemoryType | None = arg("type", rules.memory_type, TYPE_FILTER, default=None)
    limit: int = arg(
        "limit",
        rules.limit,
        {**LIMIT_SCHEMA, "description": f"Default {LIST_DEFAULT_LIMIT}."},
        default=LIST_DEFAULT_LIMIT,
    )
    tags: Sequence[str] = arg(
        "tags", rules.tags, {**TAGS_FILTER, "description": "Only memories carrying any of these tags."}, default=()
    )
    since: str | None = arg("since", rules.bound, SINCE, default=None)
    until: str | None = arg("until", rules.bound, UNTIL, default=None)
    cursor: str | None = arg(
        "cursor",
        check_cursor,
        {"type": "string", "description": "The nextCursor of the previous answer, for the page after it."},
        default=None,
    )


@dataclass(frozen=True, slots=True)
class ForgetRequest(Request):
    """forget's argument (docs/tools.md#forget)."""

    memory_id: str = arg(
        "id",
        rules.forget_id,
        {"type": "string", "description": "The memory's id, as recall or list_memories showed it."},
    )


@dataclass(frozen=True, slots=True)
class StatsRequest(Request):
    """memory_stats takes no argument."""
