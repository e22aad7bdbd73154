"""A VectorStore that fails on demand, to show what a crash between two writes leaves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class InjectedFault(RuntimeError):
    pass


class FaultyStore:
    """Wraps any VectorStore; `fail_on("delete")` makes the next delete raise, after
    every write before it has reached the real store."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._failing: set[str] = set()
        self.failures = 0

    def fail_on(self, operation: str) -> None:
        self._failing.add(operation)

    def _maybe_fail(self, operation: str) -> None:
        if operation in self._failing:
            self._failing.discard(operation)
            self.failures += 1
            raise InjectedFault(f"injected failure in {operation}")

    async def put(self, memory, embedding) -> None:
        self._maybe_fail("put")
        await self.inner.put(memory, embedding)

    async def put_with_index(self, memory, embedding, objects, key: str) -> None:
        self._maybe_fail("put")
        await self.inner.put_with_index(memory, embedding, objects, key)

    async def query(self, *args: Any, **kwargs: Any):
        return await self.inner.query(*args, **kwargs)

    async def get(self, tenant: str, ids: Sequence[str]):
        return await self.inner.get(tenant, ids)

    async def delete(self, tenant: str, ids: Sequence[str]) -> None:
        self._maybe_fail("delete")
        await self.inner.delete(tenant, ids)

    def exclusive(self, tenant: str):
        return self.inner.exclusive(tenant)

    async def close(self) -> None:
        await self.inner.close()

    def __getattr__(self, name: str) -> Any:  # size, preload, ... of the wrapped store
        return getattr(self.inner, name)
