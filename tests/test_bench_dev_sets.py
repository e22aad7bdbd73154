"""The update and conversational dev sets in bench/data keep their shape: the committed JSONL is what
their hand-written sources assemble to, and the sizes their READMEs promise hold."""

from __future__ import annotations

import datetime
import importlib.util
import sys
from types import ModuleType

from tests.conftest import ROOT

BENCH = ROOT / "bench"


def builder(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / "data" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def test_the_update_set_jsonl_is_what_its_source_assembles_to_and_holds_165_pairs():
    data = builder("update_set_data")
    assert data.main(["--check"]) == 0
    pairs = data.load()
    assert len(pairs) == 165 and len({p.id for p in pairs}) == 165
    assert {p.kind for p in pairs} == set(data.KINDS)
    assert sum(p.kind == "korean" for p in pairs) == 26
    assert sum(bool(p.past_question) for p in pairs) == 5
    for p in pairs:  # the newer fact is always remembered later
        assert datetime.datetime.fromisoformat(p.new_at) > datetime.datetime.fromisoformat(p.old_at), p.id


def test_the_conversation_set_jsonl_is_what_its_source_assembles_to_and_every_gold_is_a_turn():
    data = builder("conversation_set_data")
    assert data.main(["--check"]) == 0
    turns, questions = data.load()
    assert (len({t.chat for t in turns}), len(turns), len(questions)) == (5, 86, 65)
    chat_of = {t.id: t.chat for t in turns}
    for q in questions:
        assert q.gold and all(chat_of[g] == q.chat for g in q.gold), q.id


def test_the_long_chat_set_jsonl_is_what_its_source_assembles_to_and_every_gold_is_a_turn_of_its_chat():
    data = builder("long_chat_set_data")
    assert data.main(["--check"]) == 0
    turns, questions = data.load()
    assert (len({t.chat for t in turns}), len(turns)) == (5, 317)
    assert (sum(bool(q.gold) for q in questions), sum(not q.gold for q in questions)) == (172, 48)
    assert sum(q.lang == "ko" for q in questions) == 32
    chat_of = {t.id: t.chat for t in turns}
    for q in questions:
        assert all(chat_of[g] == q.chat for g in q.gold), q.id
        assert (q.kind in data.ANSWERABLE_KINDS) == bool(q.gold), q.id
    assert all(t.text.startswith(f"{t.speaker}: ") for t in turns)


def test_the_absent_questions_jsonl_is_what_its_source_assembles_to_and_names_the_conversational_sets_chats():
    data = builder("absent_set_data")
    assert data.main(["--check"]) == 0
    rows = data.load()
    chats = {t.chat for t in builder("conversation_set_data").load()[0]}
    assert len(rows) == 34 and {a.chat for a in rows} == chats
    assert sum(a.lang == "ko" for a in rows) == 6


def test_a_question_s_half_is_fixed_by_its_set_and_id_and_both_halves_are_used():
    halves = builder("halves")
    assert halves.half("project", "bada-q001") == halves.half("project", "bada-q001")
    assert {halves.half("long-chats", f"maya-tom-q{n:02d}") for n in range(1, 30)} == {"fit", "test"}
    # the rule as committed: the first byte of sha256("<set>:<id>"), even = fit
    assert halves.half("madial", 0) == (
        "fit" if __import__("hashlib").sha256(b"madial:0").digest()[0] % 2 == 0 else "test"
    )
    try:
        halves.half("calibration", "x")
    except ValueError as exc:
        assert "calibration" in str(exc)
    else:
        raise AssertionError("the built-in calibration set must never be split for fitting")


def test_the_prompt_set_jsonl_is_what_its_source_assembles_to_with_48_related_and_30_unrelated_prompts():
    data = builder("prompt_set_data")
    assert data.main(["--check"]) == 0
    facts, prompts = data.load()
    ids = {f.id for f in facts}
    assert len(facts) == 27
    assert (sum(bool(p.gold) for p in prompts), sum(not p.gold for p in prompts)) == (48, 30)
    assert all(set(p.gold) <= ids for p in prompts)
