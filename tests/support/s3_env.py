"""The service over the AWS backend, for the service tests (an `Env` like tests/conftest.make_env).

The stores are the production S3 stores on fresh buckets at the moto
endpoint, with three test conveniences the in-memory reference stores have:
`size` (how many memories / objects there are, asked of the endpoint), the
`writes` made through this object store, and `seed` for arranging thousands
of keys without thousands of requests.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_memory.core.counters.tracker import AccessCounters
from mcp_memory.core.logs import NullLog
from mcp_memory.core.service import MemoryService
from mcp_memory.embedders.fake import FakeEmbedder
from mcp_memory.stores.s3.objects import S3ObjectStore
from mcp_memory.stores.s3.startup import make_clients
from mcp_memory.stores.s3.store import S3VectorStore
from tests.conftest import Clock, Env
from tests.support.moto_endpoint import REGION, make_place, seed_objects


class ObservedS3Vectors(S3VectorStore):
    @property
    def size(self) -> int:
        """Every vector in the index (a blocking ListVectors: fine in a test, never in the server)."""
        listing = self._client.list_vectors(vectorBucketName=self.bucket, indexName=self.index)
        return len(listing["vectors"])


class ObservedS3Objects(S3ObjectStore):
    def __init__(self, client: object, bucket: str) -> None:
        super().__init__(client, bucket)
        #: Every key written through this store, in order.
        self.writes: list[str] = []

    async def put(self, key: str, body: str, *, if_match: str | None = None, if_none_match: bool = False) -> str:
        etag = await super().put(key, body, if_match=if_match, if_none_match=if_none_match)
        self.writes.append(key)
        return etag

    @property
    def size(self) -> int:
        """Every object in the bucket (blocking; test only)."""
        return int(self._client.list_objects_v2(Bucket=self.bucket).get("KeyCount", 0))

    def seed(self, keys: Iterable[str], body: str = "") -> None:
        seed_objects(self.bucket, ((key, body) for key in keys))


def make_s3_env(clock: Clock, endpoint: str, *, floor: float = 0.3, embedder=None) -> Env:
    embedder = embedder or FakeEmbedder()
    place = make_place(endpoint, dim=embedder.dim)
    vectors_client, s3_client = make_clients(REGION, session=place.session, endpoint_url=place.endpoint)
    vectors = ObservedS3Vectors(vectors_client, place.vector_bucket, place.index, embedder.dim)
    objects = ObservedS3Objects(s3_client, place.state_bucket)
    counters = AccessCounters(objects, pod_id="test-pod", log=NullLog(), clock=clock)
    service = MemoryService(vectors, objects, embedder, counters, floor=floor, clock=clock)
    return Env(service, vectors, objects, embedder, counters, clock, "s3")  # type: ignore[arg-type]
