"""The OpenAI-compatible embedder: `POST <EMBEDDING_BASE_URL>/embeddings` (docs/embedders.md).

Speaks the embeddings API that OpenAI, vLLM, Ollama (`/v1`), TEI and most
in-house model servers share. Why it is shaped this way:

- **Lazy, one session.** Importing this module does not import aiohttp. The
  HTTP session (and its connection pool) is made on the first `embed`, inside
  the running loop, and reused by every later call; `close()` closes it.
- **Batched.** One text is sent as `"input": "<text>"`, exactly as the
  reference does; several go as a list, 64 to a request, and the answer is
  mapped back by each item's `index`, so a server that reorders is still right.
- **Bounded time.** Each attempt has its own 10 s limit. A 429, a 5xx or a
  dropped connection is tried again, at most 3 attempts in all, after an
  exponential backoff with jitter, or after the server's `Retry-After` when
  that is 5 s or less (a longer one fails at once: the caller is waiting). A
  timeout is not retried: a server that needed 10 s once is overloaded, and
  three of them would keep a model waiting half a minute.
- **No secret and no input in an error.** Errors carry the reference texts:
  the status and the first 200 characters of the body, with every piece of
  the API key (4 characters or more) replaced by `***` and every echo of the
  texts sent (pieces of 8 characters or more, JSON-escaped or not) by
  `<input>` first: a validation error often quotes the request back
  (core/echo.py).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mcp_memory.core.echo import SECRET_PIECE, scrub
from mcp_memory.core.errors import EmbeddingError
from mcp_memory.core.version import __version__
from mcp_memory.embedders.base import Embedder, check_vectors, count_mismatch

if TYPE_CHECKING:  # pragma: no cover - typing only
    import aiohttp

DEFAULT_MODEL = "text-embedding-3-small"
TIMEOUT_S = 10.0
MAX_ATTEMPTS = 3
BATCH_SIZE = 64
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 4.0
MAX_RETRY_AFTER_S = 5.0
BODY_EXCERPT_CHARS = 200
#: Read at most this much of an error body: enough to scrub the key from the part we show.
ERROR_BODY_BYTES = 16_384
#: Answers larger than this are parsed on a worker thread (64 × 4096 floats is ~5 MB of JSON).
PARSE_OFF_LOOP_BYTES = 1 << 20

NO_EMBEDDING = "the embedding service returned a response with no embedding in it"


class _Retry(Exception):
    """An attempt failed in a way another attempt may fix."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class OpenAIEmbedder(Embedder):
    """Embeddings from any server that speaks OpenAI's `/embeddings` API."""

    provider = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str = DEFAULT_MODEL,
        dim: int = 1536,
        *,
        timeout: float = TIMEOUT_S,
        max_attempts: int = MAX_ATTEMPTS,
        batch_size: int = BATCH_SIZE,
        backoff_base: float = BACKOFF_BASE_S,
        backoff_cap: float = BACKOFF_CAP_S,
        max_retry_after: float = MAX_RETRY_AFTER_S,
        sleep: Callable[[float], Awaitable[object]] | None = None,
        jitter: Callable[[], float] | None = None,
    ) -> None:
        """Cheap: nothing is imported or opened until the first `embed`.

        `base_url` is validated by config/embedding.py (http(s), no credentials, query or
        fragment). `sleep` and `jitter` (a float in [0, 1)) are injectable so
        tests can see the backoff without waiting for it.
        """
        if max_attempts < 1 or batch_size < 1 or timeout <= 0:
            raise ValueError("max_attempts and batch_size must be at least 1, timeout above 0")
        self.model = model
        self.dim = dim
        self.url = base_url.rstrip("/") + "/embeddings"
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.batch_size = batch_size
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.max_retry_after = max_retry_after
        self._sleep = sleep or asyncio.sleep
        self._jitter = jitter or random.random
        self._api_key = api_key
        self._secrets = [api_key] if api_key else []
        self._headers = {
            "content-type": "application/json",
            "authorization": f"Bearer {api_key}",
            "user-agent": f"mcp-memory/{__version__}",
        }
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def __repr__(self) -> str:  # never the key
        return f"OpenAIEmbedder(url={self.url!r}, model={self.model!r}, dim={self.dim})"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One checked float32 row per text, in input order."""
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be strings, got {type(text).__name__}")
        rows: list[Any] = []
        for start in range(0, len(texts), self.batch_size):
            rows += await self._embed_batch(texts[start : start + self.batch_size])
        return check_vectors(rows, self.model, self.dim, len(texts))

    async def _embed_batch(self, texts: list[str]) -> list[Any]:
        body = json.dumps(
            {"model": self.model, "input": texts[0] if len(texts) == 1 else texts}, ensure_ascii=False
        ).encode("utf-8")
        attempt = 1
        while True:
            try:
                return _vectors(await self._post(body, texts), len(texts))
            except _Retry as failed:
                delay = self._delay(attempt, failed.retry_after)
                if attempt >= self.max_attempts or delay is None:
                    raise EmbeddingError(failed.message) from None
            await self._sleep(delay)
            attempt += 1

    def _delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds before the next attempt; None when the server asked for too long a wait."""
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
        return ceiling * (0.5 + self._jitter() / 2)

    async def _post(self, body: bytes, texts: Sequence[str]) -> Any:
        """One attempt: the parsed JSON answer, or EmbeddingError / _Retry with the reference text."""
        import aiohttp

        session = self._session_for_this_loop()
        try:
            async with session.post(self.url, data=body, headers=self._headers) as response:
                if 200 <= response.status < 300:
                    return await _parse(await response.read())
                excerpt = await self._excerpt(response, texts)
                message = f"the embedding service answered {response.status}" + (f": {excerpt}" if excerpt else "")
                if response.status == 429 or response.status >= 500:
                    raise _Retry(message, _retry_after(response.headers.get("Retry-After")))
                raise EmbeddingError(message)
        except TimeoutError:
            raise EmbeddingError(
                f"the embedding service did not respond within {round(self.timeout * 1000)}ms"
            ) from None
        except aiohttp.ClientConnectionError as exc:  # refused, reset, dropped keep-alive: worth another try
            raise _Retry(f"could not reach the embedding service — {self._scrub(_message(exc), texts)}") from None
        except aiohttp.ClientError as exc:  # e.g. the answer was cut off mid-body
            raise EmbeddingError(
                f"could not reach the embedding service — {self._scrub(_message(exc), texts)}"
            ) from None

    async def _excerpt(self, response: aiohttp.ClientResponse, texts: Sequence[str]) -> str:
        """The start of an error body on one line, the key and the texts scrubbed out, cut at 200 characters."""
        import aiohttp

        raw = b""
        try:
            while len(raw) < ERROR_BODY_BYTES:
                chunk = await response.content.read(ERROR_BODY_BYTES - len(raw))
                if not chunk:
                    break
                raw += chunk
        except aiohttp.ClientError:
            pass  # the status alone still says what happened
        return self._scrub(raw.decode("utf-8", errors="replace"), texts)[:BODY_EXCERPT_CHARS]

    def _scrub(self, text: str, texts: Sequence[str]) -> str:
        """`text` on one line without an echo of `texts`, then of the key (see core/echo.py)."""
        return scrub(text, texts, self._secrets, secret_piece=SECRET_PIECE)

    def _session_for_this_loop(self) -> aiohttp.ClientSession:
        """The shared session, made on first use inside the running loop."""
        if self._closed:
            raise EmbeddingError("the OpenAI-compatible embedder has been closed")
        loop = asyncio.get_running_loop()
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("an OpenAIEmbedder's HTTP session serves one event loop; open one embedder per loop")
        return self._session

    async def close(self) -> None:
        """Close the HTTP session; later calls are refused."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()


async def _parse(raw: bytes) -> Any:
    """The JSON answer; anything unparseable counts as "no embedding in it", as in the reference."""
    try:
        if len(raw) > PARSE_OFF_LOOP_BYTES:
            return await asyncio.to_thread(json.loads, raw)
        return json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: an answer nested thousands deep
        return None


def _vectors(payload: Any, expected: int) -> list[Any]:
    """`data[*].embedding` in input order, placed by each item's `index` (position when absent)."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or not data:
        raise EmbeddingError(NO_EMBEDDING)
    if len(data) != expected:
        raise count_mismatch(len(data), expected)
    vectors: list[Any] = [None] * expected
    placed = [False] * expected
    for position, item in enumerate(data):
        if not isinstance(item, dict):
            raise EmbeddingError(NO_EMBEDDING)
        index = item.get("index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected or placed[index]:
            raise EmbeddingError(
                f"the embedding service returned embeddings with missing or repeated indexes for {expected} texts"
            )
        vectors[index] = item.get("embedding")
        placed[index] = True
    return vectors


def _retry_after(value: str | None) -> float | None:
    """`Retry-After` in seconds; an HTTP date (or nonsense) leaves the choice to our backoff."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 and seconds == seconds else None


def _message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
