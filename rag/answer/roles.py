"""Which units of a source may answer (issue 24, item 2): body text, never page furniture, references or a TOC.

A source (the chunk ``content`` the gate passed) is cut into the chunker's units (sentences; lines of tables,
lists and code: :func:`rag.text.units`). A chunk's role was decided at ingest (:mod:`rag.ingest.roles`, stored
with the chunk, issue 28: ``Citation.role``): a chunk that is not ``body`` has no answering unit at all. Reference
lists are decided there alone (issue 36, item 3), the joined entries of a PDF's reference list included, and so
are the sections titled as a reference list or contents. Each unit of a ``body`` chunk gets a
:class:`rag.types.TextRole` here, at answer time, from its own text and from the other sources of the same answer
(a chunk's role is its majority: a footer or a navigation line may sit inside it):

* ``navigation``: a manual's or web page's navigation line (``Next: Install, Previous: Intro, Up: Top
  [Contents][Index]``, ``« Previous | Next »``, a breadcrumb ``Home > Docs > API``, ``Back to top``): the rule
  ingest tags navigation paragraphs with (:func:`rag.ingest.roles.is_navigation`);
* ``toc``: a table-of-contents entry (``2.1 Boiling ........ 15``: :func:`rag.ingest.roles.is_toc_line`; numbered
  entries ending in a page number when the source holds several, or a "Contents" line:
  :data:`rag.ingest.roles.TOC_TITLE`);
* ``furniture``: running heads and slide footers: a page counter (``12 / 40``, ``Page 3 of 9``), a line
  holding a date and no sentence, or a line that is no sentence and repeats in another source or twice
  in the same one (a slide deck's footer is on every slide);
* ``heading``: a unit of one word (``NetBSD``) or a short title-only line (no sentence, mostly
  capitalised words, or a Markdown heading);
* ``body``: everything else (sentences, table rows, list items).

Only ``body`` units stand as the key passage and are read by the model; only ``body`` and ``heading`` units
support a claim (a heading names what its section is about).

The rules are deliberately narrow: they must never take an answering sentence for furniture. Measured on
both dev corpora in ``docs/answers.md`` (issue 24): the units each rule takes, and what the key passage and
the answers gained.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag.ingest.roles import TOC_TITLE, is_navigation, is_toc_line
from rag.text import units
from rag.types import TextRole

Span = tuple[int, int]

#: Roles that never stand as the answer nor are read by the model, but still support a claim.
SUPPORTING = frozenset({TextRole.BODY, TextRole.HEADING})

_WORD = re.compile(r"[^\W_]+(?:[.'’\-][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?…:;)\]\"'”’*_`]\s*$")
_TABLE_ROW = re.compile(r"^\s*\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•▪◦‣]|\d{1,3}[.)])\s+")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")

# ---------------------------------------------------------------------------------------------- navigation
# (rag.ingest.roles.is_navigation: one word list and one rule for ingest and answer, issue 36 item 3)

# ---------------------------------------------------------------------------------------------- contents
#: A TOC entry with a dot leader: ``Introduction ......... 3``, ``2.1 Boiling . . . . 15``.
# (rag.ingest.roles.is_toc_line: one rule for ingest and answer, linear: issue 35)
#: A numbered entry ending in a page number: ``2.1 Boiling the water 15``, ``Chapter 3 Soups 41``.
_TOC_NUMBERED = re.compile(
    r"^\s*(?:(?:chapter|part|appendix|section)\s+)?(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVXLC]{1,5}\.|[A-Z]\.)\s+"
    r"[^\d.!?]{2,80}?\s+\d{1,4}\s*$", re.I)
# A "Contents" line or heading: rag.ingest.roles.TOC_TITLE (one list of contents titles, issue 36 item 3)

# ---------------------------------------------------------------------------------------------- references
# decided at ingest alone (rag.ingest.roles: titled sections, runs of entries, a PDF's joined entries; issue 36 item 3)

# ---------------------------------------------------------------------------------------------- furniture
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|januar|februar|märz|mai|juni|juli|oktober|dezember)")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_DATE = re.compile(
    r"\b(?:" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{2}|\d{1,2}(?:st|nd|rd|th)?\.?\s+" + _MONTH
    + r"\.?,?\s+(?:19|20)\d{2}|" + _MONTH + r"\.?\s+(?:19|20)\d{2}|(?:19|20)\d{2}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./](?:19|20)?\d{2}|"
    + _WEEKDAY + r")\b", re.I)
#: A page or slide counter: ``12 / 40``, ``Page 3 of 9``, ``- 7 -``, ``Slide 4``, or a bare page number.
_COUNTER = re.compile(r"(?:^|\s)(?:\d{1,4}\s*/\s*\d{1,4}|(?:page|seite|slide|folie|p\.)\s*\d{1,4}(?:\s*(?:of|von|/)\s*\d{1,4})?"
                      r"|[-–]\s*\d{1,4}\s*[-–])\s*$", re.I)
_BARE_NUMBER = re.compile(r"^\s*\d{1,4}\s*$")


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def is_sentence(text: str) -> bool:
    """Whether ``text`` reads as a sentence: it ends in sentence punctuation (or a closing bracket / quote)."""
    return bool(_SENTENCE_END.search(text.rstrip()))


#: Short function words a title leaves in lower case ("Git and GitHub for Beginners").
_TITLE_SMALL = frozenset("""a an and as at by de del der des die das du en for from in la le of on or the to und
                         van von with""".split())


def _capitalised_share(words: Sequence[str]) -> float:
    """Share of ``words`` (title-case function words left out) that open with a capital or a digit."""
    words = [w for w in words if w.casefold() not in _TITLE_SMALL]
    if not words:
        return 0.0
    return sum(1 for w in words if w[0].isupper() or w[0].isdigit()) / len(words)


def _norm_line(line: str) -> str:
    return re.sub(r"\s+", " ", line).strip().casefold()


def navigation_like(text: str) -> bool:
    """Whether one unit is a navigation line: :func:`rag.ingest.roles.is_navigation` (the one rule) on its text, its
    line breaks read as spaces."""
    return is_navigation(" ".join(text.split()))


def _furniture_line(line: str) -> bool:
    """A running head or footer line on its own evidence: a page counter alone or ending a short line that is
    no sentence, or a short line holding a date and no sentence, mostly capitalised words."""
    s = line.strip()
    if not s or _TABLE_ROW.match(s):
        return False
    if _BARE_NUMBER.match(s):
        return True
    words = _words(s)
    if is_sentence(s) and not _COUNTER.search(s):
        return False
    if _COUNTER.search(s) and (len(words) <= 3 or (len(words) <= 16 and _capitalised_share(words) >= 0.6)):
        return True  # "12 / 40", "Page 3 of 9", "Jane Roe  BSD Tales  12 / 30"; not "... listed on page 3"
    # a list item or a "label: value" line holding a date is body ("Next inspection due: September 2027")
    return bool(_DATE.search(s) and len(words) <= 16 and _capitalised_share(words) >= 0.75
                and not _LIST_ITEM.match(s) and ": " not in s)


def _heading_like(text: str) -> bool:
    s = text.strip()
    if _MD_HEADING.match(s) and "\n" not in s:
        return True
    words = [w for w in _words(s) if any(ch.isalpha() for ch in w)]
    if _TABLE_ROW.match(s):
        return False  # table rows (the separator row included) are read as a table
    if len(_words(s)) <= 1:
        return True  # one word ("NetBSD") or none: never an answer by itself
    if _TABLE_ROW.match(s) or is_sentence(s) or ": " in s:
        return False  # a table row, a sentence or a "label: value" line is body
    body = _LIST_ITEM.sub("", s)
    if _LIST_ITEM.match(s) and len(_words(body)) > 1:
        return False  # a list item of two words or more is body ("- 2-bit and 3-bit")
    return len(words) <= 8 and _capitalised_share(words) >= 0.75


def repeated_lines(quotes: Iterable[str]) -> frozenset[str]:
    """Lines (normalised: case-folded, whitespace collapsed) of at least two words that are no sentence and
    no table row, found in two of ``quotes`` or twice in one: a deck's footer, a running head."""
    seen: Counter[str] = Counter()
    for q in quotes:
        for line in q.splitlines():
            s = line.strip()
            if len(_words(s)) >= 2 and not _TABLE_ROW.match(s) and not is_sentence(s):
                seen[_norm_line(s)] += 1
    return frozenset(k for k, n in seen.items() if n >= 2)


