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
