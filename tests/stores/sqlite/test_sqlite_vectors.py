"""The SQLite backend's in-process vector cache, with blocks of 4 rows so every
load, append and replacement crosses block boundaries: it answers exactly like
a scan of the table, and a snapshot never changes once a query holds it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.core.model import Memory
from mcp_memory.stores.sqlite import vectors as sqlite_vectors
from mcp_memory.stores.sqlite.store import open_sqlite
from mcp_memory.stores.sqlite.vectors import build, extend, rerank

DIM = 8
TENANT = "acme"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_vectors, "BLOCK_ROWS", 4)


def unit_rows(seed: int, count: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def row(memory_id: str, vector: np.ndarray, conversation: str | None = None) -> tuple:
    scope = "conversation" if conversation else "project"
    return (memory_id, scope, conversation, vector.astype("<f4").tobytes())


def exact(rows: list[tuple], query: np.ndarray, top_k: int, conversation: str | None = None) -> list[tuple[str, float]]:
    """The nearest visible rows by brute force, for comparison."""
    scored = [
        (r[0], float(np.frombuffer(r[3], "<f4") @ query))
        for r in rows
        if r[1] == "project" or (conversation is not None and r[2] == conversation)
    ]
    return sorted(scored, key=lambda s: -s[1])[:top_k]


def nearest(snapshot, rows: list[tuple], query: np.ndarray, top_k: int, conversation: str | None = None):
    """The snapshot's candidates scored exactly from `rows` (as the store scores them from the
    database), best `top_k` kept."""
    stored = {r[0]: np.frombuffer(r[3], "<f4") for r in rows}
    return rerank(
        snapshot.nearest(query, top_k, conversation),
        lambda wanted: {i: float(stored[i] @ query) for i in wanted},
        top_k,
    )


def ids(snapshot) -> list[str]:
    return [snapshot.id(i) for i in range(snapshot.n)]


def ranked(hits: list[tuple[str, float]]) -> list[str]:
    return [memory_id for memory_id, _ in sorted(hits, key=lambda h: -h[1])]


def test_a_tenant_loaded_in_chunks_across_blocks_answers_like_a_full_scan():
    vectors = unit_rows(1, 23)
    rows = [row(f"m{i:02d}", v, "c1" if i % 5 == 0 else None) for i, v in enumerate(vectors)]
    snapshot = build([rows[:10], rows[10:17], rows[17:]], 23, generation=3, purged=0, dim=DIM)

    assert len(snapshot.blocks) == 6 and all(len(b) == 4 for b in snapshot.blocks)
    for query in unit_rows(2, 5):
        for conversation in (None, "c1"):
            got = nearest(snapshot, rows, query, 7, conversation)
            want = exact(rows, query, 7, conversation)
            assert ranked(got) == [memory_id for memory_id, _ in want]
            np.testing.assert_allclose(sorted(s for _, s in got), sorted(s for _, s in want), atol=1e-6)


def test_appending_grows_the_last_block_and_leaves_the_older_snapshot_as_it_was():
    vectors = unit_rows(3, 15)
    rows = [row(f"m{i:02d}", v) for i, v in enumerate(vectors)]
    old = build([rows[:5]], 5, generation=5, purged=0, dim=DIM)
    query = vectors[2]
    before = nearest(old, rows, query, 3)

    new = extend(old, rows[5:], generation=15, dim=DIM)

    assert new.n == 15 and old.n == 5
    assert ranked(nearest(new, rows, query, 15)) == [m for m, _ in exact(rows, query, 15)]
    assert nearest(old, rows, query, 3) == before
    assert sum(len(b) for b in new.blocks) >= 15 and all(len(b) <= 4 for b in new.blocks)


def test_a_rewritten_memory_is_searched_by_its_new_vector_and_old_snapshots_keep_the_old_one():
    vectors = unit_rows(4, 10)
    rows = [row(f"m{i:02d}", v) for i, v in enumerate(vectors)]
    old = build([rows], 10, generation=10, purged=0, dim=DIM)
    moved = -vectors[6]  # m06 now points the other way

    new = extend(old, [row("m06", moved), row("m10", vectors[0])], generation=12, dim=DIM)
    rows_new = [r for r in rows if r[0] != "m06"] + [row("m06", moved), row("m10", vectors[0])]

    assert new.n == 11
    assert ranked(nearest(new, rows_new, moved, 1)) == ["m06"]
    assert ranked(nearest(old, rows, vectors[6], 1)) == ["m06"]
    assert dict(nearest(old, rows, vectors[6], 10))["m06"] == pytest.approx(1.0, abs=1e-6)
    assert dict(nearest(new, rows_new, vectors[6], 11))["m06"] == pytest.approx(-1.0, abs=1e-6)


def test_two_refreshes_from_the_same_snapshot_do_not_write_over_each_other():
    vectors = unit_rows(5, 9)
    rows = [row(f"m{i:02d}", v) for i, v in enumerate(vectors)]
    base = build([rows[:6]], 6, generation=6, purged=0, dim=DIM)

    first = extend(base, [rows[6]], generation=7, dim=DIM)
    second = extend(base, [rows[7], rows[8]], generation=8, dim=DIM)

    assert ids(first) == [f"m{i:02d}" for i in range(7)]
    assert ids(second) == [f"m{i:02d}" for i in (0, 1, 2, 3, 4, 5, 7, 8)]
    assert ranked(nearest(first, rows, vectors[6], 1)) == ["m06"]
    assert ranked(nearest(second, rows, vectors[7], 1)) == ["m07"]


def test_ids_of_any_text_come_back_exactly_as_written():
    vectors = unit_rows(8, 4)
    odd = [
        "01J00000000000000000000000",
        "ünïcödé-ид-記憶",
        "ends with a NUL\x00",
        "a much longer id than the others, " * 3,
    ]
    old = build([[row(odd[0], vectors[0]), row(odd[1], vectors[1])]], 2, generation=2, purged=0, dim=DIM)

    new = extend(old, [row(odd[2], vectors[2]), row(odd[3], vectors[3])], generation=4, dim=DIM)

    assert ids(old) == odd[:2] and ids(new) == odd
    assert new.find(odd + ["absent"]) == [0, 1, 2, 3, None]
    assert ranked(new.nearest(vectors[3], 1, None))[0] == odd[3]


def test_many_changed_rows_at_once_are_matched_to_the_rows_they_replace():
    vectors = unit_rows(6, 40)
    rows = [row(f"m{i:02d}", v) for i, v in enumerate(vectors)]
    old = build([rows[:30]], 30, generation=30, purged=0, dim=DIM)
    changed = [row(f"m{i:02d}", -vectors[i]) for i in range(0, 30, 3)] + rows[30:]

    new = extend(old, changed, generation=50, dim=DIM)
    rows_new = [r for r in rows[:30] if r[0] not in {c[0] for c in changed}] + changed

    assert new.n == 40
    assert sorted(ids(new)) == sorted(f"m{i:02d}" for i in range(40))
    assert dict(nearest(new, rows_new, vectors[3], 40))["m03"] == pytest.approx(-1.0, abs=1e-6)


async def test_the_store_stays_exact_through_puts_rewrites_and_deletes_across_blocks(tmp_path: Path):
    vectors, objects = await open_sqlite(tmp_path / "m.db", model="m", dim=DIM)
    embeddings = unit_rows(7, 30)
    try:

        def memory(i: int) -> Memory:
            return Memory(id=f"m{i:02d}", tenant=TENANT, content=f"memory {i}", created_at="2026-01-01T00:00:00.000Z")

        for i in range(9):
            await vectors.put(memory(i), embeddings[i])
        assert (await vectors.query(TENANT, embeddings[4], 1, None))[0].memory.id == "m04"
        for i in range(9, 30):  # appended through the cache, block after block
            await vectors.put(memory(i), embeddings[i])
            hits = await vectors.query(TENANT, embeddings[i], 1, None)
            assert hits[0].memory.id == f"m{i:02d}"
        await vectors.put(memory(2), -embeddings[2])  # a rewrite in the first block
        assert (await vectors.query(TENANT, -embeddings[2], 1, None))[0].memory.id == "m02"
        await vectors.delete(TENANT, ["m17"])  # hidden, not reloaded
        assert "m17" not in [h.memory.id for h in await vectors.query(TENANT, embeddings[17], 30, None)]
        assert len(await vectors.query(TENANT, embeddings[0], 30, None)) == 29
    finally:
        await vectors.close()
        await objects.close()


async def test_a_delete_by_another_process_is_caught_up_without_reading_the_tenant_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    embeddings = unit_rows(8, 12)

    def memory(i: int) -> Memory:
        return Memory(id=f"m{i:02d}", tenant=TENANT, content=f"memory {i}", created_at="2026-01-01T00:00:00.000Z")

    serving, serving_objects = await open_sqlite(tmp_path / "m.db", model="m", dim=DIM)
    other, other_objects = await open_sqlite(tmp_path / "m.db", model="m", dim=DIM)
    try:
        await serving.put_many([(memory(i), embeddings[i]) for i in range(12)])
        assert len(await serving.query(TENANT, embeddings[0], 12, None)) == 12  # its cache is loaded
        await other.delete(TENANT, ["m03", "m07"])
        loads: list[int] = []
        monkeypatch.setattr(sqlite_vectors, "build", lambda *a: loads.append(1))

        hits = [h.memory.id for h in await serving.query(TENANT, embeddings[3], 12, None)]

        assert sorted(hits) == [f"m{i:02d}" for i in range(12) if i not in (3, 7)] and loads == []
    finally:
        for store in (serving, serving_objects, other, other_objects):
            await store.close()


def test_the_first_scan_limits_numpy_blas_to_one_thread(tmp_path: Path):
    # Process-wide, so in a fresh process: OpenBLAS's spinning helper threads
    # would take the cores the model needs (mcp_memory/runtime/blas.py).
    script = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "import numpy as np\n"
        "from threadpoolctl import threadpool_info\n"
        "from mcp_memory.stores.sqlite.store import open_sqlite\n"
        "async def main():\n"
        "    vectors, objects = await open_sqlite(Path(sys.argv[1]), model='m', dim=8)\n"
        "    await vectors.query('acme', np.ones(8, np.float32), 3, None)\n"
        "    after = [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']\n"
        "    await vectors.close(); await objects.close()\n"
        "    print(json.dumps(after))\n"
        "asyncio.run(main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "m.db")], cwd=REPO, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, result.stderr
    after = json.loads(result.stdout)
    assert after and set(after) == {1}


def test_the_heap_tuning_is_harmless_to_call_again_and_again():
    from mcp_memory.runtime import heap

    for _ in range(3):
        heap.limit_growth()
        heap.trim()
    assert bytearray(heap.MMAP_THRESHOLD * 2)  # a large block still allocates (from mmap)
