"""The second look at the top: for each of recall's first candidates, the probability that it
answers the question (docs/recall.md#the-probability).

Pure functions and numpy, no I/O but reading the fitted weights shipped in the package
(`mcp_memory/data/judgment.json`, refitted by `python -m bench.quality.judgment_fit`). Two small
logistic models per embedder:

- the **ranker** reads, for each of the SECOND_LOOK most relevant candidates, what recall already
  has or can cheaply compute (`FEATURES`): its cosine and keyword evidence, how much of the
  question's information and of its names and numbers it holds, how far it stands from the best
  and the next candidate, its rank by meaning, whether it is itself a question, what kind of
  answer the question wants (a number, a name) and whether the memory holds one, the question's
  numbers it lacks, and whether it speaks to someone (a reply rather than a fact). Nothing it reads
  depends on when a memory was written, so facts written in a burst read as facts written at one
  instant (bench/RESULTS.md, "Write times no longer move the relevance model"); which of two near
  memories is newer is newest-first's rule, applied after it (core/supersede.py);
- the **calibrator** reads the top of that order (`TOP_FEATURES`; among them whether the question
  names a number no candidate holds while the top holds another: bench/RESULTS.md, "Numbers the
  question names and nothing found holds") and says how likely it is to answer: the probability
  of the top result. Every candidate's probability is its ranker score
  moved by the calibrator's correction, so the order is the ranker's and the top reads the
  calibrated number.

HIGH / MEDIUM / LOW are bands of that probability, chosen per embedder on the fit halves of the
dev sets (`Bands`); below the floor nothing stored answers the question. Cosines are read on the
embedder's own scale: `(cosine − floor) / (high − floor)` with the floor and HIGH mark the model
was fitted with. An embedder with no model of its own (OpenAI-compatible, Bedrock) reads the
embedder-agnostic model (`generic_model`), fitted on every local model's tables at once without
what one embedder's scale does not carry to another's (how close a candidate is in absolute
terms), on the spread its operator measured with `mcp-memory calibrate` (RECALL_COSINE_SPREAD);
until that is set it gets none and recall keeps the rule-based label
(docs/recall.md#an-embedder-without-a-model-of-its-own).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import regex

from mcp_memory.core.dedup_words import KO_NUMBER_PREFIXES, NUMBER_WORDS
from mcp_memory.core.keywords import TermStats, text_keys

if TYPE_CHECKING:  # numpy loads with the first vector
    import numpy as np

    from mcp_memory.core.fusion import Candidate

__all__ = [
    "ASPECTS",
    "FEATURES",
    "GENERIC",
    "SECOND_LOOK",
    "TOP_FEATURES",
    "Bands",
    "Judged",
    "Linear",
    "Model",
    "Reason",
    "features",
    "generic_model",
    "load_model",
    "model_for",
]

#: How many of the most relevant candidates the second stage reads and reorders.
SECOND_LOOK = 50
#: A query with more informative terms than this reads as a whole conversation (fusion.QUESTION_TERMS).
LONG_QUERY = 20
#: Where the weights live, inside the package.
WEIGHTS = "judgment.json"
#: The embedder-agnostic model's name in the weights file (and its Model.key).
GENERIC = "generic"

#: What the ranker reads of each candidate, in its order in the weights file.
FEATURES = (
    "cosine",  # the cosine on the embedder's scale
    "keyword",  # the keyword evidence (BM25 over the query's best), at most 2
    "coverage",  # the share of the query's information the memory holds (keywords.coverage)
    "relevance",  # the first stage's relevance on the embedder's scale
    "cosine_below_best",  # its cosine less the best candidate's
    "relevance_below_best",
    "relevance_lead",  # its relevance less the best of the others' (negative below the top)
    "cosine_lead",
    "cosine_rank",  # log(1 + its place by cosine)
    "relevance_rank",
    "held",  # the share of the query's information any memory holds (query-level)
    "query_terms",  # the query's informative terms / 20, at most 3 (a whole conversation reads long)
    "readable",  # the share of the query the embedder reads (fusion.readable_share)
    "specific_coverage",  # the share of the query's numbers and names the memory holds
    "has_specific",  # whether the query names a number or a name at all
    "length",  # log(1 + the memory's tokens)
    "best_cosine",  # the best candidate's cosine (query-level: is anything close at all)
    "wants_number",  # the question asks how much, how many, when (in English or Korean)
    "number_held",  # ... and the memory holds a number or a date
    "number_missing",  # ... and it holds none
    "wants_name",  # the question asks who, which, where
    "name_held",  # ... and the memory names someone or something
    "largest_gap",  # the largest share of the query's information the memory lacks in one term
    "is_question",  # the memory asks a question itself
    "crowd",  # log of how many candidates stand near the best one
    "cosine_read",  # cosine × readable
    "cosine_lead_read",  # cosine_lead × readable
    "keyword_unread",  # keyword × (1 − readable): keywords standing in for an unread cosine
    "number_unmatched",  # the share of the question's numbers (3306, 1.31) the memory does not hold
    "number_conflict",  # the question names a number no candidate holds, and this one holds another
    "addressed",  # the memory speaks to someone (you, your): a conversational reply rather than a fact
)
#: What the calibrator reads of the top of the ranker's order.
TOP_FEATURES = (
    "score",  # the ranker's logit for the top candidate
    "score_gap",  # ... less the second's
    "coverage",
    "held",
    "cosine",
    "cosine_lead",
    "query_terms",
    "is_question",
    "crowd",
    "number_conflict",
    "largest_gap",
    "specific_coverage",
)

_WANTS_NUMBER = regex.compile(
    r"\b(how (much|many|old|long|far|big|heavy|tall|fast|often|deep)|what (time|year|date|day|price|size|version|port)"
    r"|when)\b|얼마|몇|언제",
    regex.IGNORECASE,
)
_WANTS_NAME = regex.compile(r"\b(who|whom|whose|which|where|name|called)\b|누구|누가|어디|이름|어느", regex.IGNORECASE)
_DIGIT = regex.compile(r"\p{Nd}")
_WORDS = regex.compile(r"[\p{L}\p{N}'’-]+|[.?!]")
_LOWER_WORDS = regex.compile(r"\p{Ll}+")
_SPEAKER = regex.compile(r"^[^\s:]{1,40}: ")
_HANGUL = regex.compile(r"\p{Hangul}")
_RAW_WORD = regex.compile(r"[\p{L}\p{N}._:/-]+")
#: A number as written: digits, with the dots, commas or colons inside a version, an amount or a time.
_NUMBER = regex.compile(r"\p{Nd}+(?:[.,:]\p{Nd}+)*")
#: Words that speak to someone: a reply in a conversation says "you"; a stored fact seldom does.
_ADDRESSED = regex.compile(
    r"\b(you|your|yours|yourself|you're|you've|you'll|you'd)\b|(?<!\p{L})(당신|너는|너도|너를|너의|네가|니가)",
    regex.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TextTraits:
    """What a memory's text says to the second stage beyond its tokens, computed once per text."""

    number: bool
    name: bool
    question: bool
    #: The numbers it writes (numbers_in), and whether it speaks to someone (you, your).
    numbers: frozenset[str] = frozenset()
    addressed: bool = False


