"""A probability floor of the operator's own (docs/calibration.md#a-probability-floor-of-your-own):
`calibrate` measures RECALL_MIN_PROBABILITY on the operator's cases, keeping every question whose
answer is among the first five; set, recall says nothing stored answers below it, on every edge;
a floor the bands cannot hold is refused naming the setting and the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_memory.core.errors import ConfigError
from mcp_memory.core.service import MemoryService
from mcp_memory.server.protocol.render import recall_text
from mcp_memory.server.protocol.structured import recall_data
from tests.conftest import ROOT, make_env
from tests.issues.test_34_judgment_edges import (
    ACME,
    FACTS,
    team,  # noqa: F401 (the fixture: the six facts stored with the real model)
)
from tests.support.cli_runner import clean_environment, run_cli

QUESTION = "how are prices kept"  # FACTS[3] on top, LOW: its probability lies below where MEDIUM starts


def _service(env, min_probability: float | None) -> MemoryService:
    return MemoryService(
        env.vectors,
        env.objects,
        env.embedder,
        env.counters,
        floor=0.2,
        clock=env.clock,
        min_probability=min_probability,
    )


async def test_recall_says_nothing_stored_answers_below_a_floor_of_the_operators_own(team) -> None:  # noqa: F811
    shipped = await team.service.recall(ACME, QUESTION)
    p = shipped.probability
    assert p is not None and shipped.results[0].memory.content == FACTS[3] and not shipped.unanswered
    floor = round(p + 0.01, 3)
    above = _service(team, floor)
    told = await above.recall(ACME, QUESTION)
    assert told.unanswered and told.results == [] and told.confidence == "none"
    assert recall_text(told).startswith(f'[MEMORY] Nothing stored answers "{QUESTION}".')
    data = recall_data(told)
    assert data["answered"] is False and data["confidence"] == "none"
    assert not told.worth_injecting()
    from mcp_memory.web.pages.search import judged

    why = judged(told, above)  # the web view's search page says where nothing answers starts
    assert why is not None and why.title == "Why nothing answers"
    assert why.hint.endswith(f"below {round(floor * 100)} % nothing stored answers.")
    below = await _service(team, round(p - 0.01, 3)).recall(ACME, QUESTION)
    assert below.results[0].memory.content == FACTS[3] and below.probability == pytest.approx(p)
    assert below.confidence == shipped.confidence  # only the floor moved: the bands above it did not


def test_a_floor_above_where_medium_starts_is_refused_naming_the_setting_and_the_limit(clock, real_model) -> None:
    env = make_env(clock, floor=0.2, embedder=real_model)
    medium = env.service.judge.bands.medium
    with pytest.raises(ConfigError) as refused:
        _service(env, round(medium + 0.05, 3))
    assert str(refused.value) == (
        f"RECALL_MIN_PROBABILITY must be greater than 0 and at most {medium:g} "
        f"(where MEDIUM starts for local/all-MiniLM-L6-v2), got {round(medium + 0.05, 3):g}"
    )


def test_the_cli_refuses_a_floor_the_bands_cannot_hold_and_writes_nothing(tmp_path: Path) -> None:
    env = clean_environment("RECALL_")
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "local", "MEMORY_TENANT": "acme"})
    refused = run_cli("remember", FACTS[0], env={**env, "RECALL_MIN_PROBABILITY": "0.9"}, cwd=ROOT)
    assert refused.returncode == 2 and refused.stdout == ""
    from mcp_memory.core.judgment import load_model

    medium = load_model("local/all-MiniLM-L6-v2").bands.medium  # where MEDIUM starts, as fitted
    assert f"RECALL_MIN_PROBABILITY must be greater than 0 and at most {medium:g} " in refused.stderr
    listed = run_cli("list", "--json", env=env, cwd=ROOT)
    assert json.loads(listed.stdout)["memories"] == []


@pytest.mark.parametrize("provider", ["local", "local-multilingual"])
def test_calibrate_builtin_suggests_a_floor_that_keeps_every_answer_and_admits_fewer_absent_questions(
    provider: str, tmp_path: Path
) -> None:
    env = clean_environment("RECALL_")
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": provider, "COLUMNS": "200"})
    report = json.loads(run_cli("calibrate", "--builtin", "--json", env=env, cwd=ROOT).stdout)
    pf = report["probabilityFloor"]
    assert report["environment"]["RECALL_MIN_PROBABILITY"] == f"{pf['floor']:g}"
    assert pf["absent"] == report["counts"]["absent"] and pf["answered"] >= 100
    assert pf["suggested"]["dropsAnswered"] == 0 and pf["shipped"]["dropsAnswered"] == 0
    assert pf["suggested"]["admitsAbsent"] < pf["shipped"]["admitsAbsent"]
    assert pf["shipped"]["floor"] == report["bands"]["rows"][2]["from"] < pf["floor"]
    # the absent questions the shipped floor turns away are the "nothing stored answers" row
    none = report["bands"]["rows"][3]
    assert none["band"] == "none" and pf["shipped"]["admitsAbsent"] == pf["absent"] - none["absent"]

    view = run_cli("calibrate", "--builtin", env=env, cwd=ROOT).stdout
    assert f"  RECALL_MIN_PROBABILITY={pf['floor']:g}   rule: on the answer's probability, midpoint" in view
    assert "the probability floor: below it recall says nothing stored answers" in view
    row = next(x for x in view.splitlines() if x.strip("│ ").startswith(f"suggested {pf['floor']:g}"))
    assert [c.strip() for c in row.strip("│").split("│")][1:] == [
        f"0 of {pf['answered']}",
        f"{pf['suggested']['admitsAbsent']} of {pf['absent']}",
    ]

    # set, calibrate measures with it: its bands start LOW at it, and the absent questions it turns
    # away are now said to have nothing stored answering them
    again = json.loads(
        run_cli(
            "calibrate", "--builtin", "--json", env={**env, "RECALL_MIN_PROBABILITY": f"{pf['floor']:g}"}, cwd=ROOT
        ).stdout
    )
    rows = {row["band"]: row for row in again["bands"]["rows"]}
    assert rows["low"]["from"] == pf["floor"] and rows["none"]["right"] == 0
    assert rows["none"]["absent"] == pf["absent"] - pf["suggested"]["admitsAbsent"]
    assert again["probabilityFloor"]["current"] == {"floor": pf["floor"], **pf["suggested"]}


def test_the_cli_recall_reads_the_floor_from_the_environment(tmp_path: Path) -> None:
    import asyncio

    from mcp_memory.app import open_service
    from mcp_memory.config import Settings

    env = clean_environment("RECALL_")
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "local", "MEMORY_TENANT": "acme"})

    async def seed() -> None:
        service = await open_service(Settings.from_env(env))
        try:
            for fact in FACTS:
                await service.remember(ACME, fact)
        finally:
            await service.close()

    asyncio.run(seed())
    shipped = json.loads(run_cli("recall", QUESTION, "--json", env=env, cwd=ROOT).stdout)
    assert shipped["results"][0]["content"] == FACTS[3] and shipped["answered"] is True
    above = f"{shipped['probability'] + 0.01:.3f}"
    told = run_cli("recall", QUESTION, env={**env, "RECALL_MIN_PROBABILITY": above}, cwd=ROOT)
    assert told.returncode == 0
    assert " ".join(told.stdout.split()).startswith("NOTHING STORED ANSWERS THIS: 6 memories were found near")
