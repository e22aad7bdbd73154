"""Concurrent small calls to the local embedder share model calls (micro-batching),
and nobody can tell from the answers: same vectors, same order, own errors only.

The model is held on purpose with a gate around the real runtime, so which calls
end up batched together is decided by the test, not by timing.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders.local.embedder import LocalEmbedder

#: A guard against a deadlock hanging the suite; never a wait for something to happen.
DEADLINE_S = 60


class GatedRuntime:
    """The real MiniLM runtime, recording each model call's texts; the first call can be
    held at a gate, and a text containing "poison" fails the whole call it is in."""

    def __init__(self, runtime, *, hold_first: bool) -> None:
        self.runtime = runtime
        self.calls: list[list[str]] = []
        self.entered = threading.Event()
        self.gate = threading.Event()
        if not hold_first:
            self.gate.set()

    def tokenize(self, texts):
        texts = list(texts)
        self.calls.append(texts)
        if len(self.calls) == 1:
            self.entered.set()
            assert self.gate.wait(DEADLINE_S), "the test never opened the gate"
        if any("poison" in text for text in texts):
            raise EmbeddingError("the local tokenizer could not split the text (poisoned)")
        return self.runtime.tokenize(texts)

    def embed(self, batch):
        return self.runtime.embed(batch)

    @property
    def batch_sizes(self) -> list[int]:
        return [len(texts) for texts in self.calls]


async def gated(embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch, *, hold_first: bool = True) -> GatedRuntime:
    await embedder.warm_up()
    runtime = GatedRuntime(embedder._runtime, hold_first=hold_first)
    monkeypatch.setattr(embedder, "_runtime", runtime)
    return runtime


async def hold_the_worker(embedder: LocalEmbedder, runtime: GatedRuntime, text: str) -> asyncio.Task:
    """Start one call and return once the worker is inside the model with it."""
    first = asyncio.create_task(embedder.embed([text]))
    assert await asyncio.to_thread(runtime.entered.wait, DEADLINE_S)
    return first


async def queue_calls(embedder: LocalEmbedder, requests: list[list[str]]) -> list[asyncio.Task]:
    tasks = [asyncio.create_task(embedder.embed(texts)) for texts in requests]
    await asyncio.sleep(0)  # each task runs up to its await: every call is queued, none has run
    return tasks


async def settle(*tasks: asyncio.Task) -> list:
    return await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), DEADLINE_S)


async def singles(embedder: LocalEmbedder, texts: list[str]) -> np.ndarray:
    return np.stack([(await embedder.embed([text]))[0] for text in texts])


async def test_a_lone_call_runs_at_once_by_itself(local_embedder, monkeypatch):
    runtime = await gated(local_embedder, monkeypatch, hold_first=False)

    (vector,) = await local_embedder.embed(["Deploys are frozen on Fridays."])

    assert runtime.calls == [["Deploys are frozen on Fridays."]]
    assert vector.shape == (384,)


async def test_calls_queued_while_the_model_is_busy_run_as_one_batch_with_the_same_vectors(local_embedder, monkeypatch):
    requests = [[f"fact {i}: the cache is warmed before traffic shifts" + " again" * (i % 5)] for i in range(15)]
    requests[3] = ["a two-text call, first half", "and its second, longer half about rotating keys"]
    expected = await singles(local_embedder, [text for texts in requests for text in texts])
    runtime = await gated(local_embedder, monkeypatch)

    first = await hold_the_worker(local_embedder, runtime, "the call that holds the model")
    queued = await queue_calls(local_embedder, requests)
    runtime.gate.set()
    results = await settle(first, *queued)

    assert runtime.batch_sizes == [1, 16]
    got = np.concatenate(results[1:])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert [len(rows) for rows in results[1:]] == [len(texts) for texts in requests]


async def test_a_batch_never_holds_more_texts_than_the_batch_size(monkeypatch):
    embedder = LocalEmbedder(batch_size=4)
    try:
        runtime = await gated(embedder, monkeypatch)
        first = await hold_the_worker(embedder, runtime, "holding")
        queued = await queue_calls(
            embedder, [["one", "two"], ["three"], ["four", "five"], ["six"], ["seven"], ["eight"]]
        )
        runtime.gate.set()
        results = await settle(first, *queued)
    finally:
        await embedder.close()

    # In arrival order, never splitting a call: 2+1, 2+1+1, 1.
    assert runtime.calls[1:] == [["one", "two", "three"], ["four", "five", "six", "seven"], ["eight"]]
    assert all(isinstance(rows, np.ndarray) for rows in results)


async def test_a_failing_batch_fails_only_the_calls_whose_texts_fail(local_embedder, monkeypatch):
    expected = await singles(local_embedder, ["the backup runs at 02:00", "keys rotate every 90 days"])
    runtime = await gated(local_embedder, monkeypatch)

    first = await hold_the_worker(local_embedder, runtime, "holding")
    queued = await queue_calls(
        local_embedder, [["the backup runs at 02:00"], ["poison"], ["keys rotate every 90 days"]]
    )
    runtime.gate.set()
    _, good, bad, also_good = await settle(first, *queued)

    assert isinstance(bad, EmbeddingError) and "poisoned" in str(bad)
    np.testing.assert_allclose(np.concatenate([good, also_good]), expected, atol=1e-5)
    # The joint batch failed, then each call ran alone.
    assert runtime.batch_sizes[1:] == [3, 1, 1, 1]
    (after,) = await local_embedder.embed(["the embedder still works"])
    assert after.shape == (384,)


async def test_a_cancelled_call_does_not_disturb_the_calls_batched_with_it(local_embedder, monkeypatch):
    runtime = await gated(local_embedder, monkeypatch)

    first = await hold_the_worker(local_embedder, runtime, "holding")
    leaving, staying = await queue_calls(local_embedder, [["never mind"], ["still wanted"]])
    leaving.cancel()
    runtime.gate.set()
    results = await settle(first, leaving, staying)

    assert isinstance(results[1], asyncio.CancelledError)
    assert results[2].shape == (1, 384)
    assert ["never mind"] not in runtime.calls and ["still wanted"] in runtime.calls


async def test_closing_lets_the_running_batch_finish_and_fails_the_queued_calls_cleanly(monkeypatch):
    embedder = LocalEmbedder()
    runtime = await gated(embedder, monkeypatch)

    first = await hold_the_worker(embedder, runtime, "holding")
    queued = await queue_calls(embedder, [["queued one"], ["queued two"]])
    await embedder.close()
    runtime.gate.set()
    running, *waiting = await settle(first, *queued)

    assert running.shape == (1, 384)
    assert all(isinstance(error, EmbeddingError) and "closed" in str(error) for error in waiting)
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed(["after close"])


async def test_many_concurrent_callers_each_get_their_own_vectors(local_embedder):
    texts = [f"memory {i}: " + "the release train leaves on Thursday " * (i % 4) for i in range(40)]
    expected = await singles(local_embedder, texts)

    results = await asyncio.wait_for(asyncio.gather(*(local_embedder.embed([text]) for text in texts)), DEADLINE_S)

    np.testing.assert_allclose(np.concatenate(results), expected, atol=1e-5)
