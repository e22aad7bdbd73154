"""Serving requests that arrive together as one batch: the one micro-batcher of the
SQLite store's searches and of the local embedder's small calls.

Why batch at all: at 100,000 memories one search reads 154 MB of embeddings,
so 16 concurrent recalls read it 16 times, each bound by memory bandwidth
(bench/RESULTS.md#sqlite-vector-query-at-100000-memories-benchlatencysqlite_querypy), when one
matrix-matrix product over all 16 queries reads it once; and the local model
pays its per-call cost again for every single query it runs, where a few
batches serve 16 concurrent recalls
(bench/RESULTS.md#one-micro-batcher-for-the-sqlite-searches-and-the-local-embedder-issue-12-2026-12-01).

The rules, the same for every user:

- **A lone request waits for nothing.** A request that finds the batcher idle
  is served at once, alone. Requests that arrive while a batch is being served
  wait, and are served together as the next batch. Nothing ever waits for a
  timer.
- **Bounded batches, in arrival order.** A batch holds requests in the order
  they came, up to `max_batch` units of `weight` (one per request unless told:
  the embedder weighs a call by its number of texts, so a model call never
  holds more than its batch size). A request is never split, and one heavier
  than the bound is served alone.
- **Up to `parallel` batches at once**, each taking a fair share of what
  waits, so a few concurrent requests still spread over the cores (a lone
  pass over the SQLite embeddings uses one core).
- **An abandoned request is dropped.** A caller that stops waiting
  (cancelled) only drops its own answer; a request nobody waits for any more
  is not put in a batch.
- **Failure is a policy.** `"fail_all"`: a failed batch fails every request in
  it (a store error is everyone's). `"retry_alone"`: each request of a failed
  batch is run again on its own, so an error reaches only the callers whose
  own request causes it (one text the tokenizer refuses must not fail the
  recalls batched with it).
- **Where the batch runs is explicit.** Without an `executor`, `run` is a
  coroutine function awaited by drain tasks on the event loop the batcher was
  first used on; a caller on another loop (a CLI may call `asyncio.run` twice
  with one store) is served alone on its own loop, since a drain task on a
  loop that is not running would serve nobody. With an `executor`, `run` is a
  plain function run there (the embedder's one worker thread), one batch per
  job: after each batch the next job queues behind whatever else waits on
  that executor (a bulk re-embed's next batch), so neither starves the other.
  Answers reach each caller on its own loop, whichever loop that is.
- **Closing leaves nobody hanging.** After `close()`, new requests and the
  ones still queued get `closed_error()`; a batch already running finishes and
  answers. An executor that refuses work (shut down) counts as closed.

Written here rather than taken from a library: the asyncio batching packages
on PyPI wait for a timer or a size to fill, which is exactly what a lone
recall must not do, and none runs batches on a caller-given worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import Any, Generic, Literal, TypeVar, cast, overload

R = TypeVar("R")
T = TypeVar("T")

Failure = Literal["fail_all", "retry_alone"]


def _one(_: object) -> int:
    return 1


def _closed() -> BaseException:
    return RuntimeError("the batcher has been closed")


class _Entry(Generic[R, T]):
    """One request waiting for a batch: what to run, its weight, and where its answer goes."""

    __slots__ = ("future", "loop", "request", "weight")

    def __init__(self, request: R, weight: int, loop: asyncio.AbstractEventLoop) -> None:
        self.request = request
        self.weight = weight
        self.loop = loop
        self.future: asyncio.Future[T] = loop.create_future()

    def abandoned(self) -> bool:
        """The caller stopped waiting. Read from a worker thread too: a stale answer only
        means a batch serves a request nobody will read."""
        return self.future.done()

    def settle(self, answer: T | None, error: BaseException | None = None) -> None:
        """Hand the answer (or the error) to the caller, on the caller's own loop."""
        if asyncio._get_running_loop() is self.loop:
            self.deliver(answer, error)
            return
        try:
            self.loop.call_soon_threadsafe(self.deliver, answer, error)
        except RuntimeError:  # that loop is closed: nobody is waiting any more
            pass

    def deliver(self, answer: T | None, error: BaseException | None) -> None:
        """On the caller's loop: settle the future unless the caller has left."""
        if self.future.done():  # cancelled meanwhile
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(cast(T, answer))


