"""Does a new memory say the same thing as one already stored? Pure functions, no I/O.

Why a rule of its own: declining to write is silent, so merging two texts that say different
things loses a fact nobody sees go (seed 000, "dedup does not rely on the cosine alone").

Production reads two things. `remember` reads one bit, `same`: an existing memory already
says the new fact, write nothing. The web view's memory page (`MemoryService.detail`) reads
`judge`'s whole verdict: a duplicate, or a pair the rule keeps apart and the difference that
did (docs/web.md#a-memory). The pair table (tests/core/dedup_pairs.py) is the rule's
specification.

An embedding cannot be trusted with that decision: a negated fact and a changed version
sit above the duplicate cosine on the local model
(bench/RESULTS.md#the-dedup-rule-against-normalised-equality-issue-24-item-6-2026-12-02).
So the cosine (>= 0.92) and the
word overlap (>= half the words) stay necessary conditions, and on top of them
the two texts must be the same text up to what does not change a fact:

- case, whitespace (also between Korean words), punctuation, Unicode NFKC forms
  (full-width letters, ligatures, composed Hangul), curly or straight quotes;
- articles (a, an, the) and a hyphen or space inside a word (in-flight, inflight);
- a typo or two: at most `MAX_TYPOS` words that are one edit (a substitution, an
  insertion, a deletion or two neighbours swapped) away from their counterpart,
  long enough for that edit to be a slip rather than another word.

Whatever else differs keeps the two apart, and the first difference found is named:
`number` (digits, number words, units, weekdays, months, am/pm), `identifier`
(tokens with digits, snake_case, dotted.names, --flags, paths, URLs, camelCase,
quoted strings: never typo-tolerant where a digit, a separator or a short part
differs; nor is a name, a capitalised word, a hex run like deadbeef, or a
Chinese, Japanese or Korean word), `symbol`
(a comparison, an arrow, a currency sign or an emoji standing on its own: > and <,
→ and ←, ✅ and ❌), `negation` (not, no, never, n't, without, cannot, ...; Korean 안/않/못/없,
아니다, -지 마), `opposite` (a table of opposites in English and Korean, and
negating prefixes such as un-, dis-, non-, 비-, 불-) or `wording` (any other word
added, removed, replaced or moved). Keeping two memories that say the same thing
costs a duplicate; merging two that do not loses a fact.

Hand-written rather than a fuzzy-matching library: the rule needs to know *which*
token differs and why, and the only edit distance it needs is "exactly one edit",
a dozen lines.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from mcp_memory.core.dedup_words import (
    ARTICLES,
    KO_NEGATING_PREFIXES,
    KO_NUMBER_PREFIXES,
    KO_NUMBER_WORDS,
    NEGATING_PREFIXES,
    NEGATION_WORDS,
    NT_CONTRACTIONS,
    NUMBER_WORDS,
    OPPOSITES_EN,
    OPPOSITES_KO,
)
from mcp_memory.core.ranking import DEDUP_SIMILARITY, DEDUP_WORD_OVERLAP, word_overlap

__all__ = [
    "DEDUP_SIMILARITY",
    "DEDUP_WORD_OVERLAP",
    "MAX_TYPOS",
    "Comparison",
    "Verdict",
    "compare",
    "judge",
    "same",
]

#: How many words may differ by a typo (one edit each) for two texts to still merge.
MAX_TYPOS = 2

Reason = str  # "number" | "identifier" | "symbol" | "negation" | "opposite" | "wording"

# --------------------------------------------------------------------------- the tables, indexed


def _inflect(word: str) -> set[str]:
    forms = {word, word + "s", word + "es", word + "ed", word + "ing", word + "d"}
    if word.endswith("e"):
        forms |= {word[:-1] + "ing", word[:-1] + "ed"}
    if word.endswith("y"):
        forms |= {word[:-1] + "ies", word[:-1] + "ied"}
    if len(word) >= 3 and word[-1] not in "aeiouwxy" and word[-2] in "aeiou" and word[-3] not in "aeiou":
        forms |= {word + word[-1] + "ed", word + word[-1] + "ing"}  # stop → stopped
    return forms


@lru_cache(maxsize=1)
def _opposite_index() -> dict[str, set[tuple[int, int]]]:
    """English word form → the (group, side) pairs it belongs to."""
    index: dict[str, set[tuple[int, int]]] = {}
    for g, group in enumerate(OPPOSITES_EN):
        for side, base in enumerate(group):
            for form in _inflect(base) if len(base) >= 3 else {base}:
                index.setdefault(form, set()).add((g, side))
    return index


@lru_cache(maxsize=1)
def _korean_stems() -> list[tuple[str, int, int]]:
    """Korean stems, longest first, with their (group, side)."""
    stems = [(stem, g, side) for g, group in enumerate(OPPOSITES_KO) for side, stem in enumerate(group)]
    return sorted(stems, key=lambda s: len(s[0]), reverse=True)


# --------------------------------------------------------------------------- tokens

_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'})
#: Sentence punctuation taken off the ends of a word (a leading -, /, ~ or . is kept: --flag, /path).
_EDGE_LEAD = "([{<\"'`«»,;:!?…*—–「『【"
_EDGE_TRAIL = ")]}>\"'`«»,;:!?.…*—–-/。、」』】"
#: NFKC reads 10³ as 103: an exponent stays one (10^3).
_SUPERSCRIPTS = str.maketrans({ch: "^" + str(d) for d, ch in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")})
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
#: Han characters, kana and Hangul syllables: one of them is a word or a morpheme of its own
#: (北京/南京, 可以/不可以), and one jamo turns a Hangul word into another (결제/결재, 지훈/지환),
#: so a word holding them is never one typo away from another.
_SYLLABIC = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff66-\uff9f]")
_HAS_DIGIT = re.compile(r"\d")
#: Six or more hex letters (ffaaaa of #ffaaaa, deadbeef): a colour or a hash, never a typo.
_HEX = re.compile(r"[a-f]{6,}")
_DIGIT_RUN = re.compile(r"\d+(?:[.,:]\d+)*")
_PLAIN_WORD = re.compile(r"[^\W\d_]+(?:[-'][^\W\d_]+)*")
_CAMEL = re.compile(r"[a-z][A-Z]")
_CAMEL_SPLIT = re.compile(r"([a-z])([A-Z])")
_SEGMENTS = re.compile(r"[^\W\d_]+|\d+|.", re.DOTALL)
#: Punctuation around a word that carries no meaning of its own; what else a word without
#: letters or digits holds is kept as a symbol token.
_SENTENCE_MARKS = ".,;:!?…\"'`()[]{}«»—–-*•·"
_OPERATOR_MARKS = "&%#@\\"
#: Marks that are punctuation beside a word but an operator standing alone (price * qty, a / b).
_BARE_OPERATORS = frozenset({"*", "/"})
#: A capitalised word this short is taken for a name even where it opens a sentence.
_SHORT_NAME = 5
#: After these a capital letter starts a sentence rather than a name.
_SENTENCE_ENDS = (".", "!", "?", ":", ";", "…", "-", "*", "•", "—", "–")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|`([^`\n]+)`|(?<![\w'])'([^'\n]+)'(?!\w)|「([^」]+)」|『([^』]+)』")


@dataclass(frozen=True, slots=True)
class Token:
    #: The word as compared: NFKC, case-folded, edge punctuation off; a plain word also loses
    #: its hyphens and apostrophes (in-flight = inflight, don't = dont).
    key: str
    #: Holds a digit, an underscore, a dot, a slash, ... or is camelCase: compared strictly.
    identifier: bool
    #: An identifier's parts: letter runs (camelCase split), digit runs and single separators.
    parts: tuple[str, ...] = ()
    #: A capitalised word inside a sentence (Kristen, Hermes), or a short one opening it
    #: (Sara, Bryan): most likely a name, and a name one letter from another is another
    #: person or host, never a typo of it.
    name: bool = False


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text.translate(_SUPERSCRIPTS)).translate(_QUOTES)


def _symbols(raw: str) -> str:
    """What is left of a word without letters or digits once sentence punctuation is off:
    a comparison, an arrow, a currency sign, an emoji (>, <=, !=, →, ✅, $), or nothing."""
    if raw in _BARE_OPERATORS:
        return raw
    kept = raw.strip(_SENTENCE_MARKS)
    return kept if any(unicodedata.category(ch)[0] == "S" or ch in _OPERATOR_MARKS for ch in kept) else ""


def _token(raw: str, *, in_sentence: bool = False) -> Token | None:
    word = raw.lstrip(_EDGE_LEAD).rstrip(_EDGE_TRAIL)
    if not word or not any(ch.isalnum() for ch in word):
        symbols = _symbols(raw)
        return Token(symbols, identifier=True, parts=(symbols,)) if symbols else None
    folded = word.casefold()
    if _PLAIN_WORD.fullmatch(word) and not _CAMEL.search(word):
        name = any(ch.isupper() for ch in word) and (in_sentence or len(word) <= _SHORT_NAME)
        return Token(folded.replace("-", "").replace("'", ""), identifier=False, name=name)
    parts = tuple(p.casefold() for p in _SEGMENTS.findall(_CAMEL_SPLIT.sub(r"\1 \2", word)) if p != " ")
    return Token(folded, identifier=True, parts=parts)


@lru_cache(maxsize=64)
def tokens(text: str) -> tuple[Token, ...]:
    """The words of `text`; a negative contraction is spelt out (can't, cannot: can not)."""
    out = []
    in_sentence = False
    for raw in normalise(text).split():
        token = _token(raw, in_sentence=in_sentence)
        in_sentence = not raw.endswith(_SENTENCE_ENDS)
        if token is None:
            continue
        base = _SPELT_OUT.get(token.key) if not token.identifier else None
        if base is not None:
            out += [Token(base, identifier=False), Token("not", identifier=False)]
        else:
            out.append(token)
    return tuple(out)


_SPELT_OUT = {word: word[:-2] for word in NT_CONTRACTIONS} | {
    "cant": "can",
    "cannot": "can",
    "wont": "will",
    "shant": "shall",
    "aint": "am",
}


def quoted(text: str) -> list[str]:
    """The quoted strings of `text`, in order, case-folded with their spaces collapsed."""
    found = []
    for match in _QUOTED.finditer(normalise(text)):
        inner = next(g for g in match.groups() if g is not None)
        found.append(" ".join(inner.casefold().split()))
    return found


# --------------------------------------------------------------------------- what a word is


def _is_number(key: str) -> bool:
    if _HAS_DIGIT.search(key) or key in NUMBER_WORDS:
        return True
    if _HANGUL.match(key):
        return key in KO_NUMBER_WORDS or key.startswith(KO_NUMBER_PREFIXES)
    return False


def digits(toks: tuple[Token, ...]) -> list[str]:
    """Every number written in digits, in order, as written (3.11, 08:00, 2026, 10 of 10gb)."""
    return [run for t in toks for run in _DIGIT_RUN.findall(t.key)]


_KO_AN_VERBS = (
    "돼",
    "된",
    "되",
    "해",
    "한",
    "하",
    "함",
    "할",
    "했",
    "가",
    "간",
    "갈",
    "와",
    "온",
    "써",
    "쓴",
    "씀",
    "먹",
    "보",
    "봐",
)
_KO_PROHIBITIVE = ("마세요", "마라", "말라", "말아", "말고", "맙시다", "말자", "말것", "마십시오", "마시오")


def _negations(toks: tuple[Token, ...]) -> int:
    count = 0
    previous = ""
    for t in toks:
        key = t.key
        if key in NEGATION_WORDS or key in NT_CONTRACTIONS or (key.endswith("n't") and len(key) > 3):
            count += 1
        elif _HANGUL.match(key):
            count += key.count("않") + key.count("없") + key.count("못하") + key.count("못해")
            if key in ("안", "못") or (key[0] in "안못" and key[1:].startswith(_KO_AN_VERBS)):
                count += 1
            if key.startswith(("아니", "아닌", "아님", "아냐", "아닙")) or key.endswith(("아니다", "아닌", "아님")):
                count += 1
            if previous.endswith("지") and key.startswith(_KO_PROHIBITIVE):
                count += 1
            elif any(p in key for p in ("지마", "지말")):
                count += 1
        previous = key
    return count


def _opposite_sides(key: str) -> set[tuple[int, int]]:
    if _HANGUL.match(key):
        for stem, g, side in _korean_stems():
            if stem in key:
                return {(1000 + g, side)}
        return set()
    return _opposite_index().get(key, set())


def _opposite_counts(toks: tuple[Token, ...]) -> dict[int, dict[int, int]]:
    counts: dict[int, dict[int, int]] = {}
    for t in toks:
        for g, side in _opposite_sides(t.key):
            sides = counts.setdefault(g, {})
            sides[side] = sides.get(side, 0) + 1
    return counts


def _swapped_sides(ca: dict[int, dict[int, int]], cb: dict[int, dict[int, int]]) -> bool:
    """Some group lost a word of one side and gained a word of another (enabled → disabled).
    A word that merely went missing (a typo of it) is left to the alignment."""
    for g in set(ca) & set(cb):
        sa, sb = ca[g], cb[g]
        lost = {side for side in sa if sa[side] > sb.get(side, 0)}
        gained = {side for side in sb if sb[side] > sa.get(side, 0)}
        if lost and gained:
            return True
    return False


def _negated_pair(a: str, b: str) -> bool:
    """One word is the other with a negating prefix (secure/insecure, 활성화/비활성화)."""
    short, long_ = sorted((a, b), key=len)
    if not short:
        return False
    prefixes = KO_NEGATING_PREFIXES if _HANGUL.match(short) else NEGATING_PREFIXES
    return any(long_ == p + short for p in prefixes) or long_ == short + "less"


# --------------------------------------------------------------------------- typos


def _one_edit(a: str, b: str) -> str | None:
    """'swap', 'substitute', 'insert' (b is a with one more character) or None, when a != b."""
    if a == b:
        return None
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return "substitute"
        if len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]:
            return "swap"
        return None
    if abs(len(a) - len(b)) != 1:
        return None
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    for i in range(len(long_)):
        if long_[:i] + long_[i + 1 :] == short:
            return "insert"
    return None


