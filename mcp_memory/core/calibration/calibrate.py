"""`calibrate`: measure where correct answers and unrelated questions fall for the
configured embedder, and suggest RECALL_MIN_SIMILARITY and RECALL_HIGH_SIMILARITY (docs/recall.md).

The relevance floor is the one model-specific number a deployment sets, and a
wrong one is quiet both ways: too high and questions are told nothing is
stored, too low and unrelated memories come back as matches. So we measure it.

Cases are JSON lines (blank lines and lines starting with `#` are skipped):

    {"fact": "Deploys go out on Thursdays", "questions": ["When do we release?"],
     "reworded": "We release every Thursday", "typo": "Deploys go out on Thursdyas"}
    {"absent": "Who approves vacation requests?"}

With a tenant, a case names a stored memory instead of giving its text:
`{"memory": "<id>", "questions": [...]}`. Without one, the facts go into a
scratch in-memory store and nothing touches the configured storage. Either way
each question is answered by recall's own pipeline (core/recall.py), at the default
mode and with no access counts: the nearest memories by cosine and the memories
holding its rarer words (VectorStore.query and keyword_query), scored by the
configured retrieval's relevance (cosine + 0.6 × keyword under hybrid, the cosine
alone under dense), ranked, cut to the mode's limit, put newest first, and judged
for HIGH on the top result as shown, as recall judges it (recall.settle). No floor is applied, since the floor is what is
measured. The floor and the HIGH mark read that relevance, so the suggestions are
measured on it; the cosines are reported beside it. The statistics and the rules
for the suggestions are in stats.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from mcp_memory.core import fusion, judgment, keywords, ranking, recall
from mcp_memory.core.calibration import stats as cs
from mcp_memory.core.errors import InvalidArgument
from mcp_memory.core.model import Hit, Memory, Ranked, Retrieval
from mcp_memory.core.ports import Embedder, VectorStore, describe
from mcp_memory.core.sizes import CONTENT_MAX_BYTES, content_overflow

__all__ = [
    "Cases",
    "CalibrationReport",
    "Fact",
    "builtin_cases",
    "calibrate",
    "load_cases",
    "parse_cases",
]

#: The most texts one run embeds (facts, questions, variants and absent questions together).
MAX_TEXTS = 10_000
#: Texts per embed call, so the progress bar moves.
EMBED_BATCH = 32
SCRATCH_TENANT = "calibration"
BUILTIN_NAME = "calibration_builtin.jsonl"
#: Below this many correct answers or absent questions the suggestion is called rough.
FEW_CASES = 10

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Fact:
    """A stored fact and the questions that should find it."""

    line: int
    questions: tuple[str, ...]
    text: str | None = None
    memory_id: str | None = None
    reworded: tuple[str, ...] = ()
    typos: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Cases:
    source: str
    facts: tuple[Fact, ...]
    absent: tuple[str, ...]
    #: True when the facts name stored memories (calibrating on a tenant's data).
    by_id: bool = False

    @property
    def text_count(self) -> int:
        per_fact = sum(1 + len(f.questions) + len(f.reworded) + len(f.typos) for f in self.facts)
        return per_fact + len(self.absent)


# --------------------------------------------------------------------------- reading cases

_KEYS = {"fact", "memory", "questions", "reworded", "typo", "absent"}


def _texts(value: object, where: str, name: str, *, required: bool) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if value is None and not required:
        return ()
    if not isinstance(items, list) or not items or not all(isinstance(t, str) and t.strip() for t in items):
        kind = "a non-empty list of non-empty strings" if required else "a non-empty string or list of them"
        raise InvalidArgument(f"{where}: `{name}` must be {kind}")
    for text in items:
        size = content_overflow(text)
        if size is not None:
            raise InvalidArgument(f"{where}: a `{name}` text is {size} bytes; the maximum is {CONTENT_MAX_BYTES}")
    return tuple(items)


def _case(obj: object, where: str, line: int, by_id: bool) -> Fact | tuple[str, ...]:
    if not isinstance(obj, dict):
        raise InvalidArgument(f"{where}: each line must be a JSON object")
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise InvalidArgument(
            f"{where}: unknown key `{unknown[0]}` (known: absent, fact, memory, questions, reworded, typo)"
        )
    if "absent" in obj:
        if len(obj) != 1:
            raise InvalidArgument(f"{where}: an `absent` line carries nothing else")
        return _texts(obj["absent"], where, "absent", required=True)
    if "fact" in obj and "memory" in obj:
        raise InvalidArgument(f"{where}: give `fact` (a text) or `memory` (a stored id), not both")
    if "memory" in obj and not by_id:
        raise InvalidArgument(
            f"{where}: `memory` names a stored memory, which needs --tenant; without it give the text as `fact`"
        )
    if "fact" in obj and by_id:
        raise InvalidArgument(
            f'{where}: with --tenant a case names a stored memory as `memory`: "<id>", not a `fact` text'
        )
    if "fact" not in obj and "memory" not in obj:
        raise InvalidArgument(f"{where}: a line needs `fact` (or `memory` with --tenant) and `questions`, or `absent`")
    questions = _texts(obj.get("questions"), where, "questions", required=True)
    reworded = _texts(obj.get("reworded"), where, "reworded", required=False)
    typos = _texts(obj.get("typo"), where, "typo", required=False)
    if by_id:
        memory_id = obj["memory"]
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidArgument(f"{where}: `memory` must be a memory id")
        return Fact(line, questions, memory_id=memory_id.strip(), reworded=reworded, typos=typos)
    if not isinstance(obj["fact"], str) or not obj["fact"].strip():
        raise InvalidArgument(f"{where}: `fact` must be a non-empty string")
    (text,) = _texts(obj["fact"], where, "fact", required=True)
    return Fact(line, questions, text=text, reworded=reworded, typos=typos)


def parse_cases(text: str, source: str, *, by_id: bool = False) -> Cases:
    """Read JSON-lines cases; InvalidArgument names the source, the line and the field."""
    facts: list[Fact] = []
    absent: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source} line {number}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise InvalidArgument(f"{where}: not valid JSON ({exc.args[0].split(':')[0]})") from None
        except RecursionError:
            raise InvalidArgument(f"{where}: not valid JSON (nested too deep)") from None
        case = _case(obj, where, number, by_id)
        if isinstance(case, Fact):
            facts.append(case)
        else:
            absent.extend(case)
    if not facts:
        kind = '{"memory": "<id>", "questions": [...]}' if by_id else '{"fact": "...", "questions": [...]}'
        raise InvalidArgument(f"{source} has no facts: add lines like {kind}")
    if not absent:
        raise InvalidArgument(
            f'{source} has no absent questions: add lines like {{"absent": "a question about something not stored"}}'
        )
    cases = Cases(source, tuple(facts), tuple(absent), by_id)
    if cases.text_count > MAX_TEXTS:
        raise InvalidArgument(f"{source} holds {cases.text_count} texts; one run embeds at most {MAX_TEXTS}")
    return cases


def load_cases(path: Path, *, by_id: bool = False) -> Cases:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"--cases {path}: cannot be read ({exc.__class__.__name__})") from None
    return parse_cases(text, str(path), by_id=by_id)


def builtin_cases() -> Cases:
    """The built-in set shipped with the package: project-memory facts (decisions,
    conventions, commands, references), differently phrased questions, and absent questions."""
    from importlib.resources import files

    text = (files("mcp_memory") / "data" / BUILTIN_NAME).read_text(encoding="utf-8")
    return parse_cases(text, "the built-in set")


# --------------------------------------------------------------------------- the report


@dataclass(frozen=True, slots=True)
class Pair:
    """A question (or variant) and the memory it was compared with: its cosine, and the relevance
    recall's floor and HIGH mark read (equal to the cosine under dense retrieval)."""

    cosine: float
    question: str
    memory: str
    relevance: float | None = None
    #: The highest HIGH mark at which recall labels this question's answer HIGH (0: none would).
    #: For a question, only when its answer is the top result (a HIGH wrong answer is `wrong_high`).
    reach: float = 0.0

    @property
    def score(self) -> float:
        return self.cosine if self.relevance is None else self.relevance


