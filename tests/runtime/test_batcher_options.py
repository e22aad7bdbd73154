"""The one micro-batcher, wherever its batches run (awaited on the event loop, or on a
worker thread as the local embedder runs them): a lone request never waits, requests
that arrive while a batch runs share the next one within the weight bound, each
failure policy answers each caller with its own fate, a caller that leaves or one on
another event loop disturbs nobody, and closing or shutting down leaves nobody waiting.

Which requests share a batch is decided by the test (the first batch is held at a
gate), never by timing.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from mcp_memory.core.errors import StoreError
from mcp_memory.runtime.batching import Batcher

#: A guard against a deadlock hanging the suite; never a wait for something to happen.
DEADLINE_S = 30


class Closed(Exception):
    pass


def words(request: str) -> int:
    return len(request.split())


def answers(requests: list[str]) -> list[str]:
    if any("poison" in request for request in requests):
        raise StoreError("the store failed during query")
    return [f"answer to {request}" for request in requests]


class OnLoop:
    """Batches awaited on the event loop; the first is held until the test opens the gate."""

    name = "on the event loop"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self._started = asyncio.Event()
        self._gate = asyncio.Event()

    async def run(self, requests: list[str]) -> list[str]:
        self.batches.append(list(requests))
        self._started.set()
        await self._gate.wait()
        return answers(requests)

    def batcher(self, max_batch: int, **options) -> Batcher[str, str]:
        return Batcher(self.run, max_batch, **options)

    async def held(self) -> None:
        await asyncio.wait_for(self._started.wait(), DEADLINE_S)

    def open(self) -> None:
        self._gate.set()

    def stop(self) -> None:
        pass


class OnWorker:
    """Batches run on a one-thread executor, as the local embedder's are."""

    name = "on a worker thread"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-batcher")
        self._started = threading.Event()
        self._gate = threading.Event()

    def run(self, requests: list[str]) -> list[str]:
        self.batches.append(list(requests))
        self._started.set()
        assert self._gate.wait(DEADLINE_S), "the test never opened the gate"
        return answers(requests)

    def batcher(self, max_batch: int, **options) -> Batcher[str, str]:
        return Batcher(self.run, max_batch, executor=self.executor, **options)

    async def held(self) -> None:
        assert await asyncio.to_thread(self._started.wait, DEADLINE_S)

    def open(self) -> None:
        self._gate.set()

    def stop(self) -> None:
        self._gate.set()
        self.executor.shutdown(wait=True)


@pytest.fixture(params=[OnLoop, OnWorker], ids=["loop", "worker"])
async def place(request) -> AsyncIterator[OnLoop | OnWorker]:
    server = request.param()
    yield server
    server.stop()


async def hold(batcher: Batcher[str, str], place: OnLoop | OnWorker, request: str = "holding") -> asyncio.Task:
    """Start one request and return once its batch is running (and held)."""
    first = asyncio.create_task(batcher.submit(request))
    await place.held()
    return first


async def queue(batcher: Batcher[str, str], requests: list[str]) -> list[asyncio.Task]:
    tasks = [asyncio.create_task(batcher.submit(request)) for request in requests]
    for _ in range(5):  # each task runs up to its await: every request is queued, none served
        await asyncio.sleep(0)
    return tasks


async def settle(*tasks: asyncio.Task) -> list:
    return await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), DEADLINE_S)


async def test_an_idle_batcher_serves_a_lone_request_at_once_by_itself(place):
    batcher = place.batcher(8)
    place.open()

    assert await asyncio.wait_for(batcher.submit("q1"), DEADLINE_S) == "answer to q1"
    assert place.batches == [["q1"]]


async def test_requests_that_wait_share_batches_bounded_by_their_weight_in_arrival_order(place):
    batcher = place.batcher(4, weight=words)

    first = await hold(batcher, place)
    waiting = ["a b", "c", "d e", "f", "g", "h i j k l", "m"]
    queued = await queue(batcher, waiting)
    place.open()
    results = await settle(first, *queued)

    assert results == ["answer to holding"] + [f"answer to {request}" for request in waiting]
    # 2+1 words (the next 2 would make 5), then 2+1+1, then a five-word request alone
    # (heavier than the bound, never split), then the rest.
    assert place.batches == [["holding"], ["a b", "c"], ["d e", "f", "g"], ["h i j k l"], ["m"]]


async def test_retry_alone_gives_the_error_only_to_the_request_that_causes_it(place):
    batcher = place.batcher(8, failure="retry_alone")

    first = await hold(batcher, place)
    queued = await queue(batcher, ["q1", "poison", "q3"])
    place.open()
    _, good, bad, also_good = await settle(first, *queued)

    assert (good, also_good) == ("answer to q1", "answer to q3")
    assert isinstance(bad, StoreError) and "failed during query" in str(bad)
    assert place.batches[1:] == [["q1", "poison", "q3"], ["q1"], ["poison"], ["q3"]]
    assert await asyncio.wait_for(batcher.submit("after"), DEADLINE_S) == "answer to after"


async def test_fail_all_fails_every_request_of_the_failed_batch_and_serves_the_next(place):
    batcher = place.batcher(2)

    first = await hold(batcher, place)
    queued = await queue(batcher, ["q1", "poison", "q3"])
    place.open()
    results = await settle(first, *queued)

    assert results[0] == "answer to holding" and results[3] == "answer to q3"
    assert all(isinstance(result, StoreError) for result in results[1:3])
    assert place.batches[1:] == [["q1", "poison"], ["q3"]]  # nothing re-run


