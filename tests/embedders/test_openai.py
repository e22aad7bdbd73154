"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1 (docs/embedders.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import pytest

from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders.fake import fake_vector
from mcp_memory.embedders.openai import OpenAIEmbedder
from tests.support.standins import OpenAIStandIn

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
async def server() -> AsyncIterator[OpenAIStandIn]:
    stand_in = OpenAIStandIn(dim=8)
    await stand_in.start()
    yield stand_in
    await stand_in.stop()


class Sleeps:
    """Records the backoff instead of waiting it out."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def embedder(server: OpenAIStandIn, sleeps: Sleeps) -> AsyncIterator[OpenAIEmbedder]:
    embedder = OpenAIEmbedder(
        f"http://127.0.0.1:{server.port}/v1/", KEY, "nomic-embed-text", 8, sleep=sleeps, jitter=lambda: 0.0
    )
    yield embedder
    await embedder.close()


async def refusal(embedder: OpenAIEmbedder, texts: list[str] | None = None) -> str:
    with pytest.raises(EmbeddingError) as refused:
        await embedder.embed(texts or ["hello"])
    return str(refused.value)


# --------------------------------------------------------------------------- requests


async def test_one_text_is_posted_as_a_string_with_the_model_and_the_bearer_key(embedder, server) -> None:
    rows = await embedder.embed(["deploys drain streams"])

    [request] = server.received
    assert request.path == "/v1/embeddings"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.body == {"model": "nomic-embed-text", "input": "deploys drain streams"}
    assert rows.shape == (1, 8) and rows.dtype == np.float32
    np.testing.assert_allclose(rows[0], fake_vector("deploys drain streams", 8), rtol=1e-6)


async def test_many_texts_go_as_lists_of_at_most_64_per_request(embedder, server) -> None:
    texts = [f"memory number {i}" for i in range(130)]

    rows = await embedder.embed(texts)

    assert [len(r.body["input"]) for r in server.received] == [64, 64, 2]
    assert server.received[0].body["input"][:2] == ["memory number 0", "memory number 1"]
    assert rows.shape == (130, 8)
    np.testing.assert_allclose(rows[129], fake_vector("memory number 129", 8), rtol=1e-6)


async def test_answers_are_placed_by_their_index_not_their_position(sleeps) -> None:
    server = OpenAIStandIn(dim=8, reverse=True)
    base = await server.start()
    embedder = OpenAIEmbedder(f"{base}/v1", KEY, "m", 8, sleep=sleeps)
    try:
        rows = await embedder.embed(["alpha beta", "gamma delta", "epsilon zeta"])
    finally:
        await embedder.close()
        await server.stop()

    for row, text in zip(rows, ["alpha beta", "gamma delta", "epsilon zeta"]):
        np.testing.assert_allclose(row, fake_vector(text, 8), rtol=1e-6)


async def test_a_server_that_does_not_normalise_still_yields_unit_vectors_in_its_direction(embedder, server) -> None:
    raw = [30.0, 0.0, 40.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # norm 50, as some self-hosted servers answer
    server.answer(200, {"data": [{"index": 0, "embedding": raw}]})

    rows = await embedder.embed(["deploys drain streams"])

    np.testing.assert_allclose(rows[0], [0.6, 0.0, 0.8, 0, 0, 0, 0, 0], rtol=1e-6)


async def test_one_http_session_serves_every_call(embedder, server) -> None:
    await embedder.embed(["one"])
    session = embedder._session
    await embedder.embed(["two", "three"])

    assert embedder._session is session and session is not None and not session.closed
    await embedder.close()
    assert session.closed


async def test_nothing_is_sent_for_no_texts(embedder, server) -> None:
    assert (await embedder.embed([])).shape == (0, 8)
    assert server.received == []


async def test_a_closed_embedder_refuses_to_embed(embedder) -> None:
    await embedder.close()
    assert await refusal(embedder) == "the OpenAI-compatible embedder has been closed"


# --------------------------------------------------------------------------- errors


async def test_a_401_with_a_long_body_is_a_short_message_with_the_status_and_the_start_of_the_body(
    embedder, server
) -> None:
    server.answer(401, "Invalid API key. " + "x" * 1000)

    message = await refusal(embedder)

    assert message.startswith("the embedding service answered 401: Invalid API key. xxx")
    assert len(message) < 300
    assert message == "the embedding service answered 401: " + ("Invalid API key. " + "x" * 1000)[:200]
    assert len(server.received) == 1  # a 4xx is not retried


async def test_an_error_body_never_echoes_the_api_key(embedder, server) -> None:
    server.answer(400, {"error": f"bad request, headers were: authorization: Bearer {KEY}"})

    message = await refusal(embedder)

    assert message.startswith("the embedding service answered 400: ")
    assert KEY not in message and "Bearer ***" in message


async def test_an_error_without_a_body_names_only_the_status(embedder, server) -> None:
    server.answer(404, "")
    assert await refusal(embedder) == "the embedding service answered 404"


async def test_a_429_is_tried_again_and_then_succeeds(embedder, server, sleeps) -> None:
    server.answer(429, {"error": "slow down"})

    rows = await embedder.embed(["hello"])

    assert rows.shape == (1, 8)
    assert len(server.received) == 2
    assert sleeps.waits == [0.25]  # base 0.5 s, jitter at its lowest


async def test_a_small_retry_after_is_honoured(embedder, server, sleeps) -> None:
    server.answer(429, "busy", headers={"Retry-After": "2"})
    server.answer(503, "busy", headers={"Retry-After": "0.5"})

    await embedder.embed(["hello"])

    assert sleeps.waits == [2.0, 0.5]


async def test_a_long_retry_after_fails_at_once_with_the_status(embedder, server, sleeps) -> None:
    server.answer(429, "come back in a minute", headers={"Retry-After": "60"})

    assert await refusal(embedder) == "the embedding service answered 429: come back in a minute"
    assert sleeps.waits == [] and len(server.received) == 1


async def test_5xx_is_tried_three_times_with_growing_backoff_then_reported(embedder, server, sleeps) -> None:
    for _ in range(3):
        server.answer(502, "<html>\n  <body>Bad Gateway</body>\n</html>")

    message = await refusal(embedder)

    assert message == "the embedding service answered 502: <html> <body>Bad Gateway</body> </html>"
    assert len(server.received) == 3
    assert sleeps.waits == [0.25, 0.5]


async def test_a_server_that_does_not_answer_times_out_without_a_retry(server, sleeps) -> None:
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{server.port}/v1", KEY, "m", 8, timeout=0.05, sleep=sleeps)
    server.hang()
    try:
        assert await refusal(embedder) == "the embedding service did not respond within 50ms"
    finally:
        await embedder.close()
    assert len(server.received) == 1 and sleeps.waits == []


async def test_the_default_timeout_is_ten_seconds_per_attempt() -> None:
    embedder = OpenAIEmbedder("http://127.0.0.1:9/v1", KEY)
    assert embedder.timeout == 10.0 and embedder.max_attempts == 3
    await embedder.close()


async def test_an_unreachable_server_is_reported_after_the_bounded_retries(sleeps) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", KEY, "m", 8, sleep=sleeps, jitter=lambda: 0.0)
    try:
        message = await refusal(embedder)
    finally:
        await embedder.close()
    assert message.startswith("could not reach the embedding service — ")
    assert f"127.0.0.1:{port}" in message
    assert len(sleeps.waits) == 2


@pytest.mark.parametrize(
    "body",
    ["this is not json", "[1, 2, 3]", {"data": []}, {"data": [{"index": 0}]}, {"data": [{"embedding": "0.1,0.2"}]}, {}],
    ids=["not-json", "a-list", "empty-data", "no-embedding", "string-embedding", "no-data"],
)
async def test_an_answer_without_a_usable_embedding_says_so(embedder, server, body) -> None:
    server.answer(200, body)
    assert await refusal(embedder) == "the embedding service returned a response with no embedding in it"


async def test_a_vector_of_the_wrong_width_names_the_model_and_how_to_fix_it(embedder, server) -> None:
    server.answer(200, {"data": [{"index": 0, "embedding": [0.1, 0.2]}]})

    message = await refusal(embedder)

    assert 'model "nomic-embed-text" returned 2 dimensions but the vector index expects 8' in message
    assert "cannot be changed after creation" in message


async def test_an_all_zero_vector_is_refused(embedder, server) -> None:
    server.answer(200, {"data": [{"index": 0, "embedding": [0.0] * 8}]})
    assert await refusal(embedder) == "the embedding service returned an all-zero vector"


async def test_a_batch_answer_must_hold_one_embedding_per_text(embedder, server) -> None:
    server.answer(200, {"data": [{"index": 0, "embedding": [0.1] * 8}]})
    assert await refusal(embedder, ["a", "b"]) == "the embedding service returned 1 embeddings for 2 texts"


async def test_repeated_indexes_are_refused(embedder, server) -> None:
    server.answer(200, {"data": [{"index": 0, "embedding": [0.1] * 8}, {"index": 0, "embedding": [0.2] * 8}]})
    assert "missing or repeated indexes" in await refusal(embedder, ["a", "b"])


async def test_the_repr_never_shows_the_key() -> None:
    embedder = OpenAIEmbedder("https://llm.example/v1", KEY)
    assert KEY not in repr(embedder) and "https://llm.example/v1/embeddings" in repr(embedder)
    await embedder.close()