#: The relevance model's bands, most probable first ("none": nothing stored answers).
BANDS = ("high", "medium", "low", "none")


@dataclass(frozen=True, slots=True)
class BandRow:
    """One band of the answer's probability: how many questions (with an answer stored) landed in
    it with their answer on top (`right`) or another memory (`wrong`), and how many absent ones."""

    band: str
    right: int = 0
    wrong: int = 0
    absent: int = 0


@dataclass(frozen=True)
class Reliability:
    """The reliability of the relevance model's bands on the cases (docs/recall.md#confidence)."""

    #: The model's name in the weights file (`<provider>/<model>`, or `generic`).
    model: str
    bands: judgment.Bands
    rows: list[BandRow]
    #: For the embedder-agnostic model (an embedder with none of its own): the scale it read
    #: cosines on, (the suggested floor, that floor + the measured spread).
    scale: tuple[float, float] | None = None

    def row(self, band: str) -> BandRow:
        return next(r for r in self.rows if r.band == band)


#: What recall with the model answered to each case: its Judgment, and the memory that answers it
#: (None for an absent question).
Judged = Sequence[tuple["Judgment", str | None]]


def _reliability(model: judgment.Model, judged: Judged) -> Reliability:
    """The band table from each question's band and whether its answer was on top, and each absent
    question's band."""
    questions = [(j.band, j.top == answer) for j, answer in judged if answer is not None]
    absent = [j.band for j, answer in judged if answer is None]
    rows = [
        BandRow(
            band,
            sum(1 for b, right in questions if b == band and right),
            sum(1 for b, right in questions if b == band and not right),
            sum(1 for b in absent if b == band),
        )
        for band in BANDS
    ]
    return Reliability(model.key, model.bands, rows, model.scale if model.key == judgment.GENERIC else None)


