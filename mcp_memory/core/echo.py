"""Taking what we sent out of what a dependency said back.

An embedding server's 400 ("input too long: <the text>…"), a driver's
"invalid integer value "<half a password>"", a botocore ValidationException:
error text often quotes its input, whole, in pieces, JSON-escaped or cut off.
Such text must not reach a log line, a tool result or the terminal when the
input was memory content, a query or a secret.

`strip_echoes` replaces every stretch of the text that is made of pieces of
`min_piece` or more characters of any sent value (in any of the spellings a
server is likely to use) by a marker. A value shorter than `min_piece` is
replaced only where it stands alone as a word, so that a short password does
not eat every word that happens to contain it.

Where a secret is masked too, the input goes first (`scrub`): masking a key's
4-character pieces first would cut an echo of content that shares them into
fragments too short to be recognised as the content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

#: How long a piece of memory content or a query must be to count as an echo of it
#: (shorter pieces are common words; 8 is what the redaction property test holds to).
TEXT_PIECE = 8
#: How long a piece of a password or key must be to count as an echo of it.
SECRET_PIECE = 4
#: What replaces an echo of memory content or a query.
INPUT_MARKER = "<input>"
#: What replaces an echo of a secret.
SECRET_MARKER = "***"


def spellings(value: str) -> set[str]:
    """`value` as a server may quote it: as is, JSON-escaped (ASCII or not) once or twice (the
    request's JSON quoted inside the server's own JSON answer), as a Python repr, with its
    whitespace collapsed, URL-unescaped pieces aside."""
    forms = {value, " ".join(value.split())}
    for form in list(forms):
        for ensure_ascii in (True, False):
            once = json.dumps(form, ensure_ascii=ensure_ascii)[1:-1]
            forms.update((once, json.dumps(once, ensure_ascii=ensure_ascii)[1:-1]))
        forms.add(repr(form)[1:-1])
    return {form for form in forms if form}


def strip_echoes(text: str, sent: Iterable[str], *, min_piece: int = TEXT_PIECE, marker: str = INPUT_MARKER) -> str:
    """`text` with every echo of a `sent` value (see the module notes) replaced by `marker`.

    Case is ignored: servers often lower-case what they quote.
    """
    if not text:
        return text
    long_forms: list[str] = []
    short_values: set[str] = set()
    for value in sent:
        if not value:
            continue
        if len(value.strip()) < min_piece:
            short_values.update(form for form in spellings(value) if form.strip())
        long_forms.extend(_fold(form) for form in spellings(value) if len(form) >= min_piece)
    if long_forms:
        text = _replace_pieces(text, "\0".join(long_forms), min_piece, marker)
    for value in sorted(short_values, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", marker, text, flags=re.IGNORECASE)
    return text


def _fold(text: str) -> str:
    """Lower case, one character for one, so positions in the result are positions in `text`."""
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def _replace_pieces(text: str, haystack: str, size: int, marker: str) -> str:
    lowered = _fold(text)
    covered = [False] * len(text)
    for start in range(len(text) - size + 1):
        if lowered[start : start + size] in haystack:
            for i in range(start, start + size):
                covered[i] = True
    if not any(covered):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if covered[i]:
            out.append(marker)
            while i < len(text) and covered[i]:
                i += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def scrub(text: str, inputs: Iterable[str], secrets: Iterable[str], *, secret_piece: int) -> str:
    """`text` without echoes of `inputs` (first) and then of `secrets`, its whitespace
    collapsed first so that folding it later can never join two surviving pieces into one."""
    text = " ".join(text.split())
    text = strip_echoes(text, inputs)
    return strip_echoes(text, secrets, min_piece=secret_piece, marker=SECRET_MARKER)