@functools.lru_cache(maxsize=32_768)
def traits(text: str) -> TextTraits:
    """Whether `text` holds a number or a date, a name (a capitalised word inside a sentence, or
    any Korean word), and a question. A leading `Name: ` (a conversation turn) is not a name."""
    digit = bool(_DIGIT.search(text))
    hangul = bool(_HANGUL.search(text))  # without it, no Korean word to read (number or name)
    number = digit or not NUMBER_WORDS.isdisjoint(_LOWER_WORDS.findall(text.lower()))
    if not number and hangul:
        number = any(w.startswith(KO_NUMBER_PREFIXES) for w in text.split())
    speaker = _SPEAKER.match(text)
    body = text[speaker.end() :] if speaker else text
    name = (hangul and bool(_HANGUL.search(body))) or _names_someone(body)
    numbers = numbers_in(text) if digit else frozenset()  # a number is digits: none without one
    return TextTraits(number, name, "?" in text or "？" in text, numbers, bool(_ADDRESSED.search(text)))


def _names_someone(body: str) -> bool:
    """Whether a capitalised word (not "I") follows a word rather than a sentence's end: read word
    by word, stopping at the first (most texts name someone early; no list of every word)."""
    previous = None
    for match in _WORDS.finditer(body):
        word = match.group()
        if previous is not None and previous not in ".?!" and word[:1].isupper() and word != "I":
            return True
        previous = word
    return False