@dataclass(frozen=True, slots=True)
class ProbabilityFloor:
    """RECALL_MIN_PROBABILITY suggested for these cases (docs/calibration.md#a-probability-floor-of-your-own):
    the similarity floor's rule (stats.suggest_floor) on the answer's probability, a question
    counting when its answer is among the first five results, at most where MEDIUM starts. Beside
    it, what the model's own floor and the configured one do to the same cases."""

    suggestion: cs.FloorSuggestion
    #: The model's floor as shipped (or the agnostic model's), and as configured (RECALL_MIN_PROBABILITY).
    shipped: float
    configured: float
    #: Questions whose answer is among the first five, and absent questions (one with nothing near
    #: enough to be judged is admitted by no probability floor).
    answered: int
    absent: int
    #: (dropped answered questions, admitted absent ones) at the shipped and the configured floor.
    at_shipped: tuple[int, int]
    at_configured: tuple[int, int]
    #: Why the rule's value was lowered to where MEDIUM starts, or None.
    capped: str | None = None


def _probability_floor(model: judgment.Model, own: float, judged: Judged) -> ProbabilityFloor | None:
    """What `ProbabilityFloor` says (`own`: the model's floor as shipped), or None without an
    answered question or an absent one. An absent question with nothing near enough to judge
    counts as 0: no probability floor admits it."""
    answered = [j.probability for j, answer in judged if answer is not None and answer in j.first]
    absent = [j.probability if j.near else 0.0 for j, answer in judged if answer is None]
    if not answered or not absent:
        return None
    suggestion, capped = cs.suggest_floor(answered, absent), None
    if suggestion.floor > model.bands.medium:
        capped = (
            f"the rule gives {suggestion.floor:g}; MEDIUM starts at {model.bands.medium:g}, so the suggestion is that"
        )
        top = model.bands.medium
        suggestion = replace(suggestion, floor=top, drops=cs.drops(answered, top), admits=cs.admits(absent, top))
    return ProbabilityFloor(
        suggestion,
        own,
        model.bands.floor,
        len(answered),
        len(absent),
        (cs.drops(answered, own), cs.admits(absent, own)),
        (cs.drops(answered, model.bands.floor), cs.admits(absent, model.bands.floor)),
        capped,
    )


