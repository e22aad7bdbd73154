"""A real HTTP endpoint for S3 and S3 Vectors: moto 5.2.5 in server mode on 127.0.0.1.

Everything the AWS backend does goes over HTTP to it, signed and parsed by
botocore as against AWS. Where moto 5.2.5 falls short of the service, this
module fills the gap *inside the moto server*, and each such part is marked
TEST STAND-IN — it is not AWS and proves nothing about AWS beyond what its
docstring says:

- QueryVectors does not exist in moto. The stand-in ranks an index's stored
  vectors by cosine (or euclidean) distance after applying the metadata filter
  with the operators S3 Vectors documents ($eq, $ne, $in, $nin, $exists, $gt,
  $gte, $lt, $lte, $and, $or; a bare value is $eq; $eq matches an element of
  an array value). Like AWS it refuses topK outside 1–100, a query vector of
  the wrong width, and a filter naming a non-filterable key.
- CreateIndex drops `metadataConfiguration`, so GetIndex could never report
  the non-filterable keys. The stand-in keeps it (and a creation time).
- PutVectors accepts an empty array in metadata; S3 Vectors refuses one and
  fails the whole write, so the stand-in does too.
- moto checks a conditional PutObject and then writes, in two steps, on a
  threaded server; S3 evaluates the condition atomically. The endpoint
  therefore handles one request at a time (requests from many clients still
  interleave between requests, which is where the races under test live).

`seed_objects` writes straight into moto's in-process S3 backend. It is for
setting up thousands of keys quickly; behaviour under test never uses it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.responses import ActionResult
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from moto.s3vectors import urls as s3vectors_urls
from moto.s3vectors.exceptions import ValidationError
from moto.s3vectors.responses import S3VectorsResponse
from werkzeug.serving import make_server

NON_FILTERABLE = ["content", "createdAt", "tags", "trustBase"]
REGION = "us-east-1"


# --------------------------------------------------------------------------- TEST STAND-IN: filters


def _equal(stored: Any, wanted: Any) -> bool:
    """Equality that keeps True apart from 1; an array value matches any of its elements."""
    if isinstance(stored, list):
        return any(_equal(item, wanted) for item in stored)
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return isinstance(stored, bool) and isinstance(wanted, bool) and stored == wanted
    return stored == wanted


def _compare(stored: Any, wanted: Any, op: str) -> bool:
    numbers = (int, float)
    if isinstance(stored, bool) or not isinstance(stored, numbers) or not isinstance(wanted, numbers):
        return False
    return {"$gt": stored > wanted, "$gte": stored >= wanted, "$lt": stored < wanted, "$lte": stored <= wanted}[op]


def _condition(metadata: dict[str, Any], key: str, op: str, operand: Any) -> bool:
    present = key in metadata
    stored = metadata.get(key)
    if op == "$eq":
        return present and _equal(stored, operand)
    if op == "$ne":
        return not (present and _equal(stored, operand))
    if op in ("$in", "$nin"):
        if not isinstance(operand, list) or not operand:
            raise ValidationError(f"Invalid filter: {op} needs a non-empty array")
        hit = present and any(_equal(stored, item) for item in operand)
        return hit if op == "$in" else not hit
    if op == "$exists":
        if not isinstance(operand, bool):
            raise ValidationError("Invalid filter: $exists needs a boolean")
        return present == operand
    if op in ("$gt", "$gte", "$lt", "$lte"):
        return present and _compare(stored, operand, op)
    raise ValidationError(f"Invalid filter: unsupported operator {op}")


def matches(where: Any, metadata: dict[str, Any], non_filterable: set[str]) -> bool:
    """Whether `metadata` satisfies the filter document `where` (see the module docstring)."""
    if not isinstance(where, dict) or not where:
        raise ValidationError("Invalid filter: a filter is a non-empty object")
    for key, condition in where.items():
        if key in ("$and", "$or"):
            if not isinstance(condition, list) or not condition:
                raise ValidationError(f"Invalid filter: {key} needs a non-empty array")
            results = [matches(part, metadata, non_filterable) for part in condition]
            if not (all(results) if key == "$and" else any(results)):
                return False
            continue
        if key.startswith("$"):
            raise ValidationError(f"Invalid filter: unsupported operator {key}")
        if key in non_filterable:
            raise ValidationError(f"Invalid filter: metadata key {key} is not filterable")
        operators = condition if isinstance(condition, dict) else {"$eq": condition}
        if not operators:
            raise ValidationError(f"Invalid filter: empty condition for {key}")
        if not all(_condition(metadata, key, op, operand) for op, operand in operators.items()):
            return False
    return True


def _distance(metric: str, query: np.ndarray, vector: np.ndarray) -> float:
    if metric == "euclidean":
        return float(np.linalg.norm(query - vector))
    norms = float(np.linalg.norm(query) * np.linalg.norm(vector))
    return 1.0 - (float(query @ vector) / norms if norms else 0.0)


# --------------------------------------------------------------------------- TEST STAND-IN: moto patches


def _query_vectors(self: S3VectorsResponse) -> ActionResult:
    """TEST STAND-IN for QueryVectors (moto 5.2.5 has none): exact search over the stored vectors."""
    bucket, name, arn = (self._get_param(p) for p in ("vectorBucketName", "indexName", "indexArn"))
    self._validate_index_params(arn, name, bucket)
    index = self.s3vectors_backend.get_index(bucket, name, arn)
    top_k = self._get_param("topK")
    if not isinstance(top_k, int) or not 1 <= top_k <= 100:
        raise ValidationError(
            "1 validation error detected. Value at '/topK' failed to satisfy constraint: "
            "Member must be between 1 and 100, inclusive"
        )
    query = np.asarray((self._get_param("queryVector") or {}).get("float32") or [], dtype=np.float64)
    if query.shape != (index.dimension,):
        raise ValidationError(f"Query vector must have length {index.dimension}, but has length {query.shape[0]}")
    where = self._get_param("filter")
    configuration = getattr(index, "metadata_configuration", None) or {}
    non_filterable = set(configuration.get("nonFilterableMetadataKeys") or [])
    ranked = []
    for vector in list(index.vectors.values()):
        metadata = vector.metadata if isinstance(vector.metadata, dict) else {}
        if where is not None and not matches(where, metadata, non_filterable):
            continue
        data = np.asarray(vector.data["float32"], dtype=np.float64)
        ranked.append((_distance(index.distance_metric, query, data), vector))
    ranked.sort(key=lambda pair: pair[0])
    with_distance = self._get_bool_param("returnDistance", False)
    with_metadata = self._get_bool_param("returnMetadata", False)
    results = []
    for distance, vector in ranked[:top_k]:
        item: dict[str, Any] = {"key": vector.key}
        if with_distance:
            item["distance"] = distance
        if with_metadata:
            item["metadata"] = vector.metadata
        results.append(item)
    return ActionResult({"vectors": results, "distanceMetric": index.distance_metric})


_original_create_index = S3VectorsResponse.create_index
_original_put_vectors = S3VectorsResponse.put_vectors


def _create_index(self: S3VectorsResponse) -> Any:
    """TEST STAND-IN: keep the metadataConfiguration moto 5.2.5 drops, so GetIndex reports it."""
    result = _original_create_index(self)
    index = self.s3vectors_backend.get_index(
        self._get_param("vectorBucketName"), self._get_param("indexName"), self._get_param("indexArn")
    )
    index.metadata_configuration = self._get_param("metadataConfiguration")
    index.creation_time = datetime.now(UTC)
    return result


def _put_vectors(self: S3VectorsResponse) -> Any:
    """TEST STAND-IN: refuse an empty array in metadata, as S3 Vectors does."""
    for vector in self._get_param("vectors") or []:
        for key, value in (vector.get("metadata") or {}).items():
            if isinstance(value, list) and not value:
                raise ValidationError(f"Invalid metadata for key '{vector.get('key')}': {key} is an empty array")
    return _original_put_vectors(self)


_installed = False


def install_stand_ins() -> None:
    """Patch the in-process moto server (idempotent; before its first S3 Vectors request)."""
    global _installed
    if _installed:
        return
    S3VectorsResponse.query_vectors = _query_vectors  # type: ignore[attr-defined]
    S3VectorsResponse.create_index = _create_index  # type: ignore[method-assign]
    S3VectorsResponse.put_vectors = _put_vectors  # type: ignore[method-assign]
    s3vectors_urls.url_paths["{0}/QueryVectors$"] = S3VectorsResponse.dispatch
    _installed = True


# --------------------------------------------------------------------------- the server


class _QuietHandler(MotoRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class MotoEndpoint:
    """moto's WSGI app behind werkzeug on 127.0.0.1 and a free port, one request at a time."""

    def __init__(self) -> None:
        install_stand_ins()
        app = DomainDispatcherApplication(create_backend_app)
        lock = threading.Lock()

        def one_at_a_time(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            with lock:
                response = app(environ, start_response)
                try:
                    return [b"".join(response)]
                finally:
                    close = getattr(response, "close", None)
                    if close is not None:
                        close()

        self._server = make_server("127.0.0.1", 0, one_at_a_time, threaded=True, request_handler=_QuietHandler)
        host, port = self._server.server_address[:2]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto-endpoint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def unique_name(prefix: str) -> str:
    """A bucket name no other test uses (moto's state lives for the whole session)."""
    return f"{prefix}-{uuid.uuid4().hex[:16]}"


def seed_objects(bucket: str, items: Iterable[tuple[str, str]]) -> None:
    """Write keys straight into moto's in-process S3 (setup only: thousands of keys in a blink)."""
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    for key, body in items:
        backend.put_object(bucket, key, body.encode("utf-8"))


@dataclass(frozen=True)
class AwsPlace:
    """Fresh buckets and an index on the endpoint, and a session that signs for them."""

    endpoint: str
    session: Any
    vector_bucket: str
    index: str
    state_bucket: str
    dim: int

    def client(self, service: str) -> Any:
        """A shared client for arranging and inspecting what the store under test wrote."""
        return admin_client(self.endpoint, service)


_session: Any = None
_admin: dict[tuple[str, str], Any] = {}


def signing_session() -> Any:
    """One boto3 session with dummy keys (moto accepts any) for the whole run: a session
    caches the parsed service models, which a new one would spend ~0.2 s re-reading."""
    global _session
    if _session is None:
        import boto3

        _session = boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
        )
    return _session


