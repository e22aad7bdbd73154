"""The export file: JSON Lines, a header line and then one line per memory (docs/transfer.md).

    {"format": "mcp-memory-export", "version": 1, "exportedBy": "mcp-memory 0.1.0",
     "exportedAt": "…Z", "embedding": {"provider": "local", "model": "…", "dim": 384},
     "withEmbeddings": true}
    {"id": "01J…", "tenant": "acme", "content": "…", "type": "project", "category": null,
     "tags": [], "scope": "project", "conversation": null, "createdAt": "…Z", "trustBase": 1,
     "accessCount": 3, "lastAccessedAt": "…Z", "embedding": "<base64 of little-endian float32>"}

Reading a record applies what `remember` applies (core/arguments.py, identity.py),
then what only an import needs: the id must be a ULID (list and stats order by
the time in it), times must parse, counts must be counts, a vector must be the
right width. Each refusal is a RecordRefused naming the field.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_memory.core.arguments import Terms
from mcp_memory.core.counters.codec import Entry
from mcp_memory.core.errors import ContextError, InvalidArgument, MemoryServerError
from mcp_memory.core.identity import parse_conversation, parse_tenant
from mcp_memory.core.ids import is_ulid, parse_iso
from mcp_memory.core.model import AccessStats, Caller, Memory

if TYPE_CHECKING:  # numpy loads with the first vector
    import numpy as np

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Header",
    "ImportRecord",
    "RecordRefused",
    "dump_header",
    "dump_record",
    "parse_header",
    "parse_record",
]

FORMAT = "mcp-memory-export"
FORMAT_VERSION = 1
#: How an import words what `remember`'s checks refuse: a record's fields, in backticks.
RECORD_TERMS = Terms(
    name=lambda field: f"`{field}`",
    no_conversation="scope 'conversation' needs a `conversation`, and this record has none",
)


class RecordRefused(MemoryServerError):
    """One line of an export that cannot be imported; the message says why."""


@dataclass(frozen=True, slots=True)
class Header:
    version: int
    exported_by: str
    provider: str
    model: str
    dim: int
    with_embeddings: bool

    def same_model(self, model: str, dim: int) -> bool:
        """Whether the file's vectors can be used by an embedder of `model` with `dim` dimensions."""
        return self.with_embeddings and self.model == model and self.dim == dim


@dataclass(frozen=True, slots=True)
class ImportRecord:
    memory: Memory
    #: The access counters as the exporting store's recall saw them (None: never used).
    access: Entry | None
    #: The stored vector, when the file carries one the configured embedder can use.
    embedding: np.ndarray | None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dump_header(
    *, exported_by: str, exported_at: str, provider: str, model: str, dim: int, with_embeddings: bool
) -> str:
    return _dumps(
        {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "exportedBy": exported_by,
            "exportedAt": exported_at,
            "embedding": {"provider": provider, "model": model, "dim": dim},
            "withEmbeddings": with_embeddings,
        }
    )


def encode_vector(vector: np.ndarray) -> str:
    import numpy as np

    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def dump_record(memory: Memory, stats: AccessStats | None, vector: np.ndarray | None) -> str:
    trust = memory.trust_base
    record: dict[str, Any] = {
        "id": memory.id,
        "tenant": memory.tenant,
        "content": memory.content,
        "type": memory.memory_type,
        "category": memory.category,
        "tags": list(memory.tags),
        "scope": memory.scope,
        "conversation": memory.conversation,
        "createdAt": memory.created_at,
        "trustBase": int(trust) if float(trust).is_integer() else trust,
        "accessCount": stats.access_count if stats else 0,
        "lastAccessedAt": (stats.last_accessed_at or None) if stats else None,
    }
    if vector is not None:
        record["embedding"] = encode_vector(vector)
    return _dumps(record)


# --------------------------------------------------------------------------- reading