@dataclass(frozen=True)
class CalibrationReport:
    embedder: str
    source: str
    #: The tenant calibrated on, or None for the scratch store.
    tenant: str | None
    facts: int
    #: Each question against the memory that answers it.
    correct: list[Pair]
    #: For each question, the nearest memory that is not its answer.
    nearest_other: list[float]
    #: Questions whose answer is the nearest memory.
    answered_first: int
    #: Each absent question against its nearest memory.
    absent: list[Pair]
    reworded: list[float]
    typos: list[float]
    current_floor: float
    current_high: float
    #: What the floor and HIGH read: hybrid (cosine + KEYWORD_WEIGHT × keyword), dense or keyword.
    retrieval: recall.RetrievalMode
    #: For each question, the relevance of the most relevant memory that is not its answer.
    nearest_other_relevance: list[float]
    #: For each question whose top result is another memory, the highest mark labelling that HIGH.
    wrong_reach: list[float]
    floor: cs.FloorSuggestion
    high: cs.HighSuggestion
    fewest_errors: cs.Threshold
    warnings: list[str] = field(default_factory=list)
    #: The relevance model's bands on these cases; None without a model for this embedder (or
    #: under dense or keyword retrieval): recall then labels by the rule the marks above set.
    reliability: Reliability | None = None
    #: RECALL_MIN_PROBABILITY measured on these cases; None without a model (as `reliability`).
    probability_floor: ProbabilityFloor | None = None

    @property
    def correct_cosines(self) -> list[float]:
        return [p.cosine for p in self.correct]

    @property
    def absent_cosines(self) -> list[float]:
        return [p.cosine for p in self.absent]

    @property
    def spread(self) -> float | None:
        """RECALL_COSINE_SPREAD for this embedder (stats.spread)."""
        return cs.spread(self.correct_cosines, self.absent_cosines)

    @property
    def correct_relevance(self) -> list[float]:
        return [p.score for p in self.correct]

    @property
    def absent_relevance(self) -> list[float]:
        return [p.score for p in self.absent]

    def labelled_high(self, high: float) -> dict[str, int]:
        """How many cases recall's whole HIGH rule labels HIGH at the mark `high`: right answers,
        absent questions, and questions whose top result is not their answer."""

        def at(reaches: Sequence[float]) -> int:
            return sum(1 for x in reaches if x > 0 and x >= high)

        return {
            "correctHigh": at([p.reach for p in self.correct]),
            "absentHigh": at([p.reach for p in self.absent]),
            "wrongHigh": at(self.wrong_reach),
        }

    def current(self) -> dict[str, int]:
        """What the configured floor and HIGH threshold do to the measured cases (by relevance)."""
        c, a = self.correct_relevance, self.absent_relevance
        return {
            "dropsCorrect": cs.drops(c, self.current_floor),
            "admitsAbsent": cs.admits(a, self.current_floor),
            **self.labelled_high(self.current_high),
        }


def _warnings(report: CalibrationReport) -> list[str]:
    c, a = report.correct_relevance, report.absent_relevance
    out: list[str] = []
    if not report.floor.separated:
        lowest, highest = min(c), max(a)
        out.append(
            f"The clusters overlap: {cs.admits(a, lowest)} absent questions reach the lowest correct answer "
            f"({lowest:.3f}) and {sum(1 for x in c if x <= highest)} correct answers are at or below the highest "
            f"absent question ({highest:.3f}). No floor separates them for this embedder. The suggested floor "
            + (
                "keeps every correct answer"
                if not report.floor.drops
                else f"drops {report.floor.drops} correct answers"
            )
            + f" and admits {report.floor.admits} of {len(a)} absent questions as weak matches; "
            f"the fewest misclassifications would be {report.fewest_errors.floor:g}, which drops "
            f"{report.fewest_errors.drops} correct answers and admits {report.fewest_errors.admits}."
        )
    if report.floor.clamped:
        out.append(f"Not suggesting 0: {report.floor.clamped}.")
    now = report.current()
    if now["dropsCorrect"]:
        out.append(
            f"The current floor ({report.current_floor:g}) drops {now['dropsCorrect']} of {len(c)} correct "
            "answers: those questions would be told nothing matched."
        )
    if now["absentHigh"]:
        out.append(
            f"The current HIGH threshold ({report.current_high:g}) labels {now['absentHigh']} of {len(a)} absent "
            "questions HIGH CONFIDENCE."
        )
    if not report.retrieval.embedding:
        out.append(
            "RECALL_RETRIEVAL=keyword reads no floor (every keyword hit is a candidate): only the HIGH mark applies."
        )
    if len(c) < FEW_CASES or len(a) < FEW_CASES:
        out.append(
            f"Only {len(c)} correct answers and {len(a)} absent questions were measured: the suggestion is rough "
            "(30 or more of each make it steadier)."
        )
    return out


# --------------------------------------------------------------------------- measuring


async def _embed_all(embedder: Embedder, texts: Sequence[str], progress: Progress | None) -> np.ndarray:
    rows = []
    if progress:
        progress(0, len(texts))
    for start in range(0, len(texts), EMBED_BATCH):
        rows.append(await embedder.embed([recall.embedding_input(t) for t in texts[start : start + EMBED_BATCH]]))
        if progress:
            progress(min(start + EMBED_BATCH, len(texts)), len(texts))
    return np.concatenate(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)


