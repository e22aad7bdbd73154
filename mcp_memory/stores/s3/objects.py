"""The ObjectStore port over an ordinary S3 bucket (docs/storage.md), the reference's state bucket.

It holds what changes — the recency index (`index/…`, empty objects whose key
is the record) and the access-counter shards and `merged.json` (`stats/…`) —
byte for byte as the reference server writes them, so either server reads the
other's bucket.

Compare-and-swap is S3's conditional write: `IfMatch: <etag>` replaces only
that version, `IfNoneMatch: *` only creates. S3 answers a failed condition
with 412 (or 409 when a concurrent conditional write won the race); both are
PreconditionFailed. An ETag here is S3's: the MD5 of the body, so writing
identical bytes twice yields the same ETag. That is safe for the CAS above
it: an equal ETag means equal content, so whatever was computed from it is
still current.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import methodcaller
from typing import TYPE_CHECKING, Any

from mcp_memory.core.errors import PreconditionFailed, StoreError
from mcp_memory.core.ports import ObjectStore
from mcp_memory.stores.records import StoredObject
from mcp_memory.stores.s3.errors import AwsError, s3_calls

if TYPE_CHECKING:
    from mcp_memory.runtime.aws import AwsClient

__all__ = ["DELETE_BATCH", "LIST_PAGE", "S3ObjectStore"]

#: S3's ceilings: keys per ListObjectsV2 page, keys per DeleteObjects request.
LIST_PAGE = 1000
DELETE_BATCH = 1000


class S3ObjectStore(ObjectStore):
    """Keys to bodies with ETags, conditional writes and byte-ordered listing, in one bucket."""

    def __init__(self, client: Any, bucket: str) -> None:
        self._client = client
        self._aws = s3_calls(client, "s3")
        self._bucket = bucket
        self._closed = False

    @property
    def aws(self) -> AwsClient:
        """How this store calls S3 (the start-up checks call through it too)."""
        return self._aws

    @property
    def bucket(self) -> str:
        return self._bucket

    async def get(self, key: str) -> StoredObject | None:
        """The body and ETag, or None when there is no such key (or S3 returned neither)."""

        def fetch(client: Any) -> StoredObject | None:
            response = client.get_object(Bucket=self._bucket, Key=key)
            body, etag = response.get("Body"), response.get("ETag")
            if body is None:
                return None
            with body:
                data = body.read()
            return StoredObject(data.decode("utf-8", errors="replace"), etag) if etag else None

        try:
            return await self._aws.call("GetObject", fetch)
        except AwsError as error:
            if error.status == 404 or error.code in ("NoSuchKey", "404"):
                return None
            raise

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        """Write `body` (JSON) and return the new ETag; a failed condition raises PreconditionFailed."""
        params: dict[str, Any] = {
            "Bucket": self._bucket,
            "Key": key,
            "Body": body.encode("utf-8"),
            "ContentType": "application/json",
        }
        if if_match is not None:
            params["IfMatch"] = if_match
        if if_none_match:
            params["IfNoneMatch"] = "*"
        try:
            response = await self._aws.call("PutObject", methodcaller("put_object", **params))
        except AwsError as error:
            if error.status in (409, 412):
                raise PreconditionFailed(f"conditional write did not apply for {key}") from None
            if if_match is not None and (error.status == 404 or error.code == "NoSuchKey"):
                # The version we meant to replace is gone: the condition cannot hold.
                raise PreconditionFailed(f"conditional write did not apply for {key}: it no longer exists") from None
            raise
        etag = response.get("ETag")
        if not etag:
            raise StoreError(f"PutObject returned no ETag for {key}")
        return str(etag)

    async def list(self, prefix: str, limit: int = 1000, start_after: str | None = None) -> list[str]:
        """Up to `limit` keys under `prefix` after `start_after`, in S3's (byte) order.

        Pages of at most 1,000 keys, following the continuation token while S3
        says the listing is truncated *and* gives a token.
        """
        keys: list[str] = []
        token: str | None = None
        while len(keys) < limit:
            params: dict[str, Any] = {
                "Bucket": self._bucket,
                "Prefix": prefix,
                "MaxKeys": min(LIST_PAGE, limit - len(keys)),
            }
            if start_after:
                params["StartAfter"] = start_after
            if token:
                params["ContinuationToken"] = token
            page = await self._aws.call("ListObjectsV2", methodcaller("list_objects_v2", **params))
            keys.extend(item["Key"] for item in page.get("Contents", []) or [])
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                break
        return keys[: max(0, limit)]

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete in batches of 1,000; a key S3 reports it could not remove raises StoreError."""
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), DELETE_BATCH):
            chunk = unique[i : i + DELETE_BATCH]
            delete = {"Objects": [{"Key": key} for key in chunk], "Quiet": True}
            response = await self._aws.call(
                "DeleteObjects", methodcaller("delete_objects", Bucket=self._bucket, Delete=delete)
            )
            errors = response.get("Errors") or []
            if errors:
                first = errors[0]
                raise StoreError(
                    f"DeleteObjects could not remove {len(errors)} of {len(chunk)} keys: "
                    f"{first.get('Key', '?')} — {first.get('Code', 'unknown error')}"
                )

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._aws.close()
