"""The Bedrock embedder: Amazon Titan Text Embeddings V2 through InvokeModel (docs/embedders.md).

Why it is shaped this way:

- **No secret to mount.** A pod embeds with its own AWS role, in the same
  region as its vector bucket (`AWS_REGION`).
- **Lazy.** Importing this module imports neither boto3 nor botocore; the
  client is built on the first `embed`, on a worker thread (mcp_memory/runtime/aws.py).
- **One text per call.** Titan V2 takes one `inputText`, so a batch is one
  InvokeModel per text, `concurrency` at a time on our own worker threads;
  the rows come back in input order.
- **Errors as the reference words them.** Any failure of the call is
  "Bedrock could not embed the text — <botocore's message>" (botocore names the
  error code, e.g. AccessDeniedException, and never the credentials), with any
  echo of the text sent replaced by `<input>` (core/echo.py); an
  unreadable answer is "no embedding in it"; every vector passes the common
  checks (shape, width, not all zeros).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from mcp_memory.core.echo import strip_echoes
from mcp_memory.core.errors import EmbeddingError
from mcp_memory.embedders.base import Embedder, check_vector, check_vectors
from mcp_memory.runtime.aws import AwsClient, Closed

DEFAULT_MODEL = "amazon.titan-embed-text-v2:0"
#: InvokeModel calls in flight for one batch (Bedrock's per-account quotas are the real limit).
CONCURRENCY = 4


class BedrockEmbedder(Embedder):
    """InvokeModel with `{"inputText", "dimensions", "normalize": true}` per text."""

    provider = "bedrock"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        dim: int = 1024,
        region: str = "ap-northeast-2",
        *,
        client: Any = None,
        concurrency: int = CONCURRENCY,
    ) -> None:
        """Cheap: no client is built until the first `embed`. `client` replaces the
        bedrock-runtime client that would be built (tests pass a stubbed one)."""
        self.model = model
        self.dim = dim
        self.region = region
        self._aws = AwsClient(
            "bedrock-runtime", region, client=client, workers=concurrency, thread_name="mcp-memory-bedrock"
        )

    def __repr__(self) -> str:
        return f"BedrockEmbedder(model={self.model!r}, dim={self.dim}, region={self.region!r})"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One checked float32 row per text, in input order."""
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be strings, got {type(text).__name__}")
        rows: list[np.ndarray] = []
        # A window at a time, so another caller's single query waits for one window,
        # not behind every text of a bulk call in the worker queue.
        for start in range(0, len(texts), self._aws.workers):
            window = texts[start : start + self._aws.workers]
            rows += await asyncio.gather(*(self._embed_one(text) for text in window))
        return check_vectors(rows, self.model, self.dim, len(texts))

    async def _embed_one(self, text: str) -> np.ndarray:
        body = json.dumps({"inputText": text, "dimensions": self.dim, "normalize": True})
        try:
            raw = await self._aws.call("InvokeModel", lambda client: self._invoke(client, body))
        except Closed:
            raise EmbeddingError("the Bedrock embedder has been closed") from None
        except EmbeddingError:
            raise
        except Exception as exc:  # botocore ClientError / BotoCoreError: the message names the cause
            # botocore quotes a refused input back in a ValidationException: never pass that on
            raise EmbeddingError(f"Bedrock could not embed the text — {strip_echoes(_message(exc), [text])}") from None
        try:
            embedding = json.loads(raw).get("embedding")
        except (ValueError, AttributeError):  # not JSON, or not an object: treated as missing
            embedding = None
        return check_vector(embedding, self.model, self.dim)

    def _invoke(self, client: Any, body: str) -> bytes:
        response = client.invoke_model(
            modelId=self.model, contentType="application/json", accept="application/json", body=body
        )
        stream = response["body"]
        try:
            return stream.read()
        finally:
            stream.close()

    async def close(self) -> None:
        """Refuse later calls and release the client's connections and threads."""
        await self._aws.close()


def _message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
