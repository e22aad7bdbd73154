"""The Bedrock embedder through botocore's Stubber (docs/embedders.md).

The Stubber checks every request against the real bedrock-runtime service
model, so a parameter we misspell or mistype fails here as it would in AWS.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import boto3
import numpy as np
import pytest
from botocore.awsrequest import AWSResponse
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders.bedrock import BedrockEmbedder
from mcp_memory.embedders.fake import fake_vector

MODEL = "amazon.titan-embed-text-v2:0"
#: One session for the module: it caches the service models, so each client is cheap.
SESSION = boto3.session.Session()


def runtime_client():
    return SESSION.client(
        "bedrock-runtime", region_name="eu-west-1", aws_access_key_id="AKIDTEST", aws_secret_access_key="secret"
    )


@pytest.fixture
def client():
    client = runtime_client()
    yield client
    client.close()


@pytest.fixture
def stub(client) -> Iterator[Stubber]:
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def body(payload) -> dict:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def expect(stub: Stubber, payload, text: str | None = None, dim: int = 4) -> None:
    request = {"modelId": MODEL, "contentType": "application/json", "accept": "application/json", "body": ANY}
    if text is not None:
        request["body"] = json.dumps({"inputText": text, "dimensions": dim, "normalize": True})
    stub.add_response("invoke_model", body(payload), request)


async def embed(client, texts: list[str], dim: int = 4, **kwargs) -> np.ndarray:
    embedder = BedrockEmbedder(MODEL, dim, "eu-west-1", client=client, **kwargs)
    try:
        return await embedder.embed(texts)
    finally:
        await embedder.close()


async def refusal(client, texts: list[str] | None = None, dim: int = 4) -> str:
    with pytest.raises(EmbeddingError) as refused:
        await embed(client, texts or ["hello"], dim)
    return str(refused.value)


async def test_each_text_is_one_invoke_model_with_input_text_dimensions_and_normalize(client, stub) -> None:
    expect(stub, {"embedding": [0.5, 0.5, 0.5, 0.5], "inputTextTokenCount": 3}, text="deploys drain streams")

    rows = await embed(client, ["deploys drain streams"])

    assert rows.shape == (1, 4) and rows.dtype == np.float32
    np.testing.assert_array_equal(rows[0], [0.5, 0.5, 0.5, 0.5])


async def test_a_batch_keeps_input_order(client, stub) -> None:
    for i in range(3):
        expect(stub, {"embedding": [1.0 if k == i else 0.0 for k in range(4)]}, text=f"text {i}")

    rows = await embed(client, ["text 0", "text 1", "text 2"], concurrency=1)

    assert [int(np.argmax(row)) for row in rows] == [0, 1, 2]


async def test_a_batch_runs_several_calls_at_once_and_still_keeps_input_order(client) -> None:
    # Each answer is computed from the request it answers, so the order of the
    # concurrent calls cannot matter; botocore still validates every request.
    seen: list[str] = []

    def answer(params, **_):
        text = json.loads(params["body"])["inputText"]
        seen.append(text)
        return AWSResponse("https://bedrock", 200, {}, None), body(
            {"embedding": [float(x) for x in fake_vector(text, 4)]}
        )

    client.meta.events.register("before-call.bedrock-runtime.InvokeModel", answer)
    texts = [f"note {i} about caches" for i in range(10)]

    rows = await embed(client, texts, concurrency=4)

    assert sorted(seen) == sorted(texts)
    for row, text in zip(rows, texts):
        np.testing.assert_allclose(row, fake_vector(text, 4), rtol=1e-6)


@pytest.mark.parametrize(
    ("code", "status", "message"),
    [
        ("AccessDeniedException", 403, "You don't have access to the model with the specified model ID."),
        ("ValidationException", 400, "Malformed input request: expected maxLength: 50000"),
        ("ResourceNotFoundException", 404, "Could not resolve the foundation model."),
        ("ModelTimeoutException", 408, "Model has timed out in processing the request."),
    ],
)
async def test_a_failed_call_says_bedrock_could_not_embed_the_text_and_why(client, stub, code, status, message) -> None:
    stub.add_client_error("invoke_model", service_error_code=code, service_message=message, http_status_code=status)

    refused = await refusal(client)

    assert refused.startswith("Bedrock could not embed the text — ")
    assert code in refused and message in refused


async def test_a_validation_error_quoting_the_text_keeps_its_reason_but_not_the_text(client, stub) -> None:
    text = "Deploys drain in-flight streams before the pod exits, always"
    stub.add_client_error(
        "invoke_model",
        service_error_code="ValidationException",
        service_message=f"Malformed input request: {text[:45]}... is too long",
        http_status_code=400,
    )

    refused = await refusal(client, [text])

    assert refused == (
        "Bedrock could not embed the text — An error occurred (ValidationException) when calling the "
        "InvokeModel operation: Malformed input request: <input>... is too long"
    )


async def test_missing_credentials_are_reported_as_a_bedrock_failure() -> None:
    from botocore.exceptions import NoCredentialsError

    class NoCredentials:
        def invoke_model(self, **kwargs):
            raise NoCredentialsError()

    assert await refusal(NoCredentials()) == "Bedrock could not embed the text — Unable to locate credentials"


@pytest.mark.parametrize(
    "payload",
    [b"not json", {"embeddingsByType": {}}, [0.1, 0.2], {"embedding": "0.1,0.2"}],
    ids=["not-json", "no-embedding", "a-list", "a-string"],
)
async def test_an_answer_without_an_embedding_says_so(client, stub, payload) -> None:
    expect(stub, payload)
    assert await refusal(client) == "the embedding service returned a response with no embedding in it"


async def test_a_vector_of_the_wrong_width_names_the_model(client, stub) -> None:
    expect(stub, {"embedding": [0.1, 0.2]})

    message = await refusal(client)

    assert f'model "{MODEL}" returned 2 dimensions but the vector index expects 4' in message
    assert "cannot be changed after creation" in message


async def test_an_all_zero_vector_is_refused(client, stub) -> None:
    expect(stub, {"embedding": [0.0, 0.0, 0.0, 0.0]})
    assert await refusal(client) == "the embedding service returned an all-zero vector"


async def test_the_client_is_built_lazily_for_the_configured_region_with_bounded_time() -> None:
    embedder = BedrockEmbedder(MODEL, 1024, "eu-central-1")
    try:
        assert embedder._aws._client is None  # nothing built by the constructor
        client = embedder._aws.client()
        assert client.meta.region_name == "eu-central-1"
        assert client.meta.service_model.service_name == "bedrock-runtime"
        assert client.meta.config.read_timeout == 10
        assert client.meta.config.retries == {"mode": "standard", "total_max_attempts": 3}
        assert embedder._aws.client() is client
    finally:
        await embedder.close()


async def test_a_closed_embedder_refuses_to_embed(client) -> None:
    embedder = BedrockEmbedder(MODEL, 4, "eu-west-1", client=client)
    await embedder.close()

    with pytest.raises(EmbeddingError, match="the Bedrock embedder has been closed"):
        await embedder.embed(["hello"])
