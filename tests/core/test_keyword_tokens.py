"""The keyword side's tokens: plain words take a path of str methods, and every chunk's tokens are
kept once cut (core/keywords.py), and what comes out is what the regular expressions alone give,
token for token, on the dev sets' texts (recall's answers must not move: bench/RESULTS.md,
"Recall's first stage without regular expressions for plain words")."""

from __future__ import annotations

import json
import unicodedata

import pytest

from mcp_memory.core import keywords
from tests.conftest import ROOT


def general_tokens(text: str) -> tuple[str, ...]:
    """`keywords.tokens` as it was before the plain-word path and the chunk cache: every chunk cut
    by the regular expressions (`_general_run_tokens`), nothing kept between texts."""
    out: list[str] = []
    for chunk in keywords._CHUNK.findall(unicodedata.normalize("NFKC", text)):
        flag = chunk.startswith("--") and len(chunk) > 2 and chunk[2:3].isalnum()
        core = chunk.strip(keywords._EDGE)
        if not core:
            continue
        whole = ("--" + core if flag else core).casefold()
        runs = keywords._WORD.findall(core)
        if len(runs) == 1 and runs[0] == core:
            if flag and len(whole) <= keywords.TOKEN_MAX:
                out.append(whole)
            keywords._general_run_tokens(core, out)
            continue
        if len(whole) <= keywords.TOKEN_MAX:
            out.append(whole)
        for run in runs:
            keywords._general_run_tokens(run, out)
    return tuple(out)


def dev_set_texts() -> list[str]:
    """Every string of the committed dev sets' JSON lines, and their source texts line by line."""
    texts: list[str] = []

    def strings(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                strings(item)
        elif isinstance(value, list):
            for item in value:
                strings(item)

    data = ROOT / "bench" / "data"
    for path in sorted(data.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                strings(json.loads(line))
    for path in sorted(data.glob("*/src/*.txt")):
        texts.extend(line for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return texts


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("servers", ("servers", "server")),
        ("Servers", ("servers", "server")),
        ("SERVERS", ("servers",)),
        ("API", ("api",)),
        ("A", ("a",)),
        ("Ab", ("ab",)),
        ("8443", ("8443",)),
        ("x" * 64, ("x" * 64,)),
        ("x" * 65, ()),
        ("9" * 65, ()),
        ("getUserName", ("getusername", "get", "user", "name")),
        ("aB", ("ab", "a", "b")),
        ("E1234", ("e1234", "e", "1234")),
        ("ABCs", ("abcs", "ab", "cs")),
        ("Straße", ("strasse", "strass")),
        ("서버가", ("서버가", "서버", "버가")),
    ],
)
def test_a_word_of_any_shape_gives_the_tokens_the_general_rules_give(word: str, expected: tuple[str, ...]) -> None:
    fast: list[str] = []
    keywords._run_tokens(word, fast)
    general: list[str] = []
    keywords._general_run_tokens(word, general)

    assert tuple(fast) == tuple(general) == expected


def test_a_flag_an_identifier_and_a_number_are_cut_as_documented() -> None:
    assert keywords.tokens("--force pg_hba.conf api.internal:8443 v0.8.2") == (
        "--force",
        "force",
        "forc",
        "pg_hba.conf",
        "pg",
        "hba",
        "conf",
        "api.internal:8443",
        "api",
        "internal",
        "8443",
        "v0.8.2",
        "v0",
        "v",
        "0",
        "8",
        "2",
    )


def test_every_dev_set_text_is_cut_into_the_tokens_the_general_rules_give() -> None:
    texts = dev_set_texts()

    differ = [text[:60] for text in texts if keywords.tokens(text) != general_tokens(text)]

    assert len(texts) > 5000  # the record is real: the dev sets were read
    assert differ == []


def test_a_text_cut_again_after_its_chunks_were_met_in_other_texts_gives_the_same_tokens() -> None:
    first = keywords.tokens("Staging runs Postgres 16 on pg-main.internal:5432 for getUserName.")
    keywords.tokens.cache_clear()  # the text forgotten, its chunks still kept

    again = keywords.tokens("Staging runs Postgres 16 on pg-main.internal:5432 for getUserName.")

    assert again == first == general_tokens("Staging runs Postgres 16 on pg-main.internal:5432 for getUserName.")
