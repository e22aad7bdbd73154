"""Shared fixtures: an injected clock, a MemoryService over the in-memory
reference stores with the deterministic fake embedder, and a real HTTP AWS
endpoint (moto in server mode; see tests/moto_endpoint.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tests import the checkout, not an installed copy
    sys.path.insert(0, str(ROOT))

from mcp_memory.counters import AccessCounters  # noqa: E402
from mcp_memory.embedders.fake import FakeEmbedder  # noqa: E402
from mcp_memory.ids import parse_iso  # noqa: E402
from mcp_memory.logs import NullLog  # noqa: E402
from mcp_memory.service import MemoryService  # noqa: E402
from mcp_memory.stores.memory import InMemoryObjectStore, InMemoryVectorStore  # noqa: E402

T0 = parse_iso("2026-07-01T00:00:00.000Z")
DAY = 86_400_000


@dataclass
class Clock:
    """Epoch milliseconds that only move when a test moves them."""

    now: float = T0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms


@pytest.fixture
def clock() -> Clock:
    return Clock()


@dataclass
class Env:
    service: MemoryService
    vectors: InMemoryVectorStore
    objects: InMemoryObjectStore
    embedder: FakeEmbedder
    counters: AccessCounters
    clock: Clock


def make_env(clock: Clock, *, floor: float = 0.3, embedder=None, vectors=None, objects=None) -> Env:
    vectors = vectors or InMemoryVectorStore()
    objects = objects or InMemoryObjectStore()
    embedder = embedder or FakeEmbedder()
    counters = AccessCounters(objects, pod_id="test-pod", log=NullLog(), clock=clock)
    service = MemoryService(vectors, objects, embedder, counters, floor=floor, clock=clock)
    return Env(service, vectors, objects, embedder, counters, clock)


@pytest.fixture
def env(clock: Clock) -> Env:
    return make_env(clock)


@pytest.fixture(scope="session")
def aws_endpoint() -> Iterator[str]:
    """The URL of a moto server on 127.0.0.1 (S3 and S3 Vectors), for the whole session."""
    from tests.moto_endpoint import MotoEndpoint, close_admin_clients

    endpoint = MotoEndpoint()
    try:
        yield endpoint.url
    finally:
        close_admin_clients()
        endpoint.stop()


@pytest.fixture
def aws(aws_endpoint: str):  # noqa: ANN201 (tests.moto_endpoint.AwsPlace, imported lazily)
    """Fresh vector bucket + index (8 dimensions, cosine, the four non-filterable keys) and state bucket."""
    from tests.moto_endpoint import make_place

    return make_place(aws_endpoint)
