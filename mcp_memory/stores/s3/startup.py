"""Start-up for the AWS backend: the clients, and the checks made before anything is served.

A vector index's dimension, distance metric and non-filterable keys cannot be
changed once it exists, and each one, wrong, fails later and worse: a write
refused by AWS inside someone's agent run, similarities on another scale than
the relevance floor, or content counted against the 2 KB filterable budget.
So the index is read once (GetIndex) and the process refuses to start, naming
what to change, when it does not fit. A missing bucket or index is refused the
same way.
"""

from __future__ import annotations

import json
from operator import methodcaller
from typing import TYPE_CHECKING, Any

import boto3
from botocore.exceptions import BotoCoreError, InvalidRegionError

from mcp_memory.core.errors import StartupError
from mcp_memory.core.version import __version__
from mcp_memory.runtime.aws import STORAGE_READ_TIMEOUT_S, STORAGE_RETRIES, AwsClient, new_client
from mcp_memory.stores.records import NON_FILTERABLE_KEYS
from mcp_memory.stores.s3.errors import CREDENTIALS_HINT, AwsError

if TYPE_CHECKING:
    from mcp_memory.stores.section import StoreSection

__all__ = ["check_index", "check_state_bucket", "make_clients"]


_NOT_FOUND = ("NotFoundException", "NoSuchBucket", "404")
_METADATA_CONFIGURATION = json.dumps({"nonFilterableMetadataKeys": list(NON_FILTERABLE_KEYS)}, separators=(",", ":"))


def make_clients(region: str, *, session: Any = None, endpoint_url: str | None = None) -> tuple[Any, Any]:
    """An `s3vectors` and an `s3` client, made once per store (boto3 clients are thread-safe).

    Standard retry mode (throttling and 5xx, with backoff); bounded timeouts so a
    stalled connection fails a request instead of hanging it; a connection pool
    wide enough for the counters' 16 concurrent shard reads. Credentials and any
    endpoint override come from the standard AWS chain (`AWS_ENDPOINT_URL` too).
    """
    options: dict[str, Any] = {
        "retries": STORAGE_RETRIES,
        "read_timeout_s": STORAGE_READ_TIMEOUT_S,
        "max_pool_connections": 32,
        "user_agent_appid": f"mcp-memory-{__version__}",
        "endpoint_url": endpoint_url,
    }
    try:
        session = session or boto3.session.Session()
        vectors = new_client("s3vectors", region, session=session, **options)
    except InvalidRegionError:
        raise StartupError(f'AWS_REGION must be an AWS region name such as ap-northeast-2, got "{region}"') from None
    except BotoCoreError as error:  # e.g. a malformed AWS_ENDPOINT_URL or profile
        raise StartupError(f"cannot set up the AWS clients: {error}") from None
    return vectors, new_client("s3", region, session=session, **options)


def _is_missing(error: AwsError) -> bool:
    return error.status == 404 or error.code in _NOT_FOUND


def _refusal(error: AwsError, what: str, permission: str) -> StartupError:
    """A start-up failure that is neither "missing" nor "does not fit"."""
    if error.code in ("NoCredentialsError", "PartialCredentialsError"):
        return StartupError(f"cannot reach {what}: {CREDENTIALS_HINT}")
    if error.status == 403 or "AccessDenied" in error.code:
        return StartupError(f"cannot reach {what}: {error} (the role needs {permission})")
    return StartupError(f"cannot reach {what}: {error}")


async def _missing_index_message(aws: AwsClient, settings: StoreSection, dim: int) -> str:
    bucket, index = settings.vector_bucket, settings.vector_index
    try:
        await aws.call("GetVectorBucket", methodcaller("get_vector_bucket", vectorBucketName=bucket))
    except AwsError as error:
        if _is_missing(error):
            return (
                f'the S3 Vectors bucket "{bucket}" (VECTOR_BUCKET) does not exist in {settings.aws_region}: '
                f"create it (aws s3vectors create-vector-bucket --vector-bucket-name {bucket}) "
                "or correct VECTOR_BUCKET / AWS_REGION"
            )
    return (
        f'the S3 Vectors index "{index}" (VECTOR_INDEX) does not exist in vector bucket "{bucket}": '
        f"create it (aws s3vectors create-index --vector-bucket-name {bucket} --index-name {index} "
        f"--data-type float32 --dimension {dim} --distance-metric cosine "
        f"--metadata-configuration '{_METADATA_CONFIGURATION}') or correct VECTOR_INDEX"
    )


def index_problems(index: dict[str, Any], settings: StoreSection, dim: int) -> list[str]:
    """What makes this index unusable for vectors of `dim` values, each naming the fix."""
    name = settings.vector_index
    problems = []
    dimension = index.get("dimension")
    if dimension != dim:
        problems.append(
            f'the S3 Vectors index "{name}" holds {dimension}-dimensional vectors but EMBEDDING_DIM is '
            f"{dim}: set EMBEDDING_DIM={dimension} with a model that returns {dimension} "
            f"values, or create a new index with --dimension {dim} "
            "(a dimension cannot be changed)"
        )
    metric = index.get("distanceMetric")
    if metric != "cosine":
        problems.append(
            f'the S3 Vectors index "{name}" uses the {metric} distance metric but mcp-memory needs cosine '
            "(similarity is 1 − cosine distance): create a new index with --distance-metric cosine"
        )
    configuration = index.get("metadataConfiguration") or {}
    keys = configuration.get("nonFilterableMetadataKeys") or []
    if sorted(keys) != sorted(NON_FILTERABLE_KEYS):
        found = ", ".join(keys) if keys else "none"
        problems.append(
            f'the S3 Vectors index "{name}" has non-filterable metadata keys [{found}] but they must be exactly '
            f"{', '.join(NON_FILTERABLE_KEYS)}: create a new index with "
            f"--metadata-configuration '{_METADATA_CONFIGURATION}' (they cannot be changed on an existing index)"
        )
    return problems


async def check_index(aws: AwsClient, settings: StoreSection, dim: int) -> None:
    """GetIndex, and refuse to start unless the index fits (dimension, cosine, the four keys)."""
    where = {"vectorBucketName": settings.vector_bucket, "indexName": settings.vector_index}
    try:
        response = await aws.call("GetIndex", methodcaller("get_index", **where))
    except AwsError as error:
        if _is_missing(error):
            raise StartupError(await _missing_index_message(aws, settings, dim)) from None
        what = f'the S3 Vectors index "{settings.vector_index}" in bucket "{settings.vector_bucket}"'
        raise _refusal(error, what, "s3vectors:GetIndex") from None
    problems = index_problems(response.get("index") or {}, settings, dim)
    if problems:
        raise StartupError("; ".join(problems))


async def check_state_bucket(aws: AwsClient, settings: StoreSection) -> None:
    """HeadBucket: the state bucket must exist and be ours to list."""
    bucket = settings.state_bucket
    try:
        await aws.call("HeadBucket", methodcaller("head_bucket", Bucket=bucket))
    except AwsError as error:
        if _is_missing(error):
            raise StartupError(
                f'the S3 bucket "{bucket}" (STATE_BUCKET) does not exist: create it '
                f"(aws s3api create-bucket --bucket {bucket}) or correct STATE_BUCKET"
            ) from None
        raise _refusal(error, f'the S3 bucket "{bucket}" (STATE_BUCKET)', "s3:ListBucket") from None