async def _stored(cases: Cases, vectors: VectorStore, tenant: str) -> list[Memory]:
    ids = [f.memory_id for f in cases.facts if f.memory_id]
    found = {m.id: m for m in await vectors.get(tenant, ids)}
    memories = []
    for fact in cases.facts:
        memory = found.get(fact.memory_id or "")
        where = f"{cases.source} line {fact.line}"
        if memory is None:
            raise InvalidArgument(f'{where}: no memory with id "{fact.memory_id}" in tenant "{tenant}"')
        if memory.scope == "conversation":
            raise InvalidArgument(
                f'{where}: memory "{memory.id}" is a conversation note; calibrate on project memories'
            )
        memories.append(memory)
    return memories


#: recall at the default mode: its candidate pool and its ratio gate are what each question meets.
MODE = ranking.DEFAULT_MODE
LIMIT = ranking.MODE_TABLE[MODE].limit
CANDIDATES = ranking.candidate_count(LIMIT)
#: A question counts as answered for a probability floor when its answer is among this many first
#: results (the rule the model's own floor was chosen by: core/judgment.py, bench/quality/judgment_fit.py).
FIRST = 5


@dataclass(frozen=True, slots=True)
class _Answer:
    """What recall does with one question (core/recall.py), before any floor: `scored` every
    candidate by relevance, `results` the ranking recall returns, `reach` its highest HIGH mark."""

    scored: list[recall.Candidate]
    results: list[Ranked]
    reach: float
    terms: list[str]
    found: recall.Found
    readable: float
    #: With a relevance model (core/judgment.py): recall's answer as recall gives it at the
    #: configured floor, its probability, its band ("none": nothing stored answers) and its top's id.
    judged: Judgment | None = None


@dataclass(frozen=True, slots=True)
class Judgment:
    """What recall with its relevance model answers one question: the answer's probability, its
    band (`high`, `medium`, `low`, or `none` when nothing stored answers), and the top's memory id."""

    probability: float
    band: str
    top: str | None
    #: The first five results' ids as recall would show them with no probability floor (what a
    #: floor of the operator's own is measured against: docs/calibration.md#a-probability-floor-of-your-own).
    first: tuple[str, ...] = ()
    #: Whether some candidate reaches the relevance floor (when none does, no probability floor matters).
    near: bool = True


def _judgment(
    model: judgment.Model,
    retrieval: recall.RetrievalMode,
    text: str,
    terms: list[str],
    found: recall.Found,
    readable: float,
    scored: list[recall.Candidate],
    floor: float,
    now: float,
) -> Judgment:
    """recall's second stage and gate at `floor` (core/recall.py), as MemoryService.recall runs
    them at the default mode, cold: the band of its answer's probability, and its top."""
    judged = recall.judge(model, retrieval, text, terms, found, readable, scored)
    floorless = replace(model, bands=replace(model.bands, floor=0.0))
    every = recall.gate(retrieval, judged.candidates, floor, MODE, floorless)
    ranked = recall.rank(every.keeping, {}, every.top, MODE, now)
    first, near = tuple(r.memory.id for r in ranked[:FIRST]), bool(every.keeping)
    # the model's floor only decides whether anything is kept: what is kept is what the floorless gate keeps
    gated = recall.gate(retrieval, judged.candidates, floor, MODE, model)
    if not gated.keeping:
        best = max((c.probability or 0.0 for c in gated.relevant), default=0.0)
        return Judgment(best, "none", None, first, near)
    ranked = ranked[:LIMIT]
    probability = recall.answer_probability(ranked) or 0.0
    return Judgment(probability, model.bands.label(probability), ranked[0].memory.id, first, near)


