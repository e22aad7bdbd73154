"""Characters a reader cannot see: which a memory or a query may hold, decided once for every
edge (docs/memories.md#invisible-characters).

Unicode lists the characters that render as nothing (its Default_Ignorable_Code_Point
property). A model reads each of them; a person reading the same text in the web view, a
terminal or a transcript sees nothing. Each class gets one treatment:

- **refused** when it can spell text a reader cannot see: the tag characters U+E0000–E007F
  (each one mirrors an ASCII character, so a run of them is a hidden sentence a model reads),
  except in the one place they belong, a subdivision flag emoji (🏴 + 2 to 5 tags + U+E007F);
  and a variation selector that follows no character it can vary (a run of them carries a
  byte each);
- **kept** where a script or an emoji needs it to be spelled: one zero-width joiner or
  non-joiner (emoji sequences, Persian, Indic scripts), one direction mark (LRM, RLM, ALM), one
  variation selector right after a visible character (❤️; the ideographic selectors
  U+E0100–E01EF after an ideograph only), the Hangul fillers inside a conjoining syllable;
- **a space** for the Hangul fillers standing alone (U+3164, U+FFA0, and U+115F/U+1160 outside
  a syllable): letters that draw as a blank, so the reader saw a space;
- **dropped** for every other one: the soft hyphen, the zero-width space, the word joiner, the
  byte order mark, the invisible operators, the bidirectional embeddings, overrides and
  isolates (they only change the order a person sees, never what a model reads, so dropping
  them makes the two agree), a second joiner or mark in a row, and the rest of the property.

`hidden_at` finds what a write refuses; `tidy` does the rest. Text read back from a store
(written before this rule, or into the database by hand) goes through `tidy` too, and there a
refused character, a control character or a lone surrogate is shown as its code point
(`<U+E0049>`), so recall, the hooks, the CLI and the web view never pass on what a reader
cannot see.
"""

from __future__ import annotations

import re
import unicodedata

#: Every character this module may change: Unicode's Default_Ignorable_Code_Point (as
#: DerivedCoreProperties.txt lists it; tests/core/test_invisible.py holds it equal to the
#: `regex` library's `\p{Default_Ignorable_Code_Point}`), the control characters but tab,
#: newline and carriage return, and the lone surrogates. Spelled out for `re`: two to four
#: times faster than `regex`, and it runs on every memory read.
_SUSPECT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff\ud800-\udfff]"
)
#: The same class, for a view that shows what it keeps (web/render.py): public, read-only.
UNSEEN = _SUSPECT
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

#: Kept one at a time: the joiners and the direction marks.
_JOINERS = frozenset("\u200c\u200d\u200e\u200f\u061c")
#: A subdivision flag (UTS #51 emoji tag sequence): the black flag, 2 letters and 1 to 3 letters
#: or digits in tag characters, the cancel tag. The only place tag characters are kept.
_FLAG = re.compile("\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,3}\U000e007f")
_CHOSEONG = re.compile("[\u1100-\u115e\ua960-\ua97c]")
_JUNGSEONG = re.compile("[\u1161-\u11a7\ud7b0-\ud7c6]")


def _is_tag(cp: int) -> bool:
    return 0xE0000 <= cp <= 0xE007F


def _is_selector(cp: int) -> bool:
    """A variation selector that may follow any visible character."""
    return 0xFE00 <= cp <= 0xFE0F or 0x180B <= cp <= 0x180D or cp == 0x180F


def _is_ideographic_selector(cp: int) -> bool:
    return 0xE0100 <= cp <= 0xE01EF


def _visible(ch: str) -> bool:
    """A character a selector can vary: one that draws (no space, control or invisible one)."""
    return not ch.isspace() and _SUSPECT.match(ch) is None


def _ideograph(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


def _walk(text: str, hidden: str | None) -> tuple[str, int | None]:
    """(`text` tidied, the position of the first character a write refuses or None).

    `hidden`: how a refused character is shown (a format with `{:04X}`), or None to drop it."""
    out: list[str] = []
    first: int | None = None
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\U0001f3f4" and (flag := _FLAG.match(text, i)) is not None:
            out.append(flag.group())
            i = flag.end()
            continue
        i += 1
        if _SUSPECT.match(ch) is None:
            out.append(ch)
            continue
        cp = ord(ch)
        before = out[-1] if out else ""
        refused = False
        if ch in _JOINERS:
            if before and before not in _JOINERS and not before.isspace():
                out.append(ch)
        elif _is_selector(cp) or _is_ideographic_selector(cp):
            fits = _ideograph(before) if _is_ideographic_selector(cp) else _visible(before) if before else False
            if fits:
                out.append(ch)
            else:
                refused = True
        elif _is_tag(cp) or _CONTROL.match(ch):
            refused = True
        elif ch == "\u115f":
            out.append(ch if i < n and _JUNGSEONG.match(text[i]) else " ")
        elif ch == "\u1160":
            out.append(ch if _CHOSEONG.match(before) else " ")
        elif ch in "\u3164\uffa0":
            out.append(" ")
        if refused:
            if first is None:
                first = i - 1
            if hidden is not None:
                out.append(hidden.format(cp))
    return "".join(out), first


def hidden_at(text: str) -> tuple[int, str] | None:
    """The first character of `text` that can spell what a reader cannot see, with its
    position, or None: a tag character outside a flag, or a stray variation selector (what a
    write refuses; control characters and surrogates are core/arguments.py's own refusal)."""
    if _SUSPECT.search(text) is None:
        return None
    _, first = _walk(text, None)
    return None if first is None else (first, text[first])


def tidy(text: str, *, show_hidden: bool = True) -> str:
    """`text` as stored and shown: the characters a reader cannot see dropped, spaced or kept by
    their class (see the module notes); a refused one, a control character or a lone surrogate
    shown as `<U+XXXX>`, or dropped when not `show_hidden`."""
    if _SUSPECT.search(text) is None:
        return text
    return _walk(text, "<U+{:04X}>" if show_hidden else None)[0]