def parse_header(value: Any) -> Header:
    """The first line, or RecordRefused saying what is wrong with it (the whole file is refused)."""
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise RecordRefused(
            f'this is not an mcp-memory export: the first line must be its header ("format": "{FORMAT}")'
        )
    version = value.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise RecordRefused(f'the header\'s "version" must be a whole number, got {version!r}')
    if version > FORMAT_VERSION:
        raise RecordRefused(
            f'this file is "{FORMAT}" version {version}, written by {value.get("exportedBy") or "a newer mcp-memory"}; '
            f"this mcp-memory reads version {FORMAT_VERSION} and older. Import it with a newer mcp-memory"
        )
    raw_embedding = value.get("embedding")
    embedding = raw_embedding if isinstance(raw_embedding, dict) else {}
    model, dim = embedding.get("model"), embedding.get("dim")
    if not isinstance(model, str) or isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise RecordRefused('the header must name the embedding "model" and its "dim" (a positive whole number)')
    provider = embedding.get("provider")
    return Header(
        version=version,
        exported_by=str(value.get("exportedBy") or ""),
        provider=provider if isinstance(provider, str) else "",
        model=model,
        dim=dim,
        with_embeddings=value.get("withEmbeddings") is True,
    )


def record_tenant(value: Any) -> str:
    """The record's tenant, validated as a tenant header is (read first: it decides skip or import)."""
    if not isinstance(value, dict):
        raise RecordRefused("a record must be a JSON object")
    raw = value.get("tenant")
    if not isinstance(raw, str):
        raise RecordRefused("`tenant` is required and must be a string")
    try:
        return parse_tenant(raw, "`tenant`")
    except ContextError as exc:
        raise RecordRefused(str(exc)) from None


def _memory_id(value: Any) -> str:
    if not isinstance(value, str) or not is_ulid(value):
        raise RecordRefused("`id` must be a ULID (26 characters of Crockford base32, as mcp-memory mints them)")
    return value


def _time(value: Any, name: str) -> str:
    if not isinstance(value, str) or math.isnan(parse_iso(value)):
        raise RecordRefused(f"`{name}` must be an ISO-8601 time such as 2026-07-01T12:00:00.000Z")
    return value


def _number(value: Any, name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RecordRefused(f"`{name}` must be a number")
    return float(value)


def _access(value: dict[str, Any]) -> Entry | None:
    count = value.get("accessCount")
    if count is None or count == 0:
        return None
    if isinstance(count, float) and count.is_integer():
        count = int(count)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise RecordRefused("`accessCount` must be a whole number ≥ 0")
    return Entry(count, _time(value.get("lastAccessedAt"), "lastAccessedAt"))


def decode_vector(value: Any, dim: int) -> np.ndarray:
    import numpy as np

    if not isinstance(value, str):
        raise RecordRefused("`embedding` must be base64 text")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise RecordRefused("`embedding` is not valid base64") from None
    if len(raw) != 4 * dim:
        raise RecordRefused(f"`embedding` holds {len(raw) // 4} numbers; the header says {dim} dimensions")
    vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if not np.all(np.isfinite(vector)) or not np.any(vector):
        raise RecordRefused("`embedding` holds a non-finite or all-zero vector")
    return vector


def parse_record(value: dict[str, Any], tenant: str, *, vector_dim: int | None) -> ImportRecord:
    """A record whose tenant `record_tenant` already read. `vector_dim`: decode the record's
    vector at this width (the file's model is the configured one), or None to ignore it."""
    memory_id = _memory_id(value.get("id"))
    raw_conversation = value.get("conversation")
    if raw_conversation is not None and not isinstance(raw_conversation, str):
        raise RecordRefused("`conversation` must be a string or null")
    try:
        conversation = parse_conversation(raw_conversation, "`conversation`")
        from mcp_memory.core.requests import RememberRequest  # not for `--help`, which imports this module

        args = RememberRequest.parse(
            {k: value.get(k) for k in ("content", "type", "category", "tags", "scope")},
            caller=Caller(tenant, conversation),
            no_conversation=RECORD_TERMS.no_conversation,
        )
    except (InvalidArgument, ContextError) as exc:
        raise RecordRefused(str(exc)) from None
    trust = _number(value.get("trustBase"), "trustBase", 1.0)
    if not 0.0 <= trust <= 1.0:
        raise RecordRefused("`trustBase` must be between 0 and 1")
    memory = Memory(
        id=memory_id,
        tenant=tenant,
        content=args.content,
        memory_type=args.memory_type,
        category=args.category,
        tags=tuple(args.tags),
        created_at=_time(value.get("createdAt"), "createdAt"),
        scope=args.scope,
        conversation=conversation,
        trust_base=trust,
    )
    access = _access(value)
    embedding = None
    if vector_dim is not None and value.get("embedding") is not None:
        embedding = decode_vector(value.get("embedding"), vector_dim)
    return ImportRecord(memory, access, embedding)