@dataclass(frozen=True)
class Unit:
    """One unit of a source with its role: ``start``/``end`` character offsets into the quote."""

    start: int
    end: int
    role: TextRole


def unit_role(text: str, *, repeated: frozenset[str] = frozenset(), toc_context: bool = False) -> TextRole:
    """The :class:`rag.types.TextRole` of one unit's text (module doc). ``repeated``: lines repeated across
    the answer's sources (:func:`repeated_lines`); ``toc_context``: the source reads as a table of contents
    (a "Contents" line, or several numbered entries ending in a page number), so such entries are ``toc``."""
    s = text.strip()
    if not s:
        return TextRole.FURNITURE
    if navigation_like(s):
        return TextRole.NAVIGATION
    if is_toc_line(s) or (toc_context and _TOC_NUMBERED.match(s)) or TOC_TITLE.match(s):
        return TextRole.TOC
    lines = [ln for ln in s.splitlines() if ln.strip()]
    if lines and all(_furniture_line(ln) or _norm_line(ln) in repeated for ln in lines):
        return TextRole.FURNITURE
    if _heading_like(s):
        return TextRole.HEADING
    return TextRole.BODY


def _toc_context(quote: str) -> bool:
    lines = [ln for ln in quote.splitlines() if ln.strip()]
    numbered = sum(1 for ln in lines if _TOC_NUMBERED.match(ln) or is_toc_line(ln))
    return any(TOC_TITLE.match(ln) for ln in lines) or numbered >= 3