async def _answer(
    store: VectorStore,
    embedder: Embedder,
    tenant: str,
    vector: np.ndarray,
    text: str,
    retrieval: recall.RetrievalMode,
    readable: float,
    now: float,
    model: judgment.Model | None = None,
    floor: float = 0.0,
) -> _Answer:
    """`text` answered as recall answers it at the default mode and limit, cold (no access counts)
    and without a floor, since the floor is what is measured: ranked by composite score, then
    newest first and HIGH judged as recall does (recall.settle), so the top is recall's top."""
    nearest = await store.query(tenant, vector, CANDIDATES, None) if retrieval.embedding else []
    terms = keywords.query_terms(text) if retrieval.keywords else []
    answer = await store.keyword_query(tenant, vector, terms, CANDIDATES, None) if terms else None
    found = recall.Found(nearest, answer)
    scored = recall.candidates(retrieval, terms, found, readable)
    gated = recall.gate(retrieval, scored, 0.0, ranking.MODE_TABLE[MODE].keep_ratio)
    ranked = recall.rank(gated.keeping, {}, gated.top, MODE, now)[:LIMIT]
    shown = await recall.settle(
        retrieval, ranked, gated.relevant, terms, answer, lambda ms: recall.read_vectors(store, embedder, tenant, ms)
    )
    reach = recall.high_reach(retrieval, shown.results, gated.relevant, terms, answer, shown.near)
    judged = None
    if model is not None and retrieval.fused:
        judged = (
            _judgment(model, retrieval, text, terms, found, readable, scored, floor, now)
            if scored
            else Judgment(0.0, "none", None, near=False)
        )
    return _Answer(
        sorted(scored, key=lambda c: c.relevance, reverse=True), shown.results, reach, terms, found, readable, judged
    )


def _relevance(memory: Memory, cosine: float, asked: _Answer, retrieval: recall.RetrievalMode) -> float:
    """`memory`'s relevance to the question: as scored among the candidates, or, when it is not
    one of them, as it would score had both searches returned it too."""
    for candidate in asked.scored:
        if candidate.memory.id == memory.id:
            return candidate.relevance
    hit = Hit(memory, cosine)
    answer = asked.found.keyword
    widened = recall.Found(
        [*asked.found.nearest, hit], replace(answer, hits=[*answer.hits, hit]) if answer is not None else None
    )
    for candidate in recall.candidates(retrieval, asked.terms, widened, asked.readable):
        if candidate.memory.id == memory.id:
            return candidate.relevance
    return 0.0