def _typo_of(a: str, b: str, *, min_insert: int = 4) -> bool:
    """Two spellings of one word: one edit apart and long enough for that edit to be a slip.

    Compared decomposed (NFD), so a missing accent is one edit. The first letter must
    agree unless two letters were swapped. Chinese, Japanese and Korean words never are
    (see _SYLLABIC).
    """
    if _SYLLABIC.search(a) or _SYLLABIC.search(b):
        return False
    da, db = unicodedata.normalize("NFD", a), unicodedata.normalize("NFD", b)
    edit = _one_edit(da, db)
    if edit is None:
        return False
    shortest = min(len(da), len(db))
    if edit == "swap":
        return shortest >= 3
    if da[0] != db[0]:
        return False
    return shortest >= (min_insert if edit == "insert" else 5)


def _identifier_typo(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """An identifier with one slip in one alphabetic part (1Pasword for 1Password,
    openapi.yml for openapi.yaml).

    Separators and digits must be identical, and so must a part that is a plural, an
    opposite or too short for a slip: checkout_v2 is not checkout_v3, get_user is not
    get_users, /var/log/app is not /var/log/api, http:// is not https://.
    """
    if len(a) != len(b):
        return False
    slips = 0
    for x, y in zip(a, b):
        if x == y:
            continue
        if not (x.isalpha() and y.isalpha()) or x.rstrip("s") == y.rstrip("s") or _opposed(x, y):
            return False
        if _HEX.fullmatch(x) or _HEX.fullmatch(y) or not _typo_of(x, y, min_insert=3):
            return False
        slips += 1
    return slips == 1


def _opposed(a: str, b: str) -> bool:
    """Two number or date words (Monday/Sunday, ten/tan is not), or two sides of one
    group of opposites (on/off, http/https)."""
    if _is_number(a) and _is_number(b):
        return True
    sa, sb = _opposite_sides(a), _opposite_sides(b)
    return any(g == h and side != other for g, side in sa for h, other in sb)


def _pair_is_typo(x: Token, y: Token) -> bool:
    """`y` is `x` misspelt. Opposites never are (on/off, Monday/Sunday), nor a word and its
    negation (secure/insecure); Fridys for Fridays and fronted for frontend are."""
    if x.identifier or y.identifier:
        return x.identifier and y.identifier and _identifier_typo(x.parts, y.parts)
    if x.name or y.name or _opposed(x.key, y.key) or _negated_pair(x.key, y.key):
        return False
    if _HEX.fullmatch(x.key) or _HEX.fullmatch(y.key):
        return False  # deadbeef is a hash, not a word
    return _typo_of(x.key, y.key)


def _reason(words: list[Token]) -> Reason:
    if any(_is_number(t.key) for t in words):
        return "number"
    if any(t.identifier and not any(ch.isalnum() for ch in t.key) for t in words):
        return "symbol"
    if any(t.identifier for t in words):
        return "identifier"
    if _negations(tuple(words)):
        return "negation"
    if any(_opposite_sides(t.key) for t in words):
        return "opposite"
    return "wording"


# --------------------------------------------------------------------------- the comparison


@dataclass(frozen=True, slots=True)
class Comparison:
    #: Why the texts say different things, or None when they say the same.
    reason: Reason | None
    #: The share of words the two texts have in common, a typo-corrected word counting as shared.
    overlap: float


def _joined(words: list[Token]) -> str:
    return "".join(t.key.replace("-", "") for t in words)


def _align(ta: tuple[Token, ...], tb: tuple[Token, ...]) -> tuple[Reason | None, int]:
    """Walk the two token sequences; (the first difference, how many typo pairs were forgiven)."""
    typos = 0
    ka, kb = [t.key for t in ta], [t.key for t in tb]
    matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        left, right = list(ta[i1:i2]), list(tb[j1:j2])
        if left and right and _joined(left) == _joined(right):
            continue  # a space or a hyphen inside a word (화요일 오전에 / 화요일오전에)
        if len(left) != len(right) or not all(x.key == y.key or _pair_is_typo(x, y) for x, y in zip(left, right)):
            left = [t for t in left if t.key not in ARTICLES]
            right = [t for t in right if t.key not in ARTICLES]
        if not left and not right:
            continue
        if len(left) == len(right):
            for x, y in zip(left, right):
                if x.key != y.key and not _pair_is_typo(x, y):
                    return ("opposite" if _negated_pair(x.key, y.key) else _reason([x, y])), typos
                typos += x.key != y.key
        elif left and right and _typo_of(_joined(left), _joined(right)):
            numbered = [t for t in left + right if _is_number(t.key) or t.identifier or t.name]
            if numbered or _negations(tuple(left)) != _negations(tuple(right)):
                return _reason(left + right), typos
            typos += 1  # a space and a slip at once
        else:
            return _reason(left + right), typos
        if typos > MAX_TYPOS:
            return "wording", typos
    return None, typos


def _plain(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def compare(a: str, b: str) -> Comparison:
    """How `a` and `b` differ (see the module docstring), and their word overlap."""
    ta, tb = tokens(a), tokens(b)
    reason: Reason | None = None
    typos = 0
    if digits(ta) != digits(tb):
        reason = "number"
    elif quoted(a) != quoted(b):
        reason = "identifier"
    elif _negations(ta) != _negations(tb):
        reason = "negation"
    else:
        if _swapped_sides(_opposite_counts(ta), _opposite_counts(tb)):
            reason = "opposite"
        else:
            reason, typos = _align(ta, tb)
    sa, sb = {t.key for t in ta}, {t.key for t in tb}
    if not sa or not sb:
        # a text with no word ("!!!", an emoji) has no overlap to measure: it says the same only as
        # itself (NFKC, case and spacing aside), so storing or importing it again writes nothing
        return Comparison(reason, 1.0 if not sa and not sb and _plain(a) == _plain(b) else 0.0)
    shared = min(len(sa & sb) + (typos if reason is None else 0), len(sa), len(sb))
    overlap = max(word_overlap(a, b), shared / (len(sa) + len(sb) - shared))
    return Comparison(reason, overlap)


@dataclass(frozen=True, slots=True)
class Verdict:
    #: An existing memory already says this: write nothing.
    same: bool
    #: The cosine and the word overlap call it a duplicate, but a difference test keeps the
    #: two apart: most likely a correction of the existing memory.
    near: bool
    reason: Reason | None = None


_NOT_CLOSE = Verdict(same=False, near=False)


def judge(similarity: float, new: str, existing: str) -> Verdict:
    """The dedup rule: near by embedding (cosine >= DEDUP_SIMILARITY), sharing half the words,
    and no difference that matters. The texts are read only when the cosine is that high."""
    if similarity < DEDUP_SIMILARITY:
        return _NOT_CLOSE
    c = compare(new, existing)
    if c.overlap < DEDUP_WORD_OVERLAP:
        return _NOT_CLOSE
    return Verdict(same=c.reason is None, near=c.reason is not None, reason=c.reason)


def same(similarity: float, new: str, existing: str) -> bool:
    """The one bit remember reads: `existing` already says `new`, so nothing is written."""
    return judge(similarity, new, existing).same
