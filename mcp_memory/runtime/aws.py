"""The one way this package calls AWS: a boto3 client, and the bounded pool its calls run on.

Every AWS call goes through `AwsClient.call`: the S3 and S3 Vectors stores, the
Bedrock embedder and the search_docs retriever. Why this shape:

- **Lazy.** Importing this module imports neither boto3 nor botocore. A client
  given by the caller (the S3 stores build theirs at start-up, to check the
  index) is used as is; otherwise it is built on the first call, in a worker
  thread, so `tools/list` answers at once and a PostgreSQL or SQLite
  deployment never loads AWS code.
- **Off the event loop, bounded.** boto3 blocks; every call runs on a pool of
  our own as wide as the client's connection pool, which is also the
  concurrency limit: no call waits inside botocore for a connection, and a
  burst queues here, where cancelling it means it is never sent. A pool of our
  own, rather than the loop's default executor, is not shared with unrelated
  blocking work, is not tied to any one event loop, and is shut down by `close()`.
- **Bounded time.** botocore's defaults wait up to 60 s per read and retry in
  "legacy" mode; a call should fail in seconds, so reads time out and
  throttling or 5xx is retried in "standard" mode (the two profiles below).
- **Errors in the caller's words.** A botocore error is handed to the
  caller's `errors` hook with the operation's name (the S3 stores turn it into
  an AwsError naming the call and AWS's code); without a hook it is raised as is.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp_memory.core.errors import StartupError
from mcp_memory.core.version import install_hint

T = TypeVar("T")

CONNECT_TIMEOUT_S = 5
AWS_EXTRA_HINT = f"install the AWS extra: {install_hint('aws')}"

#: Bedrock (embedding, documentation search): inside a tool call, so it fails in seconds;
#: 3 attempts in all.
READ_TIMEOUT_S = 10
MAX_ATTEMPTS = 3
BEDROCK_RETRIES: dict[str, Any] = {"mode": "standard", "total_max_attempts": MAX_ATTEMPTS}
#: S3 and S3 Vectors (the stores): a ListVectors page of 1,000 vectors with their data takes
#: longer than an embedding, so reads may take 30 s; 3 retries after the first attempt.
STORAGE_READ_TIMEOUT_S = 30
STORAGE_RETRIES: dict[str, Any] = {"mode": "standard", "max_attempts": 3}
#: A client's connection pool when none is given: botocore's own default.
DEFAULT_POOL = 10

#: A caller's hook: (operation, botocore's exception or Closed) → the exception to raise.
ErrorHook = Callable[[str, Exception], Exception]


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


def _pool_size(client: Any) -> int:
    """How many connections `client` keeps open at once (botocore's Config)."""
    size = getattr(getattr(getattr(client, "meta", None), "config", None), "max_pool_connections", None)
    return size if isinstance(size, int) and size >= 1 else DEFAULT_POOL


class AwsClient:
    """A boto3 client for one service, and the threads that call it (at most one per connection)."""

    def __init__(
        self,
        service: str,
        region: str | None = None,
        *,
        client: Any = None,
        owns_client: bool | None = None,
        workers: int | None = None,
        errors: ErrorHook | None = None,
        thread_name: str = "mcp-memory-aws",
    ) -> None:
        """`client`: use this one (the S3 stores' clients; tests pass stubbed ones) instead of
        building one for `region` on the first call. `owns_client`: `close()` closes it (by
        default only a client built here). `workers`: the pool's width, by default the
        client's connection pool. `errors`: how a botocore error (or Closed) is worded."""
        if client is None and region is None:
            raise ValueError("an AwsClient needs a client or a region to build one in")
        if workers is None:
            workers = _pool_size(client) if client is not None else 4
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.service = service
        self.region = region
        self.workers = workers
        self._client = client
        self._owns_client = client is None if owns_client is None else owns_client
        self._errors = errors
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=thread_name)
        self._closed = False

    def make_client(self) -> Any:
        """A new client with the Bedrock profile's timeouts and retries, a connection per worker."""
        return new_client(
            self.service,
            self.region or "",
            read_timeout_s=READ_TIMEOUT_S,
            retries=BEDROCK_RETRIES,
            max_pool_connections=max(DEFAULT_POOL, self.workers),
        )

    def client(self) -> Any:
        """The client, built once by whichever worker thread gets here first."""
        with self._lock:
            if self._closed:
                raise Closed()
            if self._client is None:
                self._client = self.make_client()
            return self._client

    async def call(self, operation: str, fn: Callable[[Any], T]) -> T:
        """`fn(client)` on a worker thread: `operation` (the API name, e.g. PutVectors) is what
        the error hook names. Raises Closed (or the hook's word for it) after `close()`.

        Cancelling the awaiting task while the call is queued means it is never sent; once
        it is running, it finishes on its thread and its answer is dropped.
        """
        try:
            if self._closed:
                raise Closed()
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(self._executor, functools.partial(self._run, fn))
            except RuntimeError:
                if self._closed:  # shut down while we were scheduling
                    raise Closed() from None
                raise
        except Exception as error:
            if self._errors is None or not _is_ours(error):
                raise
            raise self._errors(operation, error) from None

    def _run(self, fn: Callable[[Any], T]) -> T:
        return fn(self.client())

    async def close(self) -> None:
        """Refuse new calls, stop the threads and, when it is ours, close the client's connections.

        Waits for nothing: a call already running finishes (or fails) on its own
        thread; a queued one is refused by `client()`.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            client = self._client
            if self._owns_client:
                self._client = None
        self._executor.shutdown(wait=False)
        if client is not None and self._owns_client:
            close = getattr(client, "close", None)
            if close is not None:
                close()


def _is_ours(error: Exception) -> bool:
    """Closed, or an error botocore raised (botocore is loaded: a client exists or was being built)."""
    if isinstance(error, Closed):
        return True
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(error, (BotoCoreError, ClientError))
