"""One real local embedder for the whole session: loading it costs about half a second.

The embedder is not bound to an event loop (its work runs on its own thread), so
one instance serves every test's loop, as it would serve a CLI that calls
`asyncio.run` more than once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from mcp_memory.embedders.local.embedder import LocalEmbedder


@pytest.fixture(scope="session")
def local_embedder() -> Iterator[LocalEmbedder]:
    embedder = LocalEmbedder()
    yield embedder
    asyncio.run(embedder.close())