def numbers_in(text: str) -> frozenset[str]:
    """The numbers `text` writes, as written: "1.31", "3306", "6" of "6월"; a version, a port, a
    date or an amount, whatever the language around it."""
    return frozenset(_NUMBER.findall(text))


def number_match(query_numbers: frozenset[str], held: frozenset[str], found: frozenset[str]) -> tuple[float, float]:
    """How a memory holding the numbers `held` meets a question naming `query_numbers`, when the
    memories found hold `found` between them: the share of the question's numbers it lacks, and
    1.0 when the question names a number no memory found holds and this one holds another number
    instead (the question asks about 1.31 and the memories say 1.29: about another version, port or
    date, so likely not the answer), else 0.0."""
    if not query_numbers:
        return 0.0, 0.0
    lacking = query_numbers - held
    unheld = query_numbers - found
    return len(lacking) / len(query_numbers), 1.0 if unheld and held - query_numbers else 0.0


def specific_terms(query: str, terms: Sequence[str]) -> list[str]:
    """The query's terms that name something: any token of a word with a digit in it, or of a
    capitalised word that does not start a sentence."""
    from mcp_memory.core.keywords import tokens

    raw = _RAW_WORD.findall(query)
    named: set[str] = set()
    for i, word in enumerate(raw):
        if any(ch.isdigit() for ch in word) or (
            i > 0 and word[:1].isupper() and not raw[i - 1].endswith((".", "?", "!"))
        ):
            named.update(tokens(word))
    return [t for t in terms if t in named]


def _share(terms: Sequence[str], held: frozenset[str], idf: Mapping[str, float]) -> float:
    total = sum(idf[t] for t in terms)
    return sum(idf[t] for t in terms if t in held) / total if total > 0 else 0.0


def features(
    query: str,
    terms: Sequence[str],
    stats: TermStats | None,
    readable: float,
    candidates: Sequence[Candidate],
    scale: tuple[float, float],
    restated: _Restated | None = None,
) -> np.ndarray:
    """One row of FEATURES per candidate (most relevant first, at most SECOND_LOOK of them).
    `restated`, when given, is the candidates' `_Restated`, filled here and read again by
    `Model.judge_features` (each pair judged once per recall)."""
    import numpy as np

    n = len(candidates)
    if n == 0:
        return np.zeros((0, len(FEATURES)))
    stats = stats or TermStats(1, {})
    # Each term's idf once per recall, not once per candidate and feature (the same floats, summed
    # in the same order, so every feature is as before: bench/quality/recall_identity.py).
    idf = {t: stats.idf(t) for t in terms}
    floor, high = scale
    width = max(high - floor, 1e-6)
    cos = (np.array([c.similarity for c in candidates]) - floor) / width
    rel = (np.array([c.relevance for c in candidates]) - floor) / width
    kw = np.minimum(np.array([c.keyword for c in candidates]), 2.0)
    keys = [text_keys(c.memory.content) for c in candidates]
    marks = [traits(c.memory.content) for c in candidates]
    coverage = np.array([_share(terms, k.held, idf) for k in keys])
    named = specific_terms(query, terms)
    specific = np.array([_share(named, k.held, idf) for k in keys]) if named else np.zeros(n)
    total = sum(idf[t] for t in terms) or 1.0
    shares = [(t, idf[t] / total) for t in terms]
    gap = np.array([max((share for t, share in shares if t not in k.held), default=0.0) for k in keys])
    held = _share(terms, frozenset(t for t in terms if stats.frequency.get(t, 0) > 0), idf)
    order = np.argsort(-cos, kind="stable")
    cos_rank = np.empty(n)
    cos_rank[order] = np.arange(n)
    if restated is None:
        restated = _Restated([k.held for k in keys])
    lead, clead = _leads(rel, restated), _leads(cos, restated)
    length = np.log1p(np.array([k.length for k in keys], dtype=float))
    wants_number = 1.0 if _WANTS_NUMBER.search(query) else 0.0
    wants_name = 1.0 if _WANTS_NAME.search(query) else 0.0
    number = np.array([m.number for m in marks], dtype=float)
    name = np.array([m.name for m in marks], dtype=float)
    question = np.array([m.question for m in marks], dtype=float)
    crowd = math.log(float((rel >= rel.max() - 0.25).sum()))
    asked = numbers_in(query)
    found = frozenset().union(*(m.numbers for m in marks))
    number_rows = np.array([number_match(asked, m.numbers, found) for m in marks], dtype=float).reshape(n, 2)
    addressed = np.array([m.addressed for m in marks], dtype=float)
    full = np.full
    columns = [
        cos,
        kw,
        coverage,
        rel,
        cos - cos.max(),
        rel - rel.max(),
        lead,
        clead,
        np.log1p(cos_rank),
        np.log1p(np.arange(n)),
        full(n, held),
        full(n, min(len(terms), 3 * LONG_QUERY) / LONG_QUERY),
        full(n, readable),
        specific,
        full(n, 1.0 if named else 0.0),
        length,
        full(n, cos.max()),
        full(n, wants_number),
        wants_number * number,
        wants_number * (1.0 - number),
        full(n, wants_name),
        wants_name * name,
        gap,
        question,
        full(n, crowd),
        cos * readable,
        clead * readable,
        kw * (1.0 - readable),
        number_rows[:, 0],
        number_rows[:, 1],
        addressed,
    ]
    return np.round(np.column_stack(columns), 6)


