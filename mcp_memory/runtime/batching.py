"""Serving requests that arrive together as one batch (the SQLite store's searches).

Why: at 100,000 memories one search reads 154 MB of embeddings, so 16
concurrent recalls read it 16 times (about 16 ms each on this 2-core box)
when one matrix-matrix product over all 16 queries reads it once. The rule is
the local embedder's: a request that finds the batcher idle is served at once,
alone; requests that arrive while a batch is being served wait, and are served
together as the next batch. Up to `parallel` batches are served at once (one
per core: a lone pass over the embeddings uses one), so a few concurrent
requests still spread over the cores. Nothing ever waits for a timer.

A failed batch fails the requests in it (a store error is everyone's); a
caller that stops waiting only drops its own answer. One batcher serves the
event loop it was first used on; a caller on another loop is served alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

R = TypeVar("R")
T = TypeVar("T")


class Batcher(Generic[R, T]):
    """`submit(request)` returns `run([..., request, ...])`'s answer for that request."""

    def __init__(self, run: Callable[[list[R]], Awaitable[list[T]]], max_batch: int, parallel: int = 1) -> None:
        if max_batch < 1 or parallel < 1:
            raise ValueError("max_batch and parallel must be at least 1")
        self._run = run
        self._max = max_batch
        self._parallel = parallel
        self._queue: list[tuple[R, asyncio.Future[T]]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drainers: set[asyncio.Task[None]] = set()
        #: Drain tasks waiting for a batch's answers right now.
        self._busy = 0

    async def submit(self, request: R) -> T:
        loop = asyncio.get_running_loop()
        if self._loop is None or self._loop.is_closed():
            self._loop = loop
        if loop is not self._loop:  # another event loop: no sharing across loops
            (answer,) = await self._run([request])
            return answer
        future: asyncio.Future[T] = loop.create_future()
        self._queue.append((request, future))
        if len(self._drainers) < self._parallel:
            self._drainers.add(loop.create_task(self._drain()))
        return await future

    async def _drain(self) -> None:
        try:
            await self._serve_queue()
        finally:
            # Leave the set in the same step as the last look at the queue: a done-callback
            # would run a step later, and a request submitted in between (say, by the caller
            # whose answer was just set, asking again at once) would find every drain task
            # "running", start none, and wait forever.
            self._drainers.discard(asyncio.current_task())

    async def _serve_queue(self) -> None:
        while self._queue:
            # A fair share with the drain tasks that are free to take one, so every core gets a batch.
            free = max(1, self._parallel - self._busy)
            take = min(self._max, -(-len(self._queue) // free))
            batch, self._queue = self._queue[:take], self._queue[take:]
            batch = [(request, future) for request, future in batch if not future.done()]
            if not batch:
                continue
            self._busy += 1
            try:
                answers = await self._run([request for request, _ in batch])
            except asyncio.CancelledError:  # the loop is shutting down: nobody is left hanging
                for _, future in batch + self._queue:
                    future.cancel()
                self._queue = []
                raise
            except BaseException as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            finally:
                self._busy -= 1
            for (_, future), answer in zip(batch, answers):
                if not future.done():
                    future.set_result(answer)