def admin_client(endpoint: str, service: str) -> Any:
    """A client for setting up and inspecting the endpoint (closed at the end of the session)."""
    client = _admin.get((endpoint, service))
    if client is None:
        client = _admin[(endpoint, service)] = signing_session().client(
            service, endpoint_url=endpoint, region_name=REGION
        )
    return client


def close_admin_clients() -> None:
    while _admin:
        _admin.popitem()[1].close()


def make_place(
    endpoint: str,
    *,
    dim: int = 8,
    metric: str = "cosine",
    non_filterable: list[str] | None = NON_FILTERABLE,
) -> AwsPlace:
    """A new vector bucket with one index, and a new state bucket."""
    vector_bucket, state_bucket = unique_name("vectors"), unique_name("state")
    index = "memories"
    vectors = admin_client(endpoint, "s3vectors")
    vectors.create_vector_bucket(vectorBucketName=vector_bucket)
    options: dict[str, Any] = {}
    if non_filterable is not None:
        options["metadataConfiguration"] = {"nonFilterableMetadataKeys": non_filterable}
    vectors.create_index(
        vectorBucketName=vector_bucket,
        indexName=index,
        dataType="float32",
        dimension=dim,
        distanceMetric=metric,
        **options,
    )
    admin_client(endpoint, "s3").create_bucket(Bucket=state_bucket)
    return AwsPlace(endpoint, signing_session(), vector_bucket, index, state_bucket, dim)


def s3_object_store(endpoint: str, bucket: str | None = None) -> Any:
    """The production S3ObjectStore (production client settings) on `bucket`, or on a new bucket."""
    from mcp_memory.stores.s3.objects import S3ObjectStore
    from mcp_memory.stores.s3.startup import make_clients

    if bucket is None:
        bucket = unique_name("state")
        admin_client(endpoint, "s3").create_bucket(Bucket=bucket)
    vectors_client, s3_client = make_clients(REGION, session=signing_session(), endpoint_url=endpoint)
    vectors_client.close()
    return S3ObjectStore(s3_client, bucket)


__all__ = [
    "NON_FILTERABLE",
    "REGION",
    "AwsPlace",
    "MotoEndpoint",
    "admin_client",
    "close_admin_clients",
    "install_stand_ins",
    "make_place",
    "matches",
    "s3_object_store",
    "seed_objects",
    "signing_session",
    "unique_name",
]