#: Two candidates sharing this share of their tokens (Jaccard) say one thing twice, the same fact
#: restated or updated (the dedup rule's word overlap, core/ranking.py DEDUP_WORD_OVERLAP): neither
#: is the other's rival when the model asks how far a candidate stands clear.
RESTATED = 0.5


class _Restated:
    """Whether two candidates (by index) restate each other, judged once per pair."""

    def __init__(self, held: Sequence[frozenset[str]]) -> None:
        self.held = held
        self.known: dict[tuple[int, int], bool] = {}

    def __call__(self, i: int, j: int) -> bool:
        key = (i, j) if i < j else (j, i)
        if key not in self.known:
            a, b = self.held[i], self.held[j]
            union = len(a | b)
            self.known[key] = bool(union) and len(a & b) / union >= RESTATED
        return self.known[key]


def _leads(values: np.ndarray, restated: _Restated) -> np.ndarray:
    """Each value less the best of the others that do not restate it (less 0 when there is none)."""
    import numpy as np

    order = np.argsort(-values, kind="stable").tolist()
    floats = values.tolist()  # Python floats: the same doubles, read without a numpy scalar each
    out = np.empty(len(floats))
    for i, value in enumerate(floats):
        rival = next((floats[j] for j in order if j != i and not restated(i, j)), 0.0)
        out[i] = value - rival
    return out


# --------------------------------------------------------------------------- the models


