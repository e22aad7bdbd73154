"""AWS calls off the event loop, and AWS failures in our own words.

boto3 blocks, so every call runs in a worker thread (`aws_call`); clients are
thread-safe and made once per store. A failure becomes an `AwsError` — a
StoreError whose message names the operation and AWS's error code, e.g.
`PutObject failed: AccessDenied — …` — so an operator can tell which call and
which permission without reading a traceback. Nothing from the credential
chain ever reaches a message: botocore's own errors name the endpoint and the
code, and a missing credential is explained by where the chain looks, never by
what it found.

Imported only with the S3 backend (boto3 is the `aws` extra).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError

from mcp_memory.core.errors import StoreError

__all__ = ["CREDENTIALS_HINT", "AwsError", "aws_call", "translate"]

T = TypeVar("T")

#: Said whenever no usable credentials were found. We have no variable of our own
#: for them on purpose: keys belong to the deployment's role, not to our settings.
CREDENTIALS_HINT = (
    "no AWS credentials were found. mcp-memory takes them from the standard AWS chain only: "
    "the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN environment variables, "
    "AWS_PROFILE with ~/.aws/credentials or ~/.aws/config (including SSO), or a container, pod "
    "or instance role"
)


class AwsError(StoreError):
    """An AWS call failed. `code` is AWS's error code (or botocore's error name) and
    `status` the HTTP status when there was a response, so callers can turn a 404 or
    a 412 into what it means for them."""

    def __init__(self, operation: str, code: str, message: str, status: int | None = None) -> None:
        text = f"{operation} failed: {code}"
        if message and message != code:
            text += f" — {message}"
        super().__init__(text)
        self.operation = operation
        self.code = code
        self.status = status


def translate(operation: str, error: Exception) -> AwsError:
    """botocore's exception for `operation` as an AwsError (message names no secret)."""
    if isinstance(error, ClientError):
        details = error.response.get("Error", {}) or {}
        meta = error.response.get("ResponseMetadata", {}) or {}
        status = meta.get("HTTPStatusCode")
        code = str(details.get("Code") or status or "UnknownError")
        message = str(details.get("Message") or "")
        return AwsError(operation, code, message, status if isinstance(status, int) else None)
    if isinstance(error, (NoCredentialsError, PartialCredentialsError)):
        return AwsError(operation, type(error).__name__, CREDENTIALS_HINT)
    # EndpointConnectionError, timeouts, …: botocore names the endpoint, never a key.
    return AwsError(operation, type(error).__name__, str(error))


async def aws_call(operation: str, method: Callable[..., T], /, **params: Any) -> T:
    """`method(**params)` in a worker thread; an AWS failure is raised as AwsError.

    `operation` is the API name (PutVectors, ListObjectsV2, …) the message names.
    """
    try:
        return await asyncio.to_thread(method, **params)
    except (ClientError, BotoCoreError) as error:
        raise translate(operation, error) from None
