"""Requests that arrive together are served together (the SQLite store's searches),
and nobody can tell from the answers; a lone request never waits for company."""

from __future__ import annotations

import asyncio

import pytest

from mcp_memory.core.errors import StoreError
from mcp_memory.runtime.batching import Batcher


class Server:
    """A `run` whose batches are recorded and held until the test releases them."""

    def __init__(self, *, hold: bool = True) -> None:
        self.batches: list[list[str]] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        if not hold:
            self.release.set()

    async def run(self, requests: list[str]) -> list[str]:
        self.batches.append(list(requests))
        self.started.set()
        await self.release.wait()
        if "poison" in requests:
            raise StoreError("the store failed during query")
        return [f"answer to {request}" for request in requests]


async def let_run() -> None:
    for _ in range(5):  # enough loop turns for every ready task to reach its next await
        await asyncio.sleep(0)


async def test_a_lone_request_is_served_at_once_by_itself():
    server = Server(hold=False)
    batcher = Batcher(server.run, max_batch=8)

    assert await batcher.submit("q1") == "answer to q1"
    assert server.batches == [["q1"]]


async def test_requests_arriving_during_a_batch_are_served_together_in_order():
    server = Server()
    batcher = Batcher(server.run, max_batch=8)

    first = asyncio.create_task(batcher.submit("q0"))
    await server.started.wait()
    later = [asyncio.create_task(batcher.submit(f"q{i}")) for i in range(1, 6)]
    await let_run()
    server.release.set()

    assert await first == "answer to q0"
    assert await asyncio.gather(*later) == [f"answer to q{i}" for i in range(1, 6)]
    assert server.batches == [["q0"], ["q1", "q2", "q3", "q4", "q5"]]


async def test_a_batch_never_holds_more_than_the_maximum():
    server = Server()
    batcher = Batcher(server.run, max_batch=2)

    first = asyncio.create_task(batcher.submit("q0"))
    await server.started.wait()
    later = [asyncio.create_task(batcher.submit(f"q{i}")) for i in range(1, 6)]
    await let_run()
    server.release.set()
    await asyncio.gather(first, *later)

    assert server.batches == [["q0"], ["q1", "q2"], ["q3", "q4"], ["q5"]]


async def test_with_two_lanes_waiting_requests_are_shared_between_two_batches():
    server = Server()
    batcher = Batcher(server.run, max_batch=8, parallel=2)

    waiting = [asyncio.create_task(batcher.submit(f"q{i}")) for i in range(6)]
    await let_run()
    assert server.batches == [["q0", "q1", "q2"], ["q3", "q4", "q5"]]  # both in flight at once
    server.release.set()

    assert await asyncio.gather(*waiting) == [f"answer to q{i}" for i in range(6)]


async def test_a_failed_batch_fails_its_own_requests_and_the_next_batch_is_served():
    server = Server()
    batcher = Batcher(server.run, max_batch=2)

    first = asyncio.create_task(batcher.submit("q0"))
    await server.started.wait()
    failing = [asyncio.create_task(batcher.submit(r)) for r in ("q1", "poison")]
    fine = asyncio.create_task(batcher.submit("q3"))
    await let_run()
    server.release.set()
    results = await asyncio.gather(first, *failing, fine, return_exceptions=True)

    assert results[0] == "answer to q0" and results[3] == "answer to q3"
    assert all(isinstance(r, StoreError) for r in results[1:3])


async def test_a_caller_that_stops_waiting_does_not_disturb_the_others():
    server = Server()
    batcher = Batcher(server.run, max_batch=8)

    first = asyncio.create_task(batcher.submit("q0"))
    await server.started.wait()
    leaving = asyncio.create_task(batcher.submit("gone"))
    staying = asyncio.create_task(batcher.submit("q2"))
    await let_run()
    leaving.cancel()
    server.release.set()

    assert await staying == "answer to q2"
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert await first == "answer to q0"
    assert ["gone"] not in server.batches and "gone" not in server.batches[-1]


def test_a_batcher_serves_a_second_event_loop_too():
    # A CLI may call asyncio.run more than once with one store.
    server = Server(hold=False)
    batcher = Batcher(server.run, max_batch=8)

    assert asyncio.run(batcher.submit("first loop")) == "answer to first loop"
    assert asyncio.run(batcher.submit("second loop")) == "answer to second loop"


@pytest.mark.parametrize("parallel", [1, 2])
async def test_a_request_made_the_moment_the_last_answer_arrives_is_served(parallel):
    # The caller whose answer was just set asks again in the same step, before the
    # finished drain task's callbacks have run: it must still get a drain task.
    server = Server(hold=False)
    batcher = Batcher(server.run, max_batch=8, parallel=parallel)

    async with asyncio.timeout(5):  # no extra task: a hang fails here, not in a wrapper
        first = await asyncio.gather(*(batcher.submit(f"q{i}") for i in range(parallel)))
        again = await batcher.submit("next")
        and_again = await batcher.submit("last")

    assert first == [f"answer to q{i}" for i in range(parallel)]
    assert (again, and_again) == ("answer to next", "answer to last")