@dataclass(frozen=True, slots=True)
class Linear:
    """A logistic model over standardised features: logit = ((x − mean) / scale) · weights + bias."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float

    def logits(self, x: np.ndarray) -> np.ndarray:
        import numpy as np

        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        logits: np.ndarray = z @ np.asarray(self.weights) + self.bias
        return logits

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], width: int) -> Linear:
        model = cls(tuple(obj["mean"]), tuple(obj["scale"]), tuple(obj["weights"]), float(obj["bias"]))
        if not len(model.mean) == len(model.scale) == len(model.weights) == width:
            raise ValueError(f"a model in {WEIGHTS} has {len(model.weights)} weights for {width} features")
        return model


@dataclass(frozen=True, slots=True)
class Bands:
    """Where HIGH, MEDIUM and LOW start on the probability (floor ≤ medium ≤ high): below the
    floor, nothing stored answers the question. `inject`: the probability from which the prompt
    hook injects the answer (chosen on the prompt dev set's fit half, docs/hooks.md)."""

    floor: float
    medium: float
    high: float
    inject: float

    def label(self, probability: float) -> str:
        """ "high", "medium", "low", or "none" below the floor; monotone in the probability."""
        if probability >= self.high:
            return "high"
        if probability >= self.medium:
            return "medium"
        if probability >= self.floor:
            return "low"
        return "none"


@dataclass(frozen=True, slots=True)
class Judged:
    """The second stage's answer: each candidate's probability (in the candidates' order), the
    order by it (indexes, most probable first), and what weighed most for the most probable."""

    probabilities: np.ndarray
    order: np.ndarray
    reasons: tuple[Reason, ...] = ()


@dataclass(frozen=True, slots=True)
class Reason:
    """One thing that weighed in the model's judgment of a candidate, in words, and which way."""

    text: str
    #: True when it raised the probability, False when it lowered it.
    raises: bool


#: The features by what they say about a candidate, and how each side is said: a reason sums
#: the ranker's weighted features of one aspect (against the average candidate).
ASPECTS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    (
        "meaning",
        ("cosine", "cosine_below_best", "cosine_rank", "cosine_read"),
        "its meaning is close to the question's",
        "its meaning is far from the question's",
    ),
    (
        "clear",
        ("relevance_lead", "cosine_lead", "cosine_lead_read", "relevance_below_best", "relevance_rank", "crowd"),
        "it stands clear of the other memories found",
        "other memories found are about as close",
    ),
    (
        "words",
        (
            "keyword",
            "coverage",
            "relevance",
            "keyword_unread",
            "largest_gap",
            "specific_coverage",
            "number_unmatched",
            "number_conflict",
        ),
        "it holds the question's words, the rarer ones too",
        "it lacks words the question names",
    ),
    (
        "kind",
        ("number_held", "number_missing", "name_held"),
        "it holds the kind of answer asked for (a number, a date, a name)",
        "it lacks the kind of answer asked for (a number, a date, a name)",
    ),
    (
        "question",
        ("is_question",),
        "it states something rather than asking",
        "it asks a question itself",
    ),
    (
        "reply",
        ("addressed",),
        "it states a fact rather than replying to someone",
        "it reads as a reply to someone",
    ),
)


@dataclass(frozen=True, slots=True)
class Model:
    """One embedder's relevance model: its scale, the ranker, the calibrator and the bands."""

    key: str
    scale: tuple[float, float]
    ranker: Linear
    calibrator: Linear
    bands: Bands

    def judge(
        self,
        query: str,
        terms: Sequence[str],
        stats: TermStats | None,
        readable: float,
        candidates: Sequence[Candidate],
    ) -> Judged:
        """The probability that each candidate (most relevant first, at most SECOND_LOOK) answers."""

        restated = _Restated([text_keys(c.memory.content).held for c in candidates])
        x = features(query, terms, stats, readable, candidates, self.scale, restated)
        return self.judge_features(x, restated.held, restated)

    def judge_features(
        self, x: np.ndarray, held: Sequence[frozenset[str]], restated: _Restated | None = None
    ) -> Judged:
        """The probabilities from the candidates' FEATURES rows and their token sets (`restated`:
        the pairs `features` judged already, read again rather than judged twice)."""
        import numpy as np

        if len(x) == 0:
            return Judged(np.zeros(0), np.zeros(0, dtype=int))
        scores = self.ranker.logits(x)
        order = np.argsort(-scores, kind="stable")
        row = top_row(x, scores, order, restated if restated is not None else _Restated(held))
        row = np.where(np.isnan(row), np.asarray(self.calibrator.mean), row)  # alone: the typical gap
        shift = float(self.calibrator.logits(row[None, :])[0]) - scores[order[0]]
        probabilities = 1.0 / (1.0 + np.exp(-np.clip(scores + shift, -30, 30)))
        return Judged(probabilities, order, self.reasons(x[order[0]]))

    def with_floor(self, floor: float | None) -> Model:
        """This model with its floor at `floor` (RECALL_MIN_PROBABILITY, which `calibrate` measures on
        the operator's own cases: docs/calibration.md#a-probability-floor-of-your-own), or as it is
        for None. ConfigError naming the setting when `floor` is not above 0 or lies above where
        MEDIUM starts: the bands must stay in order."""
        if floor is None:
            return self
        if not 0 < floor <= self.bands.medium:  # NaN fails too
            from mcp_memory.core.errors import ConfigError

            raise ConfigError(
                f"RECALL_MIN_PROBABILITY must be greater than 0 and at most {self.bands.medium:g} "
                f"(where MEDIUM starts for {self.key}), got {floor:g}"
            )
        bands = Bands(floor, self.bands.medium, self.bands.high, self.bands.inject)
        return Model(self.key, self.scale, self.ranker, self.calibrator, bands)

    def reasons(self, row: np.ndarray, most: int = 3) -> tuple[Reason, ...]:
        """What weighed most in the ranker's score of the candidate whose FEATURES are `row`:
        the aspects (ASPECTS) whose weighted features moved it furthest from the average
        candidate's, the largest first."""
        import numpy as np

        z = (row - np.asarray(self.ranker.mean)) / np.asarray(self.ranker.scale)
        part = z * np.asarray(self.ranker.weights)
        weighed = []
        for _, names, up, down in ASPECTS:
            total = float(sum(part[FEATURES.index(n)] for n in names))
            weighed.append((abs(total), Reason(up if total > 0 else down, total > 0)))
        weighed.sort(key=lambda w: -w[0])
        return tuple(r for size, r in weighed[:most] if size >= 0.05)


