"""`stats`, `list` and `forget` import neither the embedding runtime nor Typer: they read no
vector and embed nothing, so on a store made by the local model they load no onnxruntime,
tokenizers or numpy, and cli/quick.py reads their options without Typer or the pydantic it
validates with (issue 27: these commands answer at once on a store of any size; bench/RESULTS.md,
"stats, list and forget without Typer")."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys

import pytest

from tests.conftest import ROOT

#: What none of the three commands may import: the model's runtime, the MCP SDK, the CLI framework.
NOT_IMPORTED = (
    "onnxruntime",
    "tokenizers",
    "huggingface_hub",
    "numpy",
    "mcp",
    "httpx",
    "typer",
    "pydantic",
    "mcp_memory.cli.app",
)

FIRST, SECOND = "01KDVDNKR00000000000000000", "01KDVDNKR10000000000000000"

#: The child: the console script's main, then the names of the modules it imported, on stderr's last line.
CHILD = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["mcp-memory", *sys.argv[1:]]
from mcp_memory.cli.entry import main
main()
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store of two memories written by `import` under the local model's name (with their vectors,
    so nothing is embedded), and the environment the commands run in."""
    from mcp_memory.embedders import LOCAL_DIM, LOCAL_MODEL

    home = tmp_path_factory.mktemp("operator-imports")
    export = home / "two.jsonl"
    header = {
        "format": "mcp-memory-export",
        "version": 1,
        "exportedBy": "tests",
        "exportedAt": "2026-12-01T00:00:00.000Z",
        "embedding": {"provider": "local", "model": LOCAL_MODEL, "dim": LOCAL_DIM},
        "withEmbeddings": True,
    }
    lines = [json.dumps(header)]
    for n, (memory_id, text) in enumerate(
        [(FIRST, "The wiki moved to Confluence."), (SECOND, "Deploys run on Fridays.")]
    ):
        vector = [0.0] * LOCAL_DIM
        vector[n] = 1.0
        record = {
            "id": memory_id,
            "tenant": "ops",
            "content": text,
            "type": "project",
            "tags": [],
            "scope": "project",
            "createdAt": f"2026-01-01T00:00:0{n}.000Z",
            "embedding": base64.b64encode(struct.pack(f"<{LOCAL_DIM}f", *vector)).decode("ascii"),
        }
        lines.append(json.dumps(record))
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "EMBEDDING_", "DATABASE_URL"))}
    env.update(MEMORY_DB_PATH=str(home / "m.db"), HOME=str(home), PYTHONPATH=str(ROOT), COLUMNS="200")
    imported = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "import", str(export)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    return env


def _run(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=120
    )
    *said, modules = result.stderr.rstrip("\n").split("\n")
    result.stderr = "\n".join(said)
    return result, json.loads(modules)


def _heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if name in NOT_IMPORTED or name.split(".")[0] in NOT_IMPORTED]


def test_stats_counts_a_local_model_store_without_importing_the_model_runtime_or_typer(store) -> None:
    result, modules = _run(store, "stats", "--tenant", "ops", "--json")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total"] == 2
    assert "mcp_memory.cli.quick" in modules  # the record is real: the command's own module is there
    assert _heavy(modules) == []


def test_list_prints_a_page_without_importing_the_model_runtime_or_typer(store) -> None:
    result, modules = _run(store, "list", "--tenant", "ops", "--limit", "5")

    assert result.returncode == 0, result.stderr
    assert "Deploys run on Fridays." in result.stdout and "The wiki moved to Confluence." in result.stdout
    assert _heavy(modules) == []


def test_forget_deletes_and_reports_a_missing_id_without_importing_the_model_runtime_or_typer(store) -> None:
    deleted, modules = _run(store, "forget", "--tenant", "ops", FIRST)
    missing, missing_modules = _run(store, "forget", "--tenant", "ops", FIRST, "--json")

    assert deleted.returncode == 0, deleted.stderr
    assert missing.returncode == 1 and json.loads(missing.stdout)["deleted"] is False
    assert _heavy(modules) == [] and _heavy(missing_modules) == []


def test_a_store_made_by_another_model_is_still_refused_without_loading_either_model(store) -> None:
    result, modules = _run({**store, "EMBEDDING_PROVIDER": "local-multilingual"}, "forget", "--tenant", "ops", SECOND)
    listed, _ = _run(store, "list", "--tenant", "ops", "--json")

    assert result.returncode == 1
    assert 'this database holds embeddings from "all-MiniLM-L6-v2"' in result.stderr
    assert 'the configured embedder is "multilingual-e5-small-q4"' in result.stderr
    assert SECOND in [memory["id"] for memory in json.loads(listed.stdout)["memories"]]  # nothing was deleted
    # a failure's exit goes through typer.Exit (cli/plumbing.py _fail), so only the models are checked here
    assert [name for name in _heavy(modules) if name.split(".")[0] not in ("typer", "pydantic")] == []


def test_help_and_unknown_options_are_still_typers_own(store) -> None:
    helped, helped_modules = _run(store, "stats", "--help")
    wrong, _ = _run(store, "list", "--bogus")

    assert helped.returncode == 0 and "Usage: mcp-memory stats [OPTIONS]" in helped.stdout
    assert "typer" in helped_modules
    assert wrong.returncode == 2 and "No such option: --bogus" in wrong.stderr
