"""Every AWS call goes one way: `AwsClient.call`, on a pool as wide as the client's connections.

The behaviour of that one way (how many calls run at once, how a botocore error is
worded, what cancelling and closing do), with a real botocore client whose calls
never leave the process; and a scan that fails when a module calls AWS another way.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from mcp_memory.core.errors import StoreError
from mcp_memory.runtime.aws import AwsClient, Closed, new_client
from mcp_memory.stores.s3.errors import AwsError, s3_calls

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_memory"
#: Generous: a healthy wait here ends in milliseconds; this only keeps a broken run from hanging.
WAIT_S = 10
#: One session for the module: it caches the service models, so each client is cheap.
SESSION = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing")


def s3_client(connections: int = 3) -> Any:
    return new_client(
        "s3",
        "us-east-1",
        read_timeout_s=1,
        retries={"mode": "standard", "total_max_attempts": 1},
        max_pool_connections=connections,
        session=SESSION,
    )


@pytest.fixture
def client() -> Iterator[Any]:
    client = s3_client()
    yield client
    client.close()


async def test_no_more_calls_run_at_once_than_the_client_has_connections(client: Any) -> None:
    aws = AwsClient("s3", client=client)
    lock, in_flight, peak = threading.Lock(), [0], [0]
    together = threading.Barrier(3, timeout=WAIT_S)  # only a pool of at least 3 gets past it

    def work(_: Any) -> int:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        together.wait()
        with lock:
            in_flight[0] -= 1
        return 1

    try:
        done = await asyncio.gather(*(aws.call("Work", work) for _ in range(9)))
    finally:
        await aws.close()

    assert aws.workers == 3
    assert (sum(done), peak[0]) == (9, 3)


async def test_a_botocore_error_is_raised_in_the_callers_words_without_the_original_attached(client: Any) -> None:
    seen: list[tuple[str, bool]] = []

    def hook(operation: str, error: Exception) -> Exception:
        seen.append((operation, isinstance(error, ClientError)))
        return StoreError(f"{operation} failed")

    aws = AwsClient("s3", client=client, errors=hook)
    try:
        with Stubber(client) as stubber:
            stubber.add_client_error("head_bucket", "AccessDenied", "secret-looking detail", 403)
            with pytest.raises(StoreError) as caught:
                await aws.call("HeadBucket", lambda c: c.head_bucket(Bucket="state"))
    finally:
        await aws.close()

    assert str(caught.value) == "HeadBucket failed"
    assert seen == [("HeadBucket", True)]
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


async def test_an_error_that_is_not_botocores_passes_through_unchanged(client: Any) -> None:
    aws = AwsClient("s3", client=client, errors=lambda operation, error: StoreError("translated"))

    def broken(_: Any) -> None:
        raise KeyError("body")

    try:
        with pytest.raises(KeyError):
            await aws.call("GetObject", broken)
    finally:
        await aws.close()


async def test_without_a_hook_botocores_error_reaches_the_caller_as_it_was(client: Any) -> None:
    aws = AwsClient("s3", client=client)
    try:
        with Stubber(client) as stubber:
            stubber.add_client_error("head_bucket", "NoSuchBucket", "gone", 404)
            with pytest.raises(ClientError, match="NoSuchBucket"):
                await aws.call("HeadBucket", lambda c: c.head_bucket(Bucket="state"))
    finally:
        await aws.close()


async def test_the_s3_stores_hook_names_the_call_and_awss_code(client: Any) -> None:
    aws = s3_calls(client, "s3")
    with Stubber(client) as stubber:
        stubber.add_client_error("head_bucket", "AccessDenied", "Access Denied", 403)
        with pytest.raises(AwsError) as caught:
            await aws.call("HeadBucket", lambda c: c.head_bucket(Bucket="state"))
    await aws.close()
    with pytest.raises(StoreError) as refused:
        await aws.call("PutObject", lambda c: c.put_object(Bucket="state", Key="k", Body=b""))

    assert (str(caught.value), caught.value.status) == ("HeadBucket failed: AccessDenied — Access Denied", 403)
    assert str(refused.value) == "the S3 store has been closed (PutObject was not sent)"


async def test_a_call_cancelled_while_it_waits_for_a_thread_is_never_sent(client: Any) -> None:
    aws = AwsClient("s3", client=client, workers=1)
    started, release, sent = threading.Event(), threading.Event(), []

    def hold(_: Any) -> str:
        started.set()
        release.wait(WAIT_S)
        return "first"

    try:
        first = asyncio.create_task(aws.call("First", hold))
        assert await asyncio.to_thread(started.wait, WAIT_S)
        queued = asyncio.create_task(aws.call("Second", lambda _: sent.append("second")))
        await asyncio.sleep(0)  # submitted to the pool, behind the first
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        release.set()
        assert await first == "first"
        assert await aws.call("Third", lambda _: "third") == "third"
    finally:
        release.set()
        await aws.close()

    assert sent == []


async def test_cancelling_a_running_call_frees_the_caller_at_once_and_the_thread_when_it_ends(client: Any) -> None:
    aws = AwsClient("s3", client=client, workers=1)
    started, release, running = threading.Event(), threading.Event(), [False]

    def hold(_: Any) -> None:
        running[0] = True
        started.set()
        release.wait(WAIT_S)
        running[0] = False

    try:
        task = asyncio.create_task(aws.call("Slow", hold))
        assert await asyncio.to_thread(started.wait, WAIT_S)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        still_running = running[0]  # the caller did not wait for the thread
        release.set()
        assert await aws.call("Next", lambda _: "next") == "next"  # the one thread is free again
    finally:
        release.set()
        await aws.close()

    assert still_running


async def test_a_closed_client_refuses_calls_and_closes_only_a_client_it_owns() -> None:
    given, owned = s3_client(), s3_client()
    closed: list[str] = []
    for name, client in (("given", given), ("owned", owned)):
        real = client.close
        client.close = lambda name=name, real=real: (closed.append(name), real())
    borrowed = AwsClient("s3", client=given)
    mine = AwsClient("s3", client=owned, owns_client=True)
    await borrowed.close()
    await mine.close()
    await mine.close()  # twice is harmless

    with pytest.raises(Closed):
        await borrowed.call("HeadBucket", lambda c: c.head_bucket(Bucket="b"))
    assert closed == ["owned"]
    given.close()


# --------------------------------------------------------------------------- one way, enforced

#: Ways to run a blocking call off the event loop; only runtime/aws.py may use them for AWS.
OFF_LOOP = {"to_thread", "run_in_executor", "ThreadPoolExecutor", "Thread"}
AWS_SDK = {"boto3", "botocore"}
THE_ONE_WAY = "runtime/aws.py"


def _touches_aws(tree: ast.Module, relative: str) -> bool:
    """Imports boto3/botocore (anywhere in the module) or the AWS call helper, or is the S3 backend."""
    if relative.startswith("stores/s3/"):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in AWS_SDK for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in AWS_SDK or node.module == "mcp_memory.runtime.aws":
                return True
    return False


def off_loop_calls(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of every `to_thread(…)`, `run_in_executor(…)`, `ThreadPoolExecutor(…)`, `Thread(…)`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            if name in OFF_LOOP:
                found.append((node.lineno, name))
    return found


@functools.cache
def aws_modules() -> dict[str, ast.Module]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        if relative != THE_ONE_WAY and _touches_aws(tree, relative):
            modules[relative] = tree
    return modules


def test_no_module_that_calls_aws_runs_work_off_the_loop_except_through_the_one_helper() -> None:
    offenders = [
        f"mcp_memory/{relative}:{line} calls {name}; call AWS through AwsClient.call (mcp_memory/{THE_ONE_WAY})"
        for relative, tree in aws_modules().items()
        for line, name in off_loop_calls(tree)
    ]
    assert offenders == []


def test_the_scan_finds_every_module_that_calls_aws() -> None:
    assert set(aws_modules()) >= {
        "embedders/bedrock.py",
        "server/protocol/search_docs.py",
        "stores/s3/errors.py",
        "stores/s3/startup.py",
        "stores/s3/objects.py",
        "stores/s3/store.py",
    }


def test_the_scan_catches_a_second_way_to_call_aws() -> None:
    planted = ast.parse(
        "import asyncio\nfrom mcp_memory.runtime.aws import AwsClient\n"
        "async def get(client):\n    return await asyncio.to_thread(client.get_object, Bucket='b', Key='k')\n"
        "async def put(loop, pool, client):\n    return await loop.run_in_executor(pool, client.put_object)\n"
    )
    assert _touches_aws(planted, "stores/other.py")
    assert off_loop_calls(planted) == [(4, "to_thread"), (6, "run_in_executor")]