def top_row(x: np.ndarray, scores: np.ndarray, order: np.ndarray, restated: Any) -> np.ndarray:
    """The calibrator's TOP_FEATURES for the ranker's top: its score, how far it stands above the
    best candidate that does not restate it (`restated(i, j)`; NaN when none is left: a lone
    candidate stands clear of nothing, so the calibrator reads its typical gap there), and its own
    features."""
    import numpy as np

    top = order[0]
    rival = next((scores[j] for j in order[1:] if not restated(top, j)), None)
    gap = math.nan if rival is None else scores[top] - rival
    at = {name: FEATURES.index(name) for name in TOP_FEATURES if name in FEATURES}
    return np.array([scores[top] if n == "score" else gap if n == "score_gap" else x[top, at[n]] for n in TOP_FEATURES])


@functools.lru_cache(maxsize=1)
def _weights() -> Mapping[str, Any]:
    text = resources.files("mcp_memory.data").joinpath(WEIGHTS).read_text(encoding="utf-8")
    data: Mapping[str, Any] = json.loads(text)
    if tuple(data["features"]) != FEATURES or tuple(data["top_features"]) != TOP_FEATURES:
        raise ValueError(f"{WEIGHTS} was fitted on other features than core/judgment.py computes: refit it")
    return data


def model_key(provider: str, model: str) -> str:
    """How the weights file names an embedder's model: `<provider>/<model>`."""
    return f"{provider}/{model}"


def model_for(embedder: object, scale: tuple[float, float] | None = None) -> Model | None:
    """The model fitted for this embedder (its `provider` and `model`); for an embedder without
    one, the embedder-agnostic model on `scale` (`generic_model`); None when neither (recall
    keeps the rule-based label)."""
    own = load_model(model_key(getattr(embedder, "provider", ""), getattr(embedder, "model", "")))
    if own is not None or scale is None:
        return own
    return generic_model(scale)


def generic_model(scale: tuple[float, float]) -> Model | None:
    """The embedder-agnostic model reading cosines on `scale`: (floor, floor + the embedder's
    spread, RECALL_COSINE_SPREAD: how far a right answer's cosine typically stands above an
    unrelated memory's, as `calibrate` measures it). None when the scale is empty. Measured on an
    embedder left out of its fit: bench/RESULTS.md, "A probability for an embedder with no model
    of its own"."""
    floor, high = float(scale[0]), float(scale[1])
    entry = _weights().get(GENERIC)
    if entry is None or not high > floor:
        return None
    return model_from(GENERIC, (floor, high), entry)


def load_model(key: str) -> Model | None:
    """The model fitted for the embedder `key` (model_key); None for an embedder without one of its
    own: its probability would be unmeasured, so recall keeps the rule-based label for it
    (docs/recall.md#confidence) until a model is fitted for it."""
    entry = _weights()["models"].get(key)
    if entry is None:
        return None
    return model_from(key, (float(entry["scale"][0]), float(entry["scale"][1])), entry)


def model_from(key: str, scale: tuple[float, float], entry: Mapping[str, Any]) -> Model:
    """The model of one entry of the weights file (or of a refit, bench/quality/judgment_fit.py)
    reading cosines on `scale`."""
    return Model(
        key,
        scale,
        Linear.from_json(entry["ranker"], len(FEATURES)),
        Linear.from_json(entry["calibrator"], len(TOP_FEATURES)),
        Bands(*(float(entry["bands"][k]) for k in ("floor", "medium", "high", "inject"))),
    )