async def calibrate(
    embedder: Embedder,
    cases: Cases,
    *,
    floor: float,
    high: float,
    vectors: VectorStore | None = None,
    tenant: str | None = None,
    scratch: VectorStore | None = None,
    progress: Progress | None = None,
    retrieval: Retrieval | recall.RetrievalMode = "hybrid",
    now: float | None = None,
    min_probability: float | None = None,
) -> CalibrationReport:
    """Measure `cases` with `embedder` and suggest a floor and a HIGH threshold for the relevance
    `retrieval` scores by (the setting RECALL_RETRIEVAL; hybrid by default).

    With `cases.by_id` the facts are `tenant`'s memories in `vectors` (read, never
    written). Otherwise they go into `scratch`, an empty store this call fills and
    closes, and `vectors` is not used. `progress(done, total)` follows the embedding. `now` (ms,
    the wall clock by default) is the instant recall's recency is measured from.
    `min_probability` (RECALL_MIN_PROBABILITY) is the relevance model's floor as configured.
    """
    mode = recall.retrieval_mode(retrieval)
    at = time.time() * 1000.0 if now is None else now
    model = judgment.model_for(embedder) if mode.fused else None
    own_floor = model.bands.floor if model is not None else 0.0  # as shipped
    model = model.with_floor(min_probability) if model is not None else None
    judged: list[tuple[Judgment, str | None]] = []  # the band table and the probability floor read it
    # an embedder with no model of its own: each question as asked, judged once the floor and the
    # spread are measured, by the embedder-agnostic model on them (what recall reads once they are set)
    later: list[tuple[str, _Answer, str | None]] | None = [] if mode.fused and model is None else None
    if cases.by_id:
        if vectors is None or tenant is None:
            raise ValueError("calibrating on stored memories needs the vector store and the tenant")
        memories = await _stored(cases, vectors, tenant)
        store, store_tenant = vectors, tenant
    else:
        if scratch is None:
            raise ValueError("calibrating on text cases needs a scratch vector store")
        store, store_tenant = scratch, SCRATCH_TENANT
        memories = [
            Memory(id=f"case-{i:05d}", tenant=SCRATCH_TENANT, content=f.text or "")
            for i, f in enumerate(cases.facts, start=1)
        ]
    facts = cases.facts
    questions = [q for f in facts for q in f.questions]
    reworded = [r for f in facts for r in f.reworded]
    typos = [t for f in facts for t in f.typos]
    texts = [m.content for m in memories] + questions + reworded + typos + list(cases.absent)
    vectors_all = await _embed_all(embedder, texts, progress)
    cuts = np.cumsum([len(memories), len(questions), len(reworded), len(typos)])
    fact_v, question_v, reworded_v, typo_v, absent_v = np.split(vectors_all, cuts)
    try:
        if not cases.by_id:
            for memory, vector in zip(memories, fact_v):
                await store.put(memory, vector)
        correct, nearest_other, nearest_other_relevance, wrong_reach, first = [], [], [], [], 0
        q = 0
        for i, fact in enumerate(facts):
            for question in fact.questions:
                vector = question_v[q]
                q += 1
                cosine = float(np.dot(vector, fact_v[i]))
                readable = fusion.readable_share(question, embedder.scripts)
                asked = await _answer(store, embedder, store_tenant, vector, question, mode, readable, at, model, floor)
                if asked.judged is not None:
                    judged.append((asked.judged, memories[i].id))
                if later is not None:
                    later.append((question, asked, memories[i].id))
                relevance = _relevance(memories[i], cosine, asked, mode)
                answered = bool(asked.results) and asked.results[0].memory.id == memories[i].id
                correct.append(Pair(cosine, question, memories[i].content, relevance, asked.reach if answered else 0.0))
                first += answered
                if not answered:
                    wrong_reach.append(asked.reach)
                others = [c for c in asked.scored if c.memory.id != memories[i].id]
                if others:
                    nearest_other.append(max(c.similarity for c in others))
                    nearest_other_relevance.append(others[0].relevance)
        absent = []
        for question, vector in zip(cases.absent, absent_v):
            readable = fusion.readable_share(question, embedder.scripts)
            asked = await _answer(store, embedder, store_tenant, vector, question, mode, readable, at, model, floor)
            if asked.judged is not None:
                judged.append((asked.judged, None))
            if later is not None:
                later.append((question, asked, None))
            if asked.scored:
                nearest = max(c.similarity for c in asked.scored)
                top = asked.scored[0]
                absent.append(Pair(nearest, question, top.memory.content, top.relevance, asked.reach))
    finally:
        if not cases.by_id:
            await store.close()
    owners = [i for i, f in enumerate(facts) for _ in f.reworded]
    typo_owners = [i for i, f in enumerate(facts) for _ in f.typos]
    c = [p.score for p in correct]
    a = [p.score for p in absent]
    floor_suggestion = cs.suggest_floor(c, a)
    spread = cs.spread([p.cosine for p in correct], [p.cosine for p in absent])
    if later is not None and spread is not None:
        suggested = floor_suggestion.floor
        model = judgment.generic_model((suggested, suggested + spread))
        own_floor = model.bands.floor if model is not None else 0.0
        model = model.with_floor(min_probability) if model is not None else None
        for question, asked, answer in later if model is not None else ():
            assert model is not None
            judged.append(
                (
                    _judgment(
                        model, mode, question, asked.terms, asked.found, asked.readable, asked.scored, suggested, at
                    )
                    if asked.scored
                    else Judgment(0.0, "none", None, near=False),
                    answer,
                )
            )
    report = CalibrationReport(
        embedder=describe(embedder),
        source=cases.source,
        tenant=store_tenant if cases.by_id else None,
        facts=len(facts),
        correct=correct,
        nearest_other=nearest_other,
        answered_first=first,
        absent=absent,
        reworded=[float(np.dot(v, fact_v[i])) for v, i in zip(reworded_v, owners)],
        typos=[float(np.dot(v, fact_v[i])) for v, i in zip(typo_v, typo_owners)],
        current_floor=floor,
        current_high=high,
        retrieval=mode,
        nearest_other_relevance=nearest_other_relevance,
        wrong_reach=wrong_reach,
        floor=floor_suggestion,
        # HIGH is measured against recall's whole rule: a question counts at the highest mark that
        # labels its right answer HIGH; an absent question, or a wrong top result, at the highest
        # mark that labels it HIGH, and the suggestion is raised above those
        high=cs.suggest_high(
            [p.reach for p in correct], [p.reach for p in absent] + wrong_reach, floor_suggestion.floor
        ),
        fewest_errors=cs.fewest_errors(c, a),
        reliability=_reliability(model, judged) if model is not None else None,
        probability_floor=_probability_floor(model, own_floor, judged) if model is not None else None,
    )
    report.warnings.extend(_warnings(report))
    return report
