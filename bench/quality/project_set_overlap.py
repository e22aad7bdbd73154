"""How much each question of the project set shares its gold fact's words (an audit of the set,
not of a method).

    .venv/bin/python -m bench.quality.project_set_overlap

Per question kind and language: the idf-weighted share of the question's words its gold fact
holds (`keywords.coverage`, document counts per tenant; the best gold fact when there are
several), how many questions hold at least half of it and how many none, and the plain share of
the question's distinct content words (not stop words, not CJK character pairs) found in the fact.
A paraphrase set whose questions mostly copy the fact's words measures a reader who remembers the
wording, not one who remembers the meaning.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

from bench.data import project_set_data
from mcp_memory.core import keywords


def main() -> None:
    facts, questions = project_set_data.load()
    text = {f.id: f.text for f in facts}
    frequency: dict[str, Counter[str]] = defaultdict(Counter)
    docs: Counter[str] = Counter()
    for f in facts:
        frequency[f.tenant].update(set(keywords.tokens(f.text)))
        docs[f.tenant] += 1
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for q in questions:
        if not q.gold:
            continue
        stats = keywords.TermStats(docs[q.tenant], frequency[q.tenant])
        terms = keywords.query_terms(q.text)
        covered = max(keywords.coverage(terms, text[g], stats) for g in q.gold)
        held = set().union(*(keywords.tokens(text[g]) for g in q.gold))
        words = [t for t in terms if t in q.text.casefold()]  # as written, not a stem or a pair
        share = sum(t in held for t in words) / len(words) if words else 0.0
        for group in (q.kind, f"{q.kind}, {q.lang}"):
            groups[group].append((covered, share))
    print("| kind | questions | idf share held, mean | median | ≥ 0.5 | none | content words held, mean |")
    print("|---|---|---|---|---|---|---|")
    for group, rows in sorted(groups.items()):
        covered = [c for c, _ in rows]
        print(
            f"| {group} | {len(rows)} | {statistics.mean(covered):.2f} | {statistics.median(covered):.2f} | "
            f"{sum(c >= 0.5 for c in covered) / len(rows):.0%} | {sum(c == 0 for c in covered) / len(rows):.0%} | "
            f"{statistics.mean(s for _, s in rows):.2f} |"
        )


if __name__ == "__main__":
    main()
