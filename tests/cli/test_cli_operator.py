"""The operator's commands end to end, run in process (tests/support/cli_runner.py):
`calibrate` (fake embedder, a tenant's stored memories, and the built-in set with the local
model), `stats` across tenants and `compact --all-tenants`."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.support.cli_runner import Ran, clean_environment, run_cli


@pytest.fixture
def cli(tmp_path: Path):
    env = clean_environment("RECALL_")
    env.update({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake", "COLUMNS": "200"})

    def run(*args: str, **extra: str) -> Ran:
        return run_cli(*args, env={**env, **extra}, cwd=ROOT)

    return run


def seed(tmp_path: Path, *memories: tuple[str, str, dict], recalls: tuple[tuple[str, str], ...] = ()) -> None:
    """Write memories (tenant, content, options) and run recalls in-process, on the same
    database file the CLI uses: setting up through a subprocess per call would be slow."""
    import asyncio

    from mcp_memory.app import open_service
    from mcp_memory.config import Settings
    from mcp_memory.core.model import Caller

    async def go() -> None:
        settings = Settings.from_env({"MEMORY_DB_PATH": str(tmp_path / "m.db"), "EMBEDDING_PROVIDER": "fake"})
        service = await open_service(settings)
        try:
            for tenant, content, options in memories:
                caller = Caller(tenant, options.pop("conversation", None))
                await service.remember(caller, content, **options)
            for tenant, query in recalls:
                await service.recall(Caller(tenant), query)
        finally:
            await service.close()  # flushes the recalls' access counters as shards

    asyncio.run(go())


def write_cases(path: Path, facts: dict[str, list[str]], absent: list[str], key: str = "fact") -> Path:
    lines = [json.dumps({key: fact, "questions": questions}) for fact, questions in facts.items()]
    path.write_text("\n".join(lines + [json.dumps({"absent": a}) for a in absent]) + "\n")
    return path


def cos(a: str, b: str) -> float:
    from mcp_memory.embedders.fake import fake_vector

    return float(np.dot(fake_vector(a), fake_vector(b)))


FACTS = {
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet": [
        "alpha bravo charlie delta echo foxtrot golf uniform",
        "alpha bravo charlie delta echo hotel india victor",
    ],
    "kilo lima mike november oscar papa quebec romeo sierra tango": [
        "kilo lima mike november oscar papa whiskey",
        "kilo lima mike november quebec romeo sierra xray",
    ],
}
ABSENT = ["yankee zulu amber", "basalt cobalt dune", "ember fjord granite"]


def clusters(facts: dict[str, list[str]], absent: list[str]) -> tuple[list[float], list[float]]:
    correct = [cos(q, f) for f, qs in facts.items() for q in qs]
    return correct, [max(cos(a, f) for f in facts) for a in absent]


# --------------------------------------------------------------------------- calibrate


def test_calibrate_puts_the_suggested_floor_between_the_clusters(cli, tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", FACTS, ABSENT)
    result = cli("calibrate", "--cases", str(cases), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    correct, absent = clusters(FACTS, ABSENT)
    relevance = report["relevance"]  # what the floor reads: the cosine plus the keyword evidence
    assert relevance["absent"]["max"] < report["suggested"]["floor"] < relevance["correct"]["min"]
    assert relevance["correct"]["min"] > min(correct) and relevance["absent"]["max"] == pytest.approx(
        max(absent), abs=1e-4
    )
    assert report["separated"] is True and report["suggested"]["dropsCorrect"] == 0
    assert report["suggested"]["floor"] <= report["suggested"]["high"] <= 1
    assert report["clusters"]["correct"]["min"] == pytest.approx(min(correct), abs=1e-4)
    assert report["clusters"]["absent"]["max"] == pytest.approx(max(absent), abs=1e-4)
    assert not any("overlap" in w for w in report["warnings"])
    assert not (tmp_path / "m.db").exists()  # without --tenant the configured store is never opened


def test_calibrate_reports_overlapping_clusters(cli, tmp_path: Path) -> None:
    absent = [*ABSENT, "alpha bravo charlie delta echo foxtrot golf hotel zebra"]
    cases = write_cases(tmp_path / "cases.jsonl", FACTS, absent)
    report = json.loads(cli("calibrate", "--cases", str(cases), "--json").stdout)
    assert report["separated"] is False
    lowest = report["relevance"]["correct"]["min"]
    assert report["suggested"]["floor"] <= lowest and report["suggested"]["dropsCorrect"] == 0
    assert report["suggested"]["admitsAbsent"] >= 1
    assert report["highestAbsent"][0]["question"] == "alpha bravo charlie delta echo foxtrot golf hotel zebra"
    (overlap,) = [w for w in report["warnings"] if w.startswith("The clusters overlap")]
    assert "No floor separates them for this embedder" in overlap

    readable = cli("calibrate", "--cases", str(cases))
    assert readable.returncode == 0
    assert "warning: The clusters overlap" in readable.stdout
    assert "This embedder has no relevance model of its own." in readable.stdout
    assert f"RECALL_MIN_SIMILARITY={report['suggested']['floor']:g}" in readable.stdout
    dense = cli("calibrate", "--cases", str(cases), RECALL_RETRIEVAL="dense")
    assert "No relevance model under this retrieval: recall labels its answers by the marks above" in dense.stdout


def test_calibrate_json_has_every_number_the_view_shows(cli, tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", FACTS, ABSENT)
    report = json.loads(cli("calibrate", "--cases", str(cases), "--json", RECALL_MIN_SIMILARITY="0.5").stdout)
    assert set(report) == {
        "embedder",
        "source",
        "tenant",
        "counts",
        "clusters",
        "answeredFirst",
        "separated",
        "suggested",
        "fewestErrors",
        "current",
        "histogram",
        "lowestCorrect",
        "highestAbsent",
        "warnings",
        "environment",
        "relevance",
        "scoring",
        "bands",
        "probabilityFloor",
        "spread",
    }
    assert report["embedder"] == "fake:fake-bag-of-words, 64d" and report["tenant"] is None
    # no relevance model was fitted for the fake embedder: the embedder-agnostic one's bands, on
    # the suggested floor and the measured spread
    assert report["bands"]["model"] == "generic"
    floor = report["suggested"]["floor"]
    assert report["bands"]["scale"] == pytest.approx([floor, floor + report["spread"]])
    assert report["counts"] == {"facts": 2, "questions": 4, "absent": 3, "reworded": 0, "typos": 0}
    assert set(report["clusters"]) == {"correct", "nearestOther", "absent", "reworded", "typo"}
    assert report["clusters"]["reworded"] is None and set(report["clusters"]["correct"]) == {
        "n",
        "min",
        "median",
        "max",
    }
    assert set(report["suggested"]) == {
        "floor",
        "high",
        "floorRule",
        "highRule",
        "clamped",
        "dropsCorrect",
        "admitsAbsent",
        "correctHigh",
        "absentHigh",
        "wrongHigh",
    }
    assert report["current"]["floor"] == 0.5 and report["current"]["high"] == 0.75
    correct, absent = clusters(FACTS, ABSENT)
    assert report["current"]["dropsCorrect"] == sum(c < 0.5 for c in correct)
    assert sum(b["correct"] for b in report["histogram"]) == 4 and sum(b["absent"] for b in report["histogram"]) == 3
    assert report["environment"] == {
        "RECALL_MIN_SIMILARITY": f"{report['suggested']['floor']:g}",
        "RECALL_HIGH_SIMILARITY": f"{report['suggested']['high']:g}",
        "RECALL_COSINE_SPREAD": f"{report['spread']:g}",
        "RECALL_MIN_PROBABILITY": f"{report['probabilityFloor']['floor']:g}",
    }
    assert set(report["probabilityFloor"]) == {
        "floor",
        "rule",
        "capped",
        "answered",
        "absent",
        "suggested",
        "shipped",
        "current",
    }
    assert report["probabilityFloor"]["absent"] == 3
    assert report["probabilityFloor"]["suggested"]["dropsAnswered"] == 0
    assert set(report["relevance"]) == {"correct", "nearestOther", "absent"}
    assert report["scoring"] == {
        "retrieval": "hybrid",
        "keywordWeight": 0.6,
        "reads": "relevance = cosine + 0.6 × keyword (RECALL_RETRIEVAL=hybrid; the weight is compiled in)",
    }
    assert set(report["lowestCorrect"][0]) == {"cosine", "relevance", "question", "memory"}


def test_calibrate_tells_an_embedder_without_a_model_what_to_set_and_recall_then_gives_a_probability(
    cli, tmp_path: Path
) -> None:
    """An embedder no model was fitted for (OpenAI-compatible, Bedrock; here the fake one): calibrate
    measures its spread and says to set it; set, recall labels by the embedder-agnostic model's
    bands and says when nothing stored answers; unset, recall keeps the rule-based label."""
    import statistics

    cases = write_cases(tmp_path / "cases.jsonl", FACTS, ABSENT)
    view = cli("calibrate", "--cases", str(cases))
    report = json.loads(cli("calibrate", "--cases", str(cases), "--json").stdout)
    correct, absent = clusters(FACTS, ABSENT)
    spread = round(statistics.median(correct) - statistics.median(absent), 3)
    assert spread > 0 and report["spread"] == spread
    floor = report["suggested"]["floor"]
    assert f"  RECALL_COSINE_SPREAD={spread:g}   rule: the median cosine of a correct answer less" in view.stdout
    assert (
        "what recall answers, by the band of its probability (the embedder-agnostic model, on the suggested "
        f"floor and RECALL_COSINE_SPREAD={spread:g})"
    ) in view.stdout
    said = " ".join(view.stdout.split())  # the console wraps long lines
    assert (
        "This embedder has no relevance model of its own. To have recall label by these bands, give a probability "
        f"and say when nothing stored answers, set RECALL_MIN_SIMILARITY={floor:g} and RECALL_COSINE_SPREAD={spread:g}"
    ) in said
    rows = {row["band"]: row for row in report["bands"]["rows"]}
    assert sum(r["right"] + r["wrong"] for r in rows.values()) == 4 and sum(r["absent"] for r in rows.values()) == 3

    fact = next(iter(FACTS))
    assert cli("remember", fact, MEMORY_TENANT="acme").returncode == 0
    assert cli("remember", "kilo lima mike november oscar papa quebec", MEMORY_TENANT="acme").returncode == 0
    question = FACTS[fact][0]
    measured = {"MEMORY_TENANT": "acme", **report["environment"]}
    asked = json.loads(cli("recall", question, "--json", **measured).stdout)
    assert asked["confidence"] in {"high", "medium", "low"} and asked["results"][0]["content"] == fact
    assert 0 < asked["results"][1]["probability"] < asked["probability"] == asked["results"][0]["probability"] <= 1
    unrelated = cli("recall", ABSENT[0], **measured)
    assert "NOTHING STORED ANSWERS THIS" in unrelated.stdout
    unset = json.loads(cli("recall", question, "--json", MEMORY_TENANT="acme").stdout)
    assert unset["confidence"] in {"high", "medium"} and unset.get("probability") is None


IDENTIFIERS = {
    "Deploy host api.internal:8443 serves checkout_v2 behind the blue gateway": ["where does checkout_v2 run"],
    "Error E1234 from pg_hba.conf means the replica rejected our certificate": ["what is E1234 about"],
    "Release v0.8.2 pins tokenizer ECONNREFUSED retries to five attempts": ["what changed in v0.8.2"],
}
NOT_STORED = ["who approves vacation requests", "where is the office coffee machine", "what is the wifi password"]


def test_calibrate_suggests_the_settings_the_fused_scoring_reads(cli, tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "ids.jsonl", IDENTIFIERS, NOT_STORED)
    hybrid = cli("calibrate", "--cases", str(cases))
    dense = cli("calibrate", "--cases", str(cases), RECALL_RETRIEVAL="dense")
    assert hybrid.returncode == 0 and dense.returncode == 0, hybrid.stderr + dense.stderr
    assert "measured on relevance = cosine + 0.6 × keyword (RECALL_RETRIEVAL=hybrid" in hybrid.stdout
    assert "measured on relevance = the cosine (RECALL_RETRIEVAL=dense)" in dense.stdout
    as_json = {
        name: json.loads(cli("calibrate", "--cases", str(cases), "--json", **extra).stdout)
        for name, extra in (("hybrid", {}), ("dense", {"RECALL_RETRIEVAL": "dense"}))
    }
    for name, report in as_json.items():
        suggested = report["environment"]
        # the spread is what the relevance model reads, and only hybrid retrieval has one (and so a
        # probability, and a floor of it measured on these cases)
        spread = {"RECALL_COSINE_SPREAD", "RECALL_MIN_PROBABILITY"} if name == "hybrid" else set()
        assert set(suggested) == {"RECALL_MIN_SIMILARITY", "RECALL_HIGH_SIMILARITY"} | spread
        view = hybrid.stdout if name == "hybrid" else dense.stdout
        assert f"RECALL_MIN_SIMILARITY={suggested['RECALL_MIN_SIMILARITY']}" in view
        assert f"RECALL_HIGH_SIMILARITY={suggested['RECALL_HIGH_SIMILARITY']}" in view
    # the questions share little but an identifier with their fact: the keyword evidence moves the floor
    assert as_json["hybrid"]["suggested"]["floor"] > as_json["dense"]["suggested"]["floor"]
    assert as_json["hybrid"]["relevance"]["correct"]["min"] > as_json["dense"]["relevance"]["correct"]["max"]
    assert as_json["hybrid"]["clusters"]["correct"] == as_json["dense"]["clusters"]["correct"]  # same cosines


def test_calibrate_refuses_an_unknown_retrieval_naming_the_setting(cli, tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "ids.jsonl", IDENTIFIERS, NOT_STORED)
    result = cli("calibrate", "--cases", str(cases), RECALL_RETRIEVAL="fuzzy")
    assert result.returncode == 2 and result.stdout == ""
    assert 'RECALL_RETRIEVAL must be "hybrid", "dense" or "keyword", got "fuzzy"' in result.stderr


def test_calibrate_on_a_tenant_uses_its_stored_memories_and_writes_nothing(cli, tmp_path: Path) -> None:
    seed(tmp_path, *(("acme", fact, {}) for fact in FACTS))
    listed = json.loads(cli("list", "-t", "acme", "--json").stdout)["memories"]
    ids = {m["id"]: FACTS[m["content"]] for m in listed}
    db = sqlite3.connect(tmp_path / "m.db")
    before = db.execute("select key from objects order by key").fetchall()
    cases = write_cases(tmp_path / "cases.jsonl", ids, ABSENT, key="memory")

    result = cli("calibrate", "--tenant", "acme", "--cases", str(cases), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    correct, absent = clusters(FACTS, ABSENT)
    assert report["tenant"] == "acme" and report["answeredFirst"] == 4
    assert report["clusters"]["correct"]["min"] == pytest.approx(min(correct), abs=1e-4)
    relevance = report["relevance"]
    assert relevance["absent"]["max"] < report["suggested"]["floor"] < relevance["correct"]["min"]
    assert db.execute("select key from objects order by key").fetchall() == before  # no counters, no index
    db.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "error: give either --cases FILE or --builtin"),
        (("--builtin", "--cases", "{cases}"), "error: give either --cases FILE or --builtin"),
        (("--builtin", "--tenant", "acme"), "--builtin brings its own facts"),
        (("--cases", "{missing}"), "does not exist"),
        (("--tenant", "acme", "--cases", "{cases}"), "with --tenant a case names a stored memory as `memory`"),
        (
            ("--tenant", "acme", "--cases", "{by_id}"),
            'line 1: no memory with id "01J00000000000000000000000" in tenant "acme"',
        ),
        (("--tenant", "../x", "--cases", "{by_id}"), "--tenant must start with a letter or digit"),
        (("--tenant", " ", "--cases", "{by_id}"), "error: --tenant is empty"),
        (("--cases", "{huge}"), "holds 10001 texts; one run embeds at most 10000"),
    ],
)
def test_calibrate_refuses_bad_usage_with_exit_2(cli, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    paths = {
        "cases": str(write_cases(tmp_path / "cases.jsonl", FACTS, ABSENT)),
        "by_id": str(write_cases(tmp_path / "ids.jsonl", {"01J00000000000000000000000": ["q"]}, ABSENT, key="memory")),
        "missing": str(tmp_path / "missing.jsonl"),
        "huge": str(write_cases(tmp_path / "huge.jsonl", {"a fact": [f"q{i}" for i in range(9_999)]}, ["absent"])),
    }
    result = cli("calibrate", *(a.format(**paths) for a in args))
    assert result.returncode == 2
    assert message in result.stderr


def test_calibrate_builtin_with_the_local_model_keeps_every_correct_answer(cli) -> None:
    result = cli("calibrate", "--builtin", "--json", EMBEDDING_PROVIDER="local")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["embedder"] == "local:all-MiniLM-L6-v2, 384d" and report["source"] == "the built-in set"
    counts = report["counts"]
    assert counts["facts"] >= 30 and counts["questions"] >= 3 * counts["facts"] and counts["absent"] >= 30
    floor, high = report["suggested"]["floor"], report["suggested"]["high"]
    assert 0 < floor < 1 and floor <= high <= 1
    assert report["suggested"]["dropsCorrect"] == 0 and report["lowestCorrect"][0]["relevance"] >= floor
    assert report["suggested"]["absentHigh"] == 0 and report["suggested"]["wrongHigh"] == 0
    assert report["suggested"]["correctHigh"] >= 1
    assert 0.6 < report["clusters"]["reworded"]["median"] < report["clusters"]["typo"]["median"] <= 1


def test_calibrate_builtin_with_the_local_model_counts_each_band_of_the_probability(cli) -> None:
    report = json.loads(cli("calibrate", "--builtin", "--json", EMBEDDING_PROVIDER="local").stdout)
    bands = report["bands"]
    assert bands["model"] == "local/all-MiniLM-L6-v2"
    rows = {row["band"]: row for row in bands["rows"]}
    assert list(rows) == ["high", "medium", "low", "none"]
    assert rows["high"]["from"] > rows["medium"]["from"] > rows["low"]["from"] > rows["none"]["from"] == 0
    # every question lands in exactly one band, with its answer on top or another memory
    assert sum(r["right"] + r["wrong"] for r in rows.values()) == report["counts"]["questions"]
    assert sum(r["absent"] for r in rows.values()) == report["counts"]["absent"]
    high = rows["high"]
    assert high["right"] >= 9 * (high["wrong"] + high["absent"]) and rows["none"]["right"] == 0

    # the local model reads its own model: no spread to set; a probability floor of these cases' own
    assert set(report["environment"]) == {"RECALL_MIN_SIMILARITY", "RECALL_HIGH_SIMILARITY", "RECALL_MIN_PROBABILITY"}
    assert bands["scale"] is None

    view = cli("calibrate", "--builtin", EMBEDDING_PROVIDER="local").stdout
    assert "what recall answers, by the band of its probability (local/all-MiniLM-L6-v2)" in view
    assert "RECALL_COSINE_SPREAD" not in view
    absent = report["counts"]["absent"]
    said = rows["none"]["absent"]
    assert f"Nothing stored answers: said of {said} of {absent} absent questions and of 0 of" in view
    line = next(x for x in view.splitlines() if x.strip("│ ").startswith("HIGH "))
    assert [c.strip() for c in line.strip("│").split("│")][2:] == [
        str(high["right"]),
        str(high["wrong"]),
        str(high["absent"]),
    ]


# --------------------------------------------------------------------------- every tenant


def test_stats_without_a_tenant_lists_every_tenant_with_its_counts(cli, tmp_path: Path) -> None:
    seed(
        tmp_path,
        ("acme", "Backups are verified every Sunday", {}),
        ("acme", "Run make test-all before every release", {"memory_type": "pattern"}),
        ("acme-2", "This thread prefers short answers", {"conversation": "chat:1", "scope": "conversation"}),
        ("beta", "The release train leaves every second Thursday", {}),
    )

    listed = json.loads(cli("stats", "--json").stdout)
    assert listed == {
        "tenants": [
            {
                "tenant": "acme",
                "total": 2,
                "byType": {"project": 1, "pattern": 1},
                "conversationNotes": 0,
                "lowerBound": False,
            },
            {"tenant": "acme-2", "total": 1, "byType": {"project": 1}, "conversationNotes": 1, "lowerBound": False},
            {"tenant": "beta", "total": 1, "byType": {"project": 1}, "conversationNotes": 0, "lowerBound": False},
        ],
        "truncated": False,
        "limit": 1000,
    }
    readable = cli("stats")
    assert readable.returncode == 0 and "3 tenants." in readable.stdout and "acme-2" in readable.stdout
    # MEMORY_TENANT still means one tenant, and --all-tenants overrides it
    assert json.loads(cli("stats", "--json", MEMORY_TENANT="beta").stdout)["total"] == 1
    assert len(json.loads(cli("stats", "--all-tenants", "--json", MEMORY_TENANT="beta").stdout)["tenants"]) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("stats", "--all-tenants", "--tenant", "acme"), "--all-tenants and --tenant cannot be combined"),
        (("stats", "--conversation", "chat:1"), "--conversation needs --tenant"),
        (("compact", "--all-tenants", "-t", "acme"), "--all-tenants and --tenant cannot be combined"),
    ],
)
def test_every_tenant_at_once_refuses_a_tenant_too(cli, args: tuple[str, ...], message: str) -> None:
    result = cli(*args)
    assert result.returncode == 2 and message in result.stderr


def test_compact_all_tenants_folds_every_tenants_settled_shards(cli, tmp_path: Path) -> None:
    from mcp_memory.core.ids import ulid

    fact = "Backups are verified every Sunday"
    seed(
        tmp_path,
        ("acme", fact, {}),
        ("beta", fact, {}),
        ("gamma", "Nobody recalls this one", {}),  # no counters: not visited
        recalls=(("acme", fact), ("beta", fact)),
    )
    seed(tmp_path, recalls=(("acme", fact), ("beta", fact)))  # a second process: a second shard each
    db = sqlite3.connect(tmp_path / "m.db")
    old = ulid(time.time() * 1000 - 120_000)[:10]  # settled: older than the one-minute lag
    for (key,) in db.execute("select key from objects where key like 'stats/%/shard/%'").fetchall():
        head, name = key.rsplit("/", 1)
        db.execute("update objects set key = ? where key = ?", (f"{head}/{old}{name[10:]}", key))
    db.commit()
    db.close()

    dry = json.loads(cli("compact", "--all-tenants", "--dry-run", "--json").stdout)
    assert dry["dryRun"] is True and [(r["tenant"], r["shards_folded"]) for r in dry["tenants"]] == [
        ("acme", 2),
        ("beta", 2),
    ]
    done = cli("compact", "--all-tenants")
    assert done.returncode == 0
    assert (
        done.stdout.startswith("acme: folded 2 settled shards.\n")
        and "\nbeta: folded 2 settled shards.\n" in done.stdout
    )
    again = json.loads(cli("compact", "--all-tenants", "--json").stdout)
    assert [(r["tenant"], r["shards_folded"], r["accesses"]) for r in again["tenants"]] == [
        ("acme", 0, 2),
        ("beta", 0, 2),
    ]
    assert again["failed"] == [] and again["truncated"] is False