class Batcher(Generic[R, T]):
    """`await submit(request)` returns `run([..., request, ...])`'s answer for that request."""

    @overload
    def __init__(
        self,
        run: Callable[[list[R]], Awaitable[list[T]]],
        max_batch: int,
        *,
        parallel: int = 1,
        weight: Callable[[R], int] = _one,
        failure: Failure = "fail_all",
        closed_error: Callable[[], BaseException] = _closed,
    ) -> None: ...

    @overload
    def __init__(
        self,
        run: Callable[[list[R]], list[T]],
        max_batch: int,
        *,
        executor: Executor,
        parallel: int = 1,
        weight: Callable[[R], int] = _one,
        failure: Failure = "fail_all",
        closed_error: Callable[[], BaseException] = _closed,
    ) -> None: ...

    def __init__(
        self,
        run: Callable[[list[R]], Any],
        max_batch: int,
        *,
        executor: Executor | None = None,
        parallel: int = 1,
        weight: Callable[[R], int] = _one,
        failure: Failure = "fail_all",
        closed_error: Callable[[], BaseException] = _closed,
    ) -> None:
        if max_batch < 1 or parallel < 1:
            raise ValueError("max_batch and parallel must be at least 1")
        if failure not in ("fail_all", "retry_alone"):
            raise ValueError(f"failure must be 'fail_all' or 'retry_alone', got {failure!r}")
        self._run = run
        self._executor = executor
        self._max = max_batch
        self._parallel = parallel
        self._weight = weight
        self._retry_alone = failure == "retry_alone"
        self._closed_error = closed_error
        self._closed = False
        #: Guards the queue and the counters: an executor's thread takes batches too.
        self._lock = threading.Lock()
        self._queue: deque[_Entry[R, T]] = deque()
        #: The queue's total weight (abandoned requests included until they are dropped).
        self._waiting = 0
        #: Drainers started and not finished (drain tasks, or chains of executor jobs).
        self._active = 0
        #: Drainers waiting for a batch's answers right now.
        self._busy = 0
        #: The loop the drain tasks run on (no executor), and strong references to them.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, request: R) -> T:
        if self._closed:
            raise self._closed_error()
        loop = asyncio.get_running_loop()
        if self._executor is None:
            if self._loop is None or self._loop.is_closed():
                self._adopt(loop)
            if loop is not self._loop:  # another event loop: no sharing across loops
                (answer,) = await self._run([request])
                return cast(T, answer)
        entry: _Entry[R, T] = _Entry(request, 1 if self._weight is _one else self._weight(request), loop)
        with self._lock:
            self._queue.append(entry)
            self._waiting += entry.weight
            start = self._active < self._parallel
            if start:
                self._active += 1
        if start:
            self._start_drainer(loop)
        return await entry.future

    def close(self) -> None:
        """Refuse new requests and fail the queued ones with `closed_error()`; a batch
        already running finishes and answers. Waits for nothing."""
        with self._lock:
            self._closed = True
            waiting = self._empty()
        for entry in waiting:
            entry.settle(None, self._closed_error())

    def _adopt(self, loop: asyncio.AbstractEventLoop) -> None:
        """Serve `loop` from now on; whatever waited on a closed loop waits for nobody."""
        with self._lock:
            self._loop = loop
            self._empty()
            self._active = self._busy = 0
            self._tasks.clear()

    def _start_drainer(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._executor is None:
            task = loop.create_task(self._drain_on_loop())
            self._tasks.add(task)
        else:
            self._submit_job()

    def _empty(self) -> list[_Entry[R, T]]:
        """Under the lock: everything queued, leaving the queue empty."""
        waiting = list(self._queue)
        self._queue.clear()
        self._waiting = 0
        return waiting

    def _take(self) -> list[_Entry[R, T]]:
        """Under the lock: the next batch, a fair share with the drainers free to take one
        (so every core gets a batch), never more than the bound; abandoned requests are
        dropped on the way."""
        free = max(1, self._parallel - self._busy)
        bound = min(self._max, -(-self._waiting // free))
        batch: list[_Entry[R, T]] = []
        size = 0
        while self._queue and (not batch or size + self._queue[0].weight <= bound):
            entry = self._queue.popleft()
            self._waiting -= entry.weight
            if not entry.future.done():  # abandoned (see _Entry.abandoned)
                batch.append(entry)
                size += entry.weight
        return batch

    # -- on the event loop ----------------------------------------------------------

    async def _drain_on_loop(self) -> None:
        task = asyncio.current_task()
        batch: list[_Entry[R, T]] = []
        try:
            while True:
                with self._lock:
                    if batch:  # the last batch is answered
                        self._busy -= 1
                    batch = self._take()
                    if not batch:
                        # Finish in the same step as the last look at the queue: a
                        # done-callback would run a step later, and a request submitted in
                        # between (say, by the caller whose answer was just set, asking
                        # again at once) would find every drainer "running", start none,
                        # and wait forever.
                        self._active -= 1
                        self._tasks.discard(cast("asyncio.Task[None]", task))
                        return
                    self._busy += 1
                if self._closed:
                    self._fail(batch, self._closed_error())
                    continue
                try:
                    answers = await self._run([entry.request for entry in batch])
                    if len(answers) != len(batch):
                        self._check(answers, batch)
                except asyncio.CancelledError:
                    raise
                except BaseException as exc:
                    await self._failed_on_loop(batch, exc)
                    continue
                for entry, answer in zip(batch, answers):  # on the callers' loop: no hop
                    if not entry.future.done():
                        entry.future.set_result(answer)
        except asyncio.CancelledError:  # the loop is shutting down: nobody is left hanging
            with self._lock:
                waiting = batch + self._empty()
                self._active -= 1
                if batch:  # cancelled while its batch was out
                    self._busy -= 1
                self._tasks.discard(cast("asyncio.Task[None]", task))
            for entry in waiting:
                entry.future.cancel()
            raise

    async def _failed_on_loop(self, batch: list[_Entry[R, T]], error: BaseException) -> None:
        if not (self._retry_alone and len(batch) > 1 and isinstance(error, Exception)):
            self._fail(batch, error)
            return
        for entry in batch:
            if entry.abandoned():
                continue
            try:
                (answer,) = await self._run([entry.request])
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                entry.deliver(None, exc)
            else:
                entry.deliver(answer, None)

    # -- on an executor -------------------------------------------------------------

    def _submit_job(self) -> None:
        """Queue one drain job; once the executor refuses work, fail whatever waits instead."""
        try:
            cast(Executor, self._executor).submit(self._drain_one_batch)
        except RuntimeError:  # shut down (or the interpreter is exiting)
            with self._lock:
                waiting = self._empty()
                self._active -= 1
            for entry in waiting:
                entry.settle(None, self._closed_error())

    def _drain_one_batch(self) -> None:
        """On the executor: serve one batch, then, if more arrived meanwhile, queue the
        next job behind anything else waiting there."""
        with self._lock:
            batch = self._take()
            self._busy += 1
        try:
            if batch:
                self._serve_here(batch)
        finally:
            with self._lock:
                self._busy -= 1
                more = bool(self._queue)
                if not more:
                    self._active -= 1
            if more:
                self._submit_job()

    def _serve_here(self, batch: list[_Entry[R, T]]) -> None:
        if self._closed:
            self._fail(batch, self._closed_error())
            return
        try:
            answers = self._run([entry.request for entry in batch])
            self._check(answers, batch)
        except Exception as exc:
            if self._retry_alone and len(batch) > 1:
                for entry in batch:
                    if not entry.abandoned():
                        self._serve_here([entry])
            else:
                self._fail(batch, exc)
            return
        except BaseException as exc:
            self._fail(batch, exc)
            raise
        self._answer(batch, answers)

    # -- answers --------------------------------------------------------------------

    @staticmethod
    def _check(answers: list[T], batch: list[_Entry[R, T]]) -> None:
        if len(answers) != len(batch):  # a short answer would leave callers waiting forever
            raise RuntimeError(f"a batch of {len(batch)} requests got {len(answers)} answers")

    @staticmethod
    def _answer(batch: list[_Entry[R, T]], answers: list[T]) -> None:
        for entry, answer in zip(batch, answers):
            entry.settle(answer)

    @staticmethod
    def _fail(batch: list[_Entry[R, T]], error: BaseException) -> None:
        for entry in batch:
            entry.settle(None, error)
