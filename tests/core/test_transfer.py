"""Export and import through the service (core/transfer), on the in-memory reference stores:
the format, what is refused and why, the tenant rule, re-embedding, and reruns."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from mcp_memory.core.model import Caller
from mcp_memory.core.transfer import FileRefused, Refusal
from mcp_memory.embedders.fake import FakeEmbedder, fake_vector
from tests.conftest import DAY, Clock, Env, make_env

ACME = Caller("acme")
THREAD = Caller("acme", "thread-7")


async def seeded(clock: Clock) -> Env:
    env = make_env(clock)
    await env.service.remember(ACME, "Deploys drain connections before the pods stop", category="decision")
    clock.advance(1000)
    await env.service.remember(
        THREAD, "This thread settles the release date for version two", scope="conversation", tags=["release", "date"]
    )
    clock.advance(1000)
    await env.service.remember(Caller("beta"), "Beta keeps its invoices in the ledger service", memory_type="reference")
    await env.service.recall(ACME, "how do deploys drain connections")
    await env.service.recall(ACME, "how do deploys drain connections")
    await env.counters.flush()
    return env


async def exported(env: Env, tenants: list[str], *, with_embeddings: bool = True) -> list[bytes]:
    out: list[str] = []
    await env.service.export(tenants, write=out.append, with_embeddings=with_embeddings)
    return [line.encode() for line in "".join(out).splitlines(keepends=True)]


async def imported(env: Env, lines: list[bytes], **options):
    refusals: list[Refusal] = []
    result = await env.service.import_(iter(lines), on_refused=refusals.append, **options)
    return result, refusals


def records(lines: list[bytes]) -> list[dict]:
    return [json.loads(line) for line in lines[1:]]


async def test_export_writes_a_header_then_every_memory_with_its_counts_and_vector(clock: Clock) -> None:
    env = await seeded(clock)
    lines = await exported(env, ["acme", "beta"])

    header = json.loads(lines[0])
    assert header["format"] == "mcp-memory-export" and header["version"] == 1
    assert header["embedding"] == {"provider": "fake", "model": "fake-bag-of-words", "dim": 64}
    assert header["exportedBy"].startswith("mcp-memory ") and header["withEmbeddings"] is True
    by_content = {r["content"]: r for r in records(lines)}
    deploys = by_content["Deploys drain connections before the pods stop"]
    assert (deploys["tenant"], deploys["type"], deploys["category"], deploys["scope"]) == (
        "acme",
        "project",
        "decision",
        "project",
    )
    assert deploys["accessCount"] == 2 and deploys["lastAccessedAt"] == "2026-07-01T00:00:02.000Z"
    note = by_content["This thread settles the release date for version two"]
    assert (note["scope"], note["conversation"], note["tags"]) == ("conversation", "thread-7", ["release", "date"])
    assert note["accessCount"] == 0 and note["lastAccessedAt"] is None
    vector = np.frombuffer(base64.b64decode(deploys["embedding"]), dtype="<f4")
    np.testing.assert_allclose(vector, fake_vector(deploys["content"]), rtol=1e-6)
    assert by_content["Beta keeps its invoices in the ledger service"]["type"] == "reference"


async def test_export_without_embeddings_carries_no_vectors(clock: Clock) -> None:
    env = await seeded(clock)
    lines = await exported(env, ["acme"], with_embeddings=False)
    assert json.loads(lines[0])["withEmbeddings"] is False
    assert len(records(lines)) == 2 and all("embedding" not in r for r in records(lines))


async def test_an_import_keeps_ids_fields_and_counts_and_reuses_the_vectors(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme", "beta"])
    target = make_env(clock)

    result, refusals = await imported(target, lines)

    assert (result.imported, result.already_present, result.re_embedded, result.refused) == (3, 0, 0, 0)
    assert refusals == [] and result.tenants == {"acme": 2, "beta": 1}
    assert target.embedder.calls == 0
    assert records(await exported(target, ["acme", "beta"])) == records(lines)
    listed = await target.service.list(THREAD)
    assert [m.content for m in listed.memories] == [
        "This thread settles the release date for version two",
        "Deploys drain connections before the pods stop",
    ]
    assert [m.id for m in (await target.service.list(ACME)).memories] == [listed.memories[1].id]
    stats = await target.counters.load("acme")
    assert stats[listed.memories[1].id].access_count == 2


async def test_importing_the_same_file_twice_writes_nothing_the_second_time(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme", "beta"])
    target = make_env(clock)
    await imported(target, lines)
    writes_before = len(target.objects.writes)  # type: ignore[attr-defined]
    size_before = target.vectors.size  # type: ignore[attr-defined]

    again, _ = await imported(target, lines)

    assert (again.imported, again.already_present, again.refused) == (0, 3, 0)
    assert target.objects.writes[writes_before:] == []  # type: ignore[attr-defined]
    assert target.vectors.size == size_before  # type: ignore[attr-defined]
    ids = [m.id for m in (await target.service.list(THREAD)).memories]
    assert (await target.counters.load("acme"))[ids[1]].access_count == 2


async def test_a_file_from_another_model_is_re_embedded_by_the_configured_one(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme"])
    target = make_env(clock, embedder=FakeEmbedder(dim=32))

    result, _ = await imported(target, lines)

    assert (result.imported, result.re_embedded) == (2, 2)
    answer = await target.service.recall(ACME, "how do deploys drain connections")
    assert [r.memory.content for r in answer.results] == ["Deploys drain connections before the pods stop"]
    again = records(await exported(target, ["acme"]))
    vector = np.frombuffer(base64.b64decode(again[0]["embedding"]), dtype="<f4")
    assert vector.shape == (32,)


async def test_an_export_without_vectors_is_embedded_on_import(clock: Clock) -> None:
    source = await seeded(clock)
    target = make_env(clock)
    result, _ = await imported(target, await exported(source, ["beta"], with_embeddings=False))
    assert (result.imported, result.re_embedded) == (1, 1)


async def test_a_newer_format_version_is_refused_by_name_and_nothing_is_written(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme"])
    header = json.loads(lines[0]) | {"version": 2, "exportedBy": "mcp-memory 9.0.0"}
    target = make_env(clock)

    with pytest.raises(FileRefused) as refused:
        await imported(target, [json.dumps(header).encode() + b"\n", *lines[1:]])

    assert 'line 1: this file is "mcp-memory-export" version 2, written by mcp-memory 9.0.0' in str(refused.value)
    assert "reads version 1" in str(refused.value)
    assert target.vectors.size == 0  # type: ignore[attr-defined]


async def test_a_file_without_a_header_is_refused(clock: Clock) -> None:
    target = make_env(clock)
    with pytest.raises(FileRefused, match="line 1: this is not an mcp-memory export"):
        await imported(target, [b'{"id": "x"}\n'])
    with pytest.raises(FileRefused, match="the file is empty"):
        await imported(target, [])


async def test_a_truncated_last_line_is_reported_and_the_rest_imported(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme", "beta"])
    cut = lines[:-1] + [lines[-1][: len(lines[-1]) // 2]]
    target = make_env(clock)

    result, refusals = await imported(target, cut)

    assert (result.imported, result.refused) == (2, 1)
    assert refusals == [Refusal(4, "the file ends in the middle of this record (it was cut short)")]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"content": ""}, "`content` is required and must be a non-empty string."),
        ({"content": "x" * 32_001}, "`content` is 32001 bytes; the maximum a single memory may hold is 32000."),
        ({"type": "diary"}, "`type` must be one of: project, pattern, reference, conversation."),
        ({"tags": ["t"] * 21}, "`tags` may hold at most 20 entries."),
        (
            {"scope": "conversation", "conversation": None},
            "scope 'conversation' needs a `conversation`, and this record has none",
        ),
        ({"tenant": "no spaces allowed"}, "`tenant` must start with a letter or digit"),
        ({"conversation": "has space"}, "`conversation` may carry printable ASCII only"),
        ({"id": "not-a-ulid"}, "`id` must be a ULID"),
        ({"createdAt": "yesterday"}, "`createdAt` must be an ISO-8601 time"),
        ({"trustBase": 3}, "`trustBase` must be between 0 and 1"),
        ({"accessCount": -1}, "`accessCount` must be a whole number ≥ 0"),
        ({"embedding": "AAAA"}, "`embedding` holds 0 numbers; the header says 64 dimensions"),
    ],
)
async def test_a_bad_record_is_refused_with_its_line_and_reason_and_the_rest_continue(
    clock: Clock, change: dict, reason: str
) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme", "beta"])
    bad = json.loads(lines[2]) | change
    target = make_env(clock)

    result, refusals = await imported(target, [lines[0], lines[1], json.dumps(bad).encode() + b"\n", lines[3]])

    assert (result.imported, result.refused) == (2, 1)
    assert len(refusals) == 1 and refusals[0].line == 3 and reason in refusals[0].reason
    assert target.vectors.size == 2  # type: ignore[attr-defined]


async def test_not_json_is_refused_with_its_line(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["beta"])
    target = make_env(clock)
    result, refusals = await imported(target, [lines[0], b"{oops\n", lines[1]])
    assert (result.imported, result.refused) == (1, 1)
    assert refusals[0].line == 2 and refusals[0].reason.startswith("not valid JSON")


async def test_records_of_tenants_not_asked_for_are_skipped_and_never_written(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme", "beta"])
    target = make_env(clock)

    result, refusals = await imported(target, lines, tenants=["beta"])

    assert (result.imported, result.skipped, result.refused) == (1, 2, 0) and refusals == []
    assert (await target.service.tenants()).tenants[0].tenant == "beta"
    assert len((await target.service.tenants()).tenants) == 1
    assert (await target.service.list(THREAD)).memories == []


async def test_an_import_writes_only_the_tenants_the_file_holds(clock: Clock) -> None:
    source = await seeded(clock)
    target = make_env(clock)
    await imported(target, await exported(source, ["beta"]), tenants=["beta", "gamma"])
    assert [t.tenant for t in (await target.service.tenants()).tenants] == ["beta"]


async def test_an_import_leaves_memories_already_in_the_store_and_their_counts_alone(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme"])
    target = make_env(clock)
    await imported(target, lines)
    deploys = (await target.service.list(ACME)).memories[0]
    clock.advance(DAY)
    await target.service.recall(ACME, "how do deploys drain connections")
    await target.counters.flush()

    await imported(target, lines)

    stats = (await target.counters.load("acme"))[deploys.id]
    assert stats.access_count == 3 and stats.last_accessed_at == "2026-07-02T00:00:02.000Z"


async def test_a_rerun_after_a_crash_before_the_memories_were_written_counts_once(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme"])
    target = make_env(clock)

    class Crash(Exception):
        pass

    async def crash(items) -> None:  # the counts and index keys are written; the memories never are
        raise Crash

    real = target.vectors.put_many
    target.vectors.put_many = crash  # type: ignore[method-assign]
    with pytest.raises(Crash):
        await imported(target, lines)
    target.vectors.put_many = real  # type: ignore[method-assign]

    result, _ = await imported(target, lines)

    assert result.imported == 2
    deploys = (await target.service.list(ACME)).memories[0]
    assert (await target.counters.load("acme"))[deploys.id].access_count == 2


async def test_a_record_of_32000_bytes_of_quotes_is_imported_byte_for_byte(clock: Clock) -> None:
    source = await seeded(clock)
    lines = await exported(source, ["acme"])
    quoted = json.loads(lines[1]) | {"content": '"' * 32_000, "embedding": None}
    target = make_env(clock)

    result, refusals = await imported(target, [lines[0], json.dumps(quoted).encode() + b"\n", lines[2]])

    assert (result.imported, result.refused, refusals) == (2, 0, [])
    assert '"' * 32_000 in [m.content for m in (await target.service.list(THREAD)).memories]


async def test_re_embedding_asks_the_embedder_in_batches_not_one_text_at_a_time(clock: Clock) -> None:
    source = make_env(clock)
    lines = [
        json.dumps(
            {
                "format": "mcp-memory-export",
                "version": 1,
                "embedding": {"provider": "other", "model": "another-model", "dim": 16},
                "withEmbeddings": False,
            }
        ).encode()
        + b"\n"
    ]
    for i in range(130):
        record = {"id": f"01J{i:023d}", "tenant": "acme", "content": f"distinct fact number {i} about item{i}"}
        lines.append(json.dumps(record | {"createdAt": "2026-07-01T00:00:00.000Z"}).encode() + b"\n")

    result, refusals = await imported(source, lines)

    assert refusals == [] and (result.imported, result.re_embedded) == (130, 130)
    assert source.embedder.calls == 3  # 64 + 64 + 2


async def test_an_export_for_a_caller_holds_what_it_sees_and_imports_again(clock: Clock) -> None:
    """Issue 36 defect 1: `export_visible` (the web view's download) keeps another conversation's
    notes and its id out; `export` (the operator's) keeps every memory."""
    env = await seeded(clock)
    other = Caller("acme", "thread-9")
    provenance = (await env.service.remember(other, "Thread nine decided the pager rota")).memory.id
    for caller, notes in ((ACME, set()), (THREAD, {"thread-7"}), (other, set())):
        out: list[str] = []
        result = await env.service.export_visible(caller, write=out.append)
        lines = [line.encode() for line in "".join(out).splitlines(keepends=True)]
        seen = records(lines)
        assert {r["conversation"] for r in seen if r["scope"] == "conversation"} == notes
        assert result.memories == len(seen) == 2 + len(notes)
        shown = {r["id"]: r["conversation"] for r in seen}
        assert shown[provenance] == ("thread-9" if caller is other else None)
        fresh = make_env(clock)
        done, refusals = await imported(fresh, lines)
        assert refusals == [] and done.imported == len(seen)
    everything = records(await exported(env, ["acme"]))
    assert {r["conversation"] for r in everything} == {None, "thread-7", "thread-9"}