async def test_a_cancelled_caller_is_left_out_and_the_others_are_answered(place):
    batcher = place.batcher(8, failure="retry_alone")

    first = await hold(batcher, place)
    leaving, staying = await queue(batcher, ["never mind", "still wanted"])
    leaving.cancel()
    place.open()
    results = await settle(first, leaving, staying)

    assert isinstance(results[1], asyncio.CancelledError)
    assert results[0] == "answer to holding" and results[2] == "answer to still wanted"
    assert place.batches == [["holding"], ["still wanted"]]


async def test_closing_answers_the_running_batch_and_fails_the_queued_requests(place):
    batcher = place.batcher(8, closed_error=lambda: Closed("the batcher was closed"))

    first = await hold(batcher, place)
    queued = await queue(batcher, ["queued one", "queued two"])
    batcher.close()
    place.open()
    running, *waiting = await settle(first, *queued)

    assert running == "answer to holding"
    assert all(isinstance(error, Closed) for error in waiting)
    with pytest.raises(Closed, match="closed"):
        await batcher.submit("after close")
    assert place.batches == [["holding"]]


async def test_a_caller_on_another_event_loop_gets_its_answer_from_the_worker():
    # The local embedder serves any loop: answers are handed to each caller's own loop.
    place = OnWorker()
    try:
        batcher = place.batcher(8)
        first = await hold(batcher, place)
        queued_there = threading.Event()
        answer_there: list[str] = []

        async def elsewhere() -> None:
            task = asyncio.create_task(batcher.submit("from another loop"))
            await asyncio.sleep(0)
            queued_there.set()
            answer_there.append(await task)

        other = threading.Thread(target=asyncio.run, args=(elsewhere(),))
        other.start()
        assert await asyncio.to_thread(queued_there.wait, DEADLINE_S)
        (here,) = await queue(batcher, ["from this loop"])
        place.open()
        results = await settle(first, here)
        await asyncio.to_thread(other.join, DEADLINE_S)
    finally:
        place.stop()

    assert results == ["answer to holding", "answer to from this loop"]
    assert answer_there == ["answer to from another loop"]
    assert place.batches == [["holding"], ["from another loop", "from this loop"]]


async def test_a_caller_on_another_event_loop_is_served_alone_while_the_loop_batch_is_held():
    # On-loop batches belong to one loop: another loop's caller must not wait behind them.
    gate, started = asyncio.Event(), asyncio.Event()
    batches: list[list[str]] = []

    async def run(requests: list[str]) -> list[str]:
        batches.append(list(requests))
        if "held" in requests:
            started.set()
            await gate.wait()
        return answers(requests)

    batcher: Batcher[str, str] = Batcher(run, 8)
    first = asyncio.create_task(batcher.submit("held"))
    await asyncio.wait_for(started.wait(), DEADLINE_S)
    there = await asyncio.wait_for(asyncio.to_thread(asyncio.run, batcher.submit("from another loop")), DEADLINE_S)
    gate.set()

    assert there == "answer to from another loop"
    assert await asyncio.wait_for(first, DEADLINE_S) == "answer to held"
    assert batches == [["held"], ["from another loop"]]


def test_a_loop_that_shuts_down_mid_batch_leaves_the_batcher_serving_the_next_loop():
    batches: list[list[str]] = []

    async def run(requests: list[str]) -> list[str]:
        batches.append(list(requests))
        if "stuck" in requests:
            await asyncio.Event().wait()  # never answers: only the loop's end stops it
        return answers(requests)

    batcher: Batcher[str, str] = Batcher(run, 8)
    outcomes: list[BaseException] = []

    async def abandon() -> None:
        async def ask(request: str) -> None:
            try:
                await batcher.submit(request)
            except asyncio.CancelledError as exc:
                outcomes.append(exc)
                raise

        tasks = []
        for request in ("stuck", "queued behind it"):
            tasks.append(asyncio.create_task(ask(request)))
            for _ in range(5):  # the first is in its batch before the second is queued
                await asyncio.sleep(0)

    asyncio.run(abandon())  # returns with both requests still waiting: the loop cancels them

    assert len(outcomes) == 2  # both callers were told, neither hangs
    assert asyncio.run(asyncio.wait_for(batcher.submit("next loop"), DEADLINE_S)) == "answer to next loop"
    assert batches == [["stuck"], ["next loop"]]


async def test_an_executor_that_refuses_work_fails_the_waiting_requests_instead_of_hanging():
    place = OnWorker()
    batcher = place.batcher(8, closed_error=lambda: Closed("the worker is gone"))
    try:
        first = await hold(batcher, place)
        queued = await queue(batcher, ["queued one", "queued two"])
        place.executor.shutdown(wait=False)  # the running batch ends; no further job is taken
        place.open()
        running, *waiting = await settle(first, *queued)
        with pytest.raises(Closed, match="gone"):
            await asyncio.wait_for(batcher.submit("after shutdown"), DEADLINE_S)
    finally:
        place.stop()

    assert running == "answer to holding"
    assert all(isinstance(error, Closed) for error in waiting)
    assert place.batches == [["holding"]]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_batch": 0}, "max_batch and parallel must be at least 1"),
        ({"max_batch": 4, "parallel": 0}, "max_batch and parallel must be at least 1"),
        ({"max_batch": 4, "failure": "retry"}, "failure must be 'fail_all' or 'retry_alone', got 'retry'"),
    ],
)
def test_a_batcher_with_impossible_options_is_refused_naming_the_option(options, message):
    async def run(requests: list[str]) -> list[str]:
        return requests

    with pytest.raises(ValueError, match=message):
        Batcher(run, **options)
