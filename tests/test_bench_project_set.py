"""The project-memory dev set in bench/data keeps its shape: the committed JSONL is what its
hand-written sources assemble to, ids are unique, every gold id is a stored fact, and the counts
the benchmark promises (300 facts, 500 questions, 60 absent, about 15 % Korean) hold."""

from __future__ import annotations

import importlib.util
import json
import sys

from tests.conftest import ROOT

BENCH = ROOT / "bench"


def builder():
    spec = importlib.util.spec_from_file_location("project_set_data", BENCH / "data" / "project_set_data.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("project_set_data", module)
    spec.loader.exec_module(module)
    return module


def rows(name: str) -> list[dict]:
    text = (BENCH / "data" / "project_memory" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_the_committed_jsonl_is_what_the_sources_assemble_to():
    data = builder()
    facts, questions = data.build()
    assert (BENCH / "data/project_memory/facts.jsonl").read_text(encoding="utf-8") == data.jsonl(facts)
    assert (BENCH / "data/project_memory/questions.jsonl").read_text(encoding="utf-8") == data.jsonl(questions)


def test_ids_are_unique_and_every_gold_id_is_a_stored_fact():
    facts, questions = rows("facts.jsonl"), rows("questions.jsonl")
    fact_ids = [f["id"] for f in facts]
    assert len(set(fact_ids)) == len(fact_ids)
    assert len({q["id"] for q in questions}) == len(questions)
    tenant_of = {f["id"]: f["tenant"] for f in facts}
    for q in questions:
        for fact_id in (*q["gold"], *q["near"]):
            assert tenant_of[fact_id] == q["tenant"], q["id"]  # answers live in the asker's tenant
        assert bool(q["gold"]) == (q["kind"] in ("paraphrase", "identifier", "number", "paraphrase-hard")), q["id"]


def test_the_set_has_the_promised_size_and_mix():
    facts, questions = rows("facts.jsonl"), rows("questions.jsonl")
    answerable = [q for q in questions if q["gold"]]
    absent = [q for q in questions if not q["gold"]]
    assert len(facts) >= 300 and len(answerable) >= 500 and len(absent) >= 60
    assert sum(f["lang"] == "ko" for f in facts) >= 0.15 * len(facts)
    assert sum(q["lang"] == "ko" for q in questions) >= 0.15 * len(questions)
    kinds = {k: sum(q["kind"] == k for q in answerable) for k in ("paraphrase", "identifier", "number")}
    assert min(kinds.values()) >= 50, kinds
    assert sum(q["kind"] == "near-miss" for q in absent) >= 30
    assert len({f["project"] for f in facts}) >= 4
    assert all(any(ch.isdigit() for ch in q["text"]) for q in answerable if q["kind"] == "number")


def test_no_question_copies_its_fact_word_for_word():
    facts = {f["id"]: f["text"] for f in rows("facts.jsonl")}
    for q in rows("questions.jsonl"):
        for fact_id in q["gold"]:
            assert q["text"].rstrip("?") not in facts[fact_id], q["id"]


def harness():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("retrieval_eval", BENCH / "quality" / "retrieval_eval.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("retrieval_eval", module)  # dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_the_harness_scores_the_bm25_reference_by_the_share_of_gold_in_the_top_k():
    ev = harness()
    items = [
        ("t", "a", "Use make mock-up when the webhook sender says ECONNREFUSED.", "reference"),
        ("t", "b", "The staging database listens on port 6432.", "project"),
        ("t", "c", "배포는 평일 오전에만 한다.", "project"),
        ("other", "d", "ECONNREFUSED in another tenant.", "project"),
    ]
    probes = [
        ev.Probe("t", "what fixes ECONNREFUSED?", frozenset({"a"})),
        ev.Probe("t", "which port, 6432 or 5433?", frozenset({"b", "c"})),
        ev.Probe("t", "배포는 언제 해?", frozenset({"c"})),
    ]
    rankings = ev.bm25_rankings(items, probes)
    assert rankings == [["a"], ["b"], ["c"]]  # only the asker's tenant, only matching texts
    scores = ev.quality(rankings, probes)
    assert scores["n"] == 3
    assert round(scores["R@1"], 1) == round(100 * (1 + 0.5 + 1) / 3, 1)
    assert scores["hit@5"] == 100.0
