"""AWS failures in the S3 stores' own words, and the client they make every call through.

Calls run as every AWS call in this package does, on runtime/aws.py's bounded
pool (`s3_calls` wraps a store's client with this module's hook); clients are
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

from typing import Any

from botocore.exceptions import ClientError, NoCredentialsError, PartialCredentialsError

from mcp_memory.core.errors import StoreError
from mcp_memory.runtime.aws import AwsClient, Closed

__all__ = ["CREDENTIALS_HINT", "AwsError", "s3_calls", "translate"]

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


def _hook(operation: str, error: Exception) -> Exception:
    if isinstance(error, Closed):
        return StoreError(f"the S3 store has been closed ({operation} was not sent)")
    return translate(operation, error)


def s3_calls(client: Any, service: str) -> AwsClient:
    """`client` (an s3 or s3vectors client the store owns) behind the bounded pool, its
    failures raised as AwsError."""
    return AwsClient(service, client=client, owns_client=True, errors=_hook, thread_name=f"mcp-memory-{service}")
