"""The S3 object store (docs/storage.md, the reference's objects.test).

Behaviour is checked over HTTP against the moto endpoint; the exact request
parameters a case is about (page sizes, batch sizes, the conditional headers)
and the answers moto cannot be made to give (409, 500, a truncated page
without a token, per-key delete errors) are checked with botocore's Stubber.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from io import BytesIO
from typing import Any

import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from mcp_memory.core.errors import PreconditionFailed, StoreError
from mcp_memory.stores.s3.objects import S3ObjectStore
from mcp_memory.stores.s3.startup import make_clients
from tests.support.moto_endpoint import REGION, AwsPlace, s3_object_store, seed_objects, signing_session

BUCKET = "state"


@pytest.fixture
async def objects(aws: AwsPlace) -> AsyncIterator[S3ObjectStore]:
    store = s3_object_store(aws.endpoint, aws.state_bucket)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def stubbed() -> Iterator[tuple[S3ObjectStore, Stubber]]:
    """A store whose client answers from a script and asserts every request's parameters."""
    vectors_client, s3_client = make_clients(REGION, session=signing_session())
    vectors_client.close()
    with Stubber(s3_client) as stubber:
        yield S3ObjectStore(s3_client, BUCKET), stubber
        stubber.assert_no_pending_responses()
    s3_client.close()


def page(keys: list[str], token: str | None = None, truncated: bool | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"IsTruncated": bool(token) if truncated is None else truncated, "KeyCount": len(keys)}
    if keys:
        response["Contents"] = [{"Key": key} for key in keys]
    if token:
        response["NextContinuationToken"] = token
    return response


# --------------------------------------------------------------------------- over HTTP


async def test_get_returns_the_body_and_etag_and_none_for_a_missing_key(objects: S3ObjectStore) -> None:
    etag = await objects.put("stats/acme/merged.json", '{"counts":{},"watermark":"é"}')

    stored = await objects.get("stats/acme/merged.json")

    assert stored is not None and (stored.body, stored.etag) == ('{"counts":{},"watermark":"é"}', etag)
    assert await objects.get("stats/acme/absent.json") is None


async def test_objects_are_written_as_json(objects: S3ObjectStore, aws: AwsPlace) -> None:
    await objects.put("index/acme/key", "")

    head = aws.client("s3").head_object(Bucket=aws.state_bucket, Key="index/acme/key")

    assert head["ContentType"] == "application/json" and head["ContentLength"] == 0


async def test_if_match_replaces_only_the_version_read(objects: S3ObjectStore) -> None:
    first = await objects.put("merged", "v1")
    second = await objects.put("merged", "v2", if_match=first)

    with pytest.raises(PreconditionFailed):
        await objects.put("merged", "v3", if_match=first)

    stored = await objects.get("merged")
    assert stored is not None and (stored.body, stored.etag) == ("v2", second)


async def test_listing_follows_continuation_past_a_thousand_keys_and_slices_to_the_limit(
    objects: S3ObjectStore,
) -> None:
    keys = [f"index/acme/{i:05d}" for i in range(1500)]
    seed_objects(objects.bucket, ((key, "") for key in reversed(keys)))
    seed_objects(objects.bucket, [("index/acmeX/0", ""), ("index/acm", "")])

    assert await objects.list("index/acme/", limit=5000) == keys
    assert await objects.list("index/acme/", limit=1234) == keys[:1234]
    assert await objects.list("index/acme/", limit=5000, start_after=keys[99]) == keys[100:]


async def test_deleting_more_keys_than_one_request_takes_removes_them_all(objects: S3ObjectStore) -> None:
    keys = [f"stats/acme/shard/{i:05d}.json" for i in range(2100)]
    seed_objects(objects.bucket, ((key, "{}") for key in keys))
    seed_objects(objects.bucket, [("stats/acme/merged.json", "{}")])

    await objects.delete(keys)

    assert await objects.list("stats/acme/", limit=5000) == ["stats/acme/merged.json"]


# --------------------------------------------------------------------------- exact requests (Stubber)


def body(text: str) -> StreamingBody:
    data = text.encode("utf-8")
    return StreamingBody(BytesIO(data), len(data))