def _lines(quote: str) -> list[Span]:
    out = []
    for m in re.finditer(r"[^\n]+", quote):
        a, b = m.span()
        while a < b and quote[a].isspace():
            a += 1
        while b > a and quote[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def _line_role(line: str, *, repeated: frozenset[str], toc: bool) -> TextRole | None:
    """The role of one line on its own evidence, or ``None`` (the line is read as part of its sentence)."""
    if navigation_like(line):
        return TextRole.NAVIGATION
    if is_toc_line(line) or (toc and _TOC_NUMBERED.match(line)) or TOC_TITLE.match(line):
        return TextRole.TOC
    if _norm_line(line) in repeated or _furniture_line(line):
        return TextRole.FURNITURE
    return None


def _line_roles(quote: str, repeated: frozenset[str]) -> dict[Span, TextRole]:
    """Lines that are something other than body text on their own, found before the text is cut into
    sentences (a TOC entry's dot leader or a footer glued to the last bullet of a slide would otherwise be cut
    into pieces or read as part of a sentence). A short title-only line
    opening a paragraph of several lines (a slide title, a PDF heading) is a heading."""
    spans = _lines(quote)
    toc = _toc_context(quote)
    out: dict[Span, TextRole] = {}
    for k, (a, b) in enumerate(spans):
        line = quote[a:b]
        role = _line_role(line, repeated=repeated, toc=toc)
        if role is None and k + 1 < len(spans):
            opens = k == 0 or quote[spans[k - 1][1]:a].count("\n") >= 2
            nxt = quote[spans[k + 1][0]:spans[k + 1][1]]
            joined = quote[b:spans[k + 1][0]].count("\n") < 2
            if opens and joined and (nxt[:1].isupper() or nxt[:1].isdigit()) and not _TABLE_ROW.match(line) \
                    and not _LIST_ITEM.match(line) and _heading_like(line):
                role = TextRole.HEADING
        if role is not None:
            out[(a, b)] = role
    return out


def source_units(quote: str, *, role: TextRole | str | None = None,
                 repeated: frozenset[str] = frozenset()) -> list[Unit]:
    """Every unit of ``quote`` with its role, in order: first the lines that are a non-body thing on their own
    (:func:`_line_roles`), then the chunker's units (:func:`rag.text.units`) of the rest, each judged
    by :func:`unit_role`.

    ``role``: the chunk's stored role (issue 28), when ingest recorded one: every unit of a chunk that is not
    ``body`` takes it. ``repeated``: see :func:`repeated_lines`.
    """
    whole = TextRole(role) if role else None
    if whole is not None and whole != TextRole.BODY:
        return [Unit(a, b, whole) for a, b in units(quote) if quote[a:b].strip()]
    special = _line_roles(quote, repeated)
    rest = masked(quote, special)
    toc = _toc_context(quote)
    out = [Unit(a, b, r) for (a, b), r in special.items()]
    out += [Unit(a, b, unit_role(rest[a:b], repeated=repeated, toc_context=toc))
            for a, b in units(rest) if rest[a:b].strip()]
    return sorted(out, key=lambda u: u.start)


def masked(text: str, spans: Iterable[Span]) -> str:
    """``text`` with every span replaced by as many spaces (offsets unchanged)."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def non_answer_spans(quote: str, *, role: TextRole | str | None = None, repeated: frozenset[str] = frozenset(),
                     keep: frozenset[TextRole] = frozenset({TextRole.BODY})) -> list[Span]:
    """``(start, end)`` offsets of the units of ``quote`` whose role is not in ``keep`` (default: all but
    body), sorted: what the key passage and the model's excerpt never use (``keep=SUPPORTING`` for what a
    claim may not lean on)."""
    return [(u.start, u.end) for u in source_units(quote, role=role, repeated=repeated)
            if u.role not in keep]
