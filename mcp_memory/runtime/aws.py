"""One boto3 client, made on first use, and the worker threads its blocking calls run on.

Shared by the Bedrock embedder and the search_docs retriever. Why this shape:

- **Lazy.** Importing this module imports neither boto3 nor botocore; the
  client (which loads the service model and resolves credentials) is built on
  the first call, in a worker thread, so `tools/list` answers at once and a
  PostgreSQL or SQLite deployment never loads AWS code.
- **Off the event loop, bounded.** boto3 blocks; every call runs on a small
  dedicated pool, which is also the concurrency limit (a batch of 64 texts is
  at most `workers` InvokeModel calls in flight). A pool of our own, rather
  than the loop's default executor, is not tied to any one event loop and can
  be shut down by `close()`.
- **Bounded time.** botocore's defaults wait up to 60 s per read and retry in
  "legacy" mode; a tool call should fail in seconds, so reads time out after
  10 s and throttling or 5xx is retried in "standard" mode, 3 attempts in all.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp_memory import DISTRIBUTION
from mcp_memory.core.errors import StartupError

T = TypeVar("T")

CONNECT_TIMEOUT_S = 5
READ_TIMEOUT_S = 10
MAX_ATTEMPTS = 3
AWS_EXTRA_HINT = f"install the AWS extra: pip install '{DISTRIBUTION}[aws]'"


def require_boto3(what: str) -> None:
    """Refuse at start-up, naming the setting, when boto3 is not installed (without importing it)."""
    if importlib.util.find_spec("boto3") is None:
        raise StartupError(f"{what} needs boto3, which is not installed: {AWS_EXTRA_HINT}")


def new_client(
    service: str,
    region: str,
    *,
    read_timeout_s: float,
    retries: dict[str, Any],
    max_pool_connections: int,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    session: Any = None,
    endpoint_url: str | None = None,
    user_agent_appid: str | None = None,
) -> Any:
    """The one way this package builds a boto3 client: bounded timeouts, standard-mode
    retries, a pool as wide as the caller's concurrency. Credentials and endpoint
    overrides (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>) come from the standard AWS
    chain unless `endpoint_url` is given. `session` defaults to a new one: boto3's
    default session is not safe to share across threads."""
    import boto3
    from botocore.config import Config

    options: dict[str, Any] = {
        "connect_timeout": connect_timeout_s,
        "read_timeout": read_timeout_s,
        "retries": retries,
        "max_pool_connections": max_pool_connections,
    }
    if user_agent_appid is not None:
        options["user_agent_appid"] = user_agent_appid
    kwargs: dict[str, Any] = {"region_name": region, "config": Config(**options)}
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    return (session or boto3.session.Session()).client(service, **kwargs)


class Closed(Exception):
    """The client was closed; callers turn this into their own error."""


class LazyAwsClient:
    """A boto3 client for one service and region, and the threads that call it."""

    def __init__(
        self,
        service: str,
        region: str,
        *,
        client: Any = None,
        workers: int = 4,
        thread_name: str = "mcp-memory-aws",
    ) -> None:
        """`client` replaces the one that would be built (tests pass a stubbed client)."""
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.service = service
        self.region = region
        self.workers = workers
        self._client = client
        self._owns_client = client is None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name)
        self._closed = False

    def make_client(self) -> Any:
        """A new client with our timeouts and retries. Credentials and endpoint overrides
        (e.g. AWS_ENDPOINT_URL_BEDROCK_RUNTIME) come from the standard AWS chain."""
        return new_client(
            self.service,
            self.region,
            read_timeout_s=READ_TIMEOUT_S,
            retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
            max_pool_connections=max(10, self.workers),
        )

    def client(self) -> Any:
        """The client, built once by whichever worker thread gets here first."""
        with self._lock:
            if self._closed:
                raise Closed()
            if self._client is None:
                self._client = self.make_client()
            return self._client

    async def call(self, fn: Callable[[Any], T]) -> T:
        """Run `fn(client)` on a worker thread. Raises Closed after `close()`."""
        if self._closed:
            raise Closed()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, functools.partial(self._run, fn))
        except RuntimeError:
            if self._closed:  # shut down while we were scheduling
                raise Closed() from None
            raise

    def _run(self, fn: Callable[[Any], T]) -> T:
        return fn(self.client())

    async def close(self) -> None:
        """Refuse new calls, stop the threads and close the client's connections.

        Waits for nothing: a call already running finishes (or fails) on its own
        thread; a queued one is refused by `client()`.
        """
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        self._executor.shutdown(wait=False)
        if client is not None and self._owns_client:
            close = getattr(client, "close", None)
            if close is not None:
                close()