async def test_get_asks_for_the_key_and_reads_body_and_etag(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("get_object", {"Body": body('{"a":1}'), "ETag": '"e1"'}, {"Bucket": BUCKET, "Key": "k"})
    stubber.add_client_error("get_object", "NoSuchKey", "The specified key does not exist.", 404)

    stored = await store.get("k")

    assert stored is not None and (stored.body, stored.etag) == ('{"a":1}', '"e1"')
    assert await store.get("gone") is None


async def test_a_get_denied_raises_naming_the_operation_and_the_code(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_client_error("get_object", "AccessDenied", "Access Denied", 403)

    with pytest.raises(StoreError, match=r"^GetObject failed: AccessDenied — Access Denied$"):
        await store.get("k")


async def test_an_error_message_carries_no_part_of_the_signing_details(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_client_error(
        "put_object",
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided.",
        403,
        service_error_meta={"AWSAccessKeyId": "AKIAEXAMPLEKEYID0000", "StringToSign": "AWS4-HMAC-SHA256 secret-ish"},
    )

    with pytest.raises(StoreError) as caught:
        await store.put("k", "{}")

    assert str(caught.value).startswith("PutObject failed: SignatureDoesNotMatch — The request signature")
    assert "AKIAEXAMPLEKEYID0000" not in str(caught.value) and "AWS4-HMAC" not in str(caught.value)


async def test_a_get_without_an_etag_reads_as_missing(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("get_object", {"Body": body("{}")}, {"Bucket": BUCKET, "Key": "k"})

    assert await store.get("k") is None


@pytest.mark.parametrize(
    ("options", "headers"),
    [
        ({}, {}),
        ({"if_match": '"e1"'}, {"IfMatch": '"e1"'}),
        ({"if_none_match": True}, {"IfNoneMatch": "*"}),
    ],
    ids=["unconditional", "if-match", "if-none-match"],
)
async def test_put_sends_json_with_exactly_the_condition_asked_for(
    stubbed: tuple[S3ObjectStore, Stubber], options: dict[str, Any], headers: dict[str, str]
) -> None:
    store, stubber = stubbed
    expected = {"Bucket": BUCKET, "Key": "k", "Body": b'{"x":"\xc3\xa9"}', "ContentType": "application/json", **headers}
    stubber.add_response("put_object", {"ETag": '"e2"'}, expected)

    assert await store.put("k", '{"x":"é"}', **options) == '"e2"'


@pytest.mark.parametrize(("code", "status"), [("PreconditionFailed", 412), ("ConditionalRequestConflict", 409)])
async def test_412_and_409_are_a_failed_precondition(
    stubbed: tuple[S3ObjectStore, Stubber], code: str, status: int
) -> None:
    store, stubber = stubbed
    stubber.add_client_error("put_object", code, "condition", status)

    with pytest.raises(PreconditionFailed):
        await store.put("k", "{}", if_match='"e1"')


async def test_a_500_is_a_store_error_and_not_a_failed_precondition(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_client_error("put_object", "InternalError", "We encountered an internal error.", 500)

    with pytest.raises(StoreError, match="PutObject failed: InternalError") as caught:
        await store.put("k", "{}", if_none_match=True)
    assert not isinstance(caught.value, PreconditionFailed)


async def test_list_pages_with_max_keys_of_what_remains_and_the_continuation_token(
    stubbed: tuple[S3ObjectStore, Stubber],
) -> None:
    store, stubber = stubbed
    first = [f"p/{i:04d}" for i in range(1000)]
    second = [f"p/{i:04d}" for i in range(1000, 1600)]
    stubber.add_response(
        "list_objects_v2", page(first, "t1"), {"Bucket": BUCKET, "Prefix": "p/", "MaxKeys": 1000, "StartAfter": "p/"}
    )
    stubber.add_response(
        "list_objects_v2",
        page(second, "t2"),
        {"Bucket": BUCKET, "Prefix": "p/", "MaxKeys": 500, "StartAfter": "p/", "ContinuationToken": "t1"},
    )

    keys = await store.list("p/", limit=1500, start_after="p/")

    assert keys == first + second[:500]


async def test_a_truncated_page_without_a_token_ends_the_listing(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response(
        "list_objects_v2", page(["p/1"], truncated=True), {"Bucket": BUCKET, "Prefix": "p/", "MaxKeys": 1000}
    )

    assert await store.list("p/", limit=5000) == ["p/1"]


async def test_an_empty_listing_and_a_zero_limit(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    stubber.add_response("list_objects_v2", page([]), {"Bucket": BUCKET, "Prefix": "p/", "MaxKeys": 10})

    assert await store.list("p/", limit=10) == []
    assert await store.list("p/", limit=0) == []  # no request at all


async def test_delete_sends_quiet_batches_of_a_thousand(stubbed: tuple[S3ObjectStore, Stubber]) -> None:
    store, stubber = stubbed
    keys = [f"k/{i:04d}" for i in range(2500)]
    for start, end in ((0, 1000), (1000, 2000), (2000, 2500)):
        expected = {"Bucket": BUCKET, "Delete": {"Objects": [{"Key": k} for k in keys[start:end]], "Quiet": True}}
        stubber.add_response("delete_objects", {}, expected)

    await store.delete(keys)
    await store.delete([])  # no request at all


async def test_keys_s3_could_not_delete_raise_naming_the_count_the_key_and_the_code(
    stubbed: tuple[S3ObjectStore, Stubber],
) -> None:
    store, stubber = stubbed
    stubber.add_response(
        "delete_objects",
        {"Errors": [{"Key": "stats/acme/shard/a.json", "Code": "AccessDenied", "Message": "Access Denied"}]},
        {"Bucket": BUCKET, "Delete": {"Objects": [{"Key": "stats/acme/shard/a.json"}], "Quiet": True}},
    )

    with pytest.raises(StoreError, match="could not remove 1 of 1 keys: stats/acme/shard/a.json — AccessDenied"):
        await store.delete(["stats/acme/shard/a.json"])
