"""Paragraphs of a paged document (stage 1, PDF branch): lines -> paragraphs -> one canonical text.

* lines are joined into paragraphs (one MuPDF block, no vertical gap, same font size), paragraphs and
  pages separated by a blank line; line-end hyphens follow :mod:`rag.ingest.pdf.hyphen` (joined only when
  the document attests the word), also across a column or page end;
* a paragraph looks like a heading by its font (:func:`heading_size`: a 1-2 line paragraph, <= 120
  chars, no final period, at least 1 pt above the body size, or bold and numbered; :func:`is_bold_title`:
  bold, short and followed by prose where bold is rare in the document); form and annotation text and
  decorative rules are never headings;
* :func:`assemble` lays the pages out one after the other and records each page's span (1-based
  physical pages) and each paragraph's offsets.

Split out of :mod:`rag.ingest.pdf` (issue 28: no module over 500 lines).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from rag.ingest.pdf.hyphen import Lexicon, join_lines, soft_hyphens
from rag.ingest.pdf.layout import Line, paragraphs_of
from rag.types import PageSpan

#: Item markers of bulleted lists as PDFs draw them (Beamer's triangle and ball, Word's and PowerPoint's dots).
BULLETS = "\u2022\u00b7\u25aa\u25b8\u25b6\u25ba\u2023\u25e6\u25cb\u25cf\u25a0\u25a1\u27a2\u27a4\u2043"
#: Dashes and asterisks count as markers only when a space follows them.
_SPACED_MARKERS = "\u2013\u2014*-"
_ITEM = re.compile(f"^(?:[{BULLETS}]\\s*\\S|[{_SPACED_MARKERS}]\\s+\\S)")
_NUMBERED_PREFIX = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+")
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+\S")


def body_size(pages: list[list[Line]]) -> float:
    """The body font size: the size carrying the most characters."""
    c: Counter = Counter()
    for lines in pages:
        for ln in lines:
            c[ln.size] += len(ln.text)
    return c.most_common(1)[0][0] if c else 10.0


#: Bold is a heading's weight, not the body's, when at most this share of a document's text characters is bold.
BOLD_TITLES_MAX_SHARE = 0.10
#: Author and affiliation marks (a byline), or a page number at the end (a table-of-contents entry): a bold
#: line holding one is not a section title.
_NOT_TITLE = re.compile(r"[*\u2217\u2020\u2021\u00a7]|\d\s*,|,\s*\d|\s\d+$")


def bold_is_rare(pages: list[list[Line]]) -> bool:
    """Whether bold marks titles in these pages rather than body text: at most :data:`BOLD_TITLES_MAX_SHARE` of
    their text-layer characters are in bold lines (0.3 % in a story anthology, 1.5-4.4 % in the dev PDFs)."""
    total = bold = 0
    for lines in pages:
        for ln in lines:
            if ln.kind == "text":
                total += len(ln.text)
                bold += len(ln.text) if ln.bold else 0
    return total > 0 and bold <= BOLD_TITLES_MAX_SHARE * total


def is_ornament(text: str) -> bool:
    """Whether ``text`` is a decorative rule drawn in a picture font, whose letters are not words
    (``xyxyxyxyxyx``, ``kikikiki``): six or more letters made of at most three distinct letter pairs."""
    letters = "".join(ch for ch in text.lower() if ch.isalpha())
    return len(letters) >= 6 and len({letters[i:i + 2] for i in range(len(letters) - 1)}) <= 3


def _heading_shaped(para: list[Line], text: str, max_chars: int) -> bool:
    """The shape every heading has, whatever marks it: one or two text-layer lines (not sideways), 2 to
    ``max_chars`` characters, no final period, comma, colon or hyphen, no sentence ending inside (a large-font
    call-out is body text), opening with a letter or digit, no address or URL, no decorative rule
    (:func:`is_ornament`)."""
    if len(para) > 2 or not 2 <= len(text) <= max_chars or text.endswith((".", ",", ";", ":", "-", "\u2010")):
        return False
    if re.search(r"[.!?] \S", _NUMBERED_PREFIX.sub("", text)):
        return False
    if any(ln.kind != "text" or ln.sideways for ln in para):
        return False
    return text[0].isalnum() and "@" not in text and "://" not in text and not is_ornament(text)


def heading_size(para: list[Line], text: str, body: float) -> float | None:
    """The font size if paragraph ``para`` (joined ``text``) looks like a heading, else None.

    A heading is one or two lines of at most 120 characters, without a final period or a sentence ending
    inside, of text-layer lines, and either at least 1 pt above the ``body`` size (points), or bold and
    numbered, or numbered in capitals (small capitals, :func:`_capitals`). A decorative rule (:func:`is_ornament`)
    and a byline (:func:`is_byline`) are never headings. See also :func:`is_bold_title`.
    """
    if not _heading_shaped(para, text, 120) or is_byline(text):
        return None
    size = para[0].size
    if size >= body + 1 and sum(ch.isalpha() for ch in text) >= 3:
        return size
    if all(ln.bold for ln in para) and _NUMBERED.match(text) and size >= body - 0.5:
        return size
    if _capitals(text) and _NUMBERED.match(text) and size >= 0.75 * body:  # small capitals: their letters are smaller
        return size
    return None


def _capitals(text: str) -> bool:
    """Whether ``text`` after its number is set in capitals (IEEE's "II. STRESS-ENGINEERED MICROROBOT", not bold:
    small capitals, whose line reads as their smaller letters' size), at least 4 letters."""
    letters = [ch for ch in _NUMBERED_PREFIX.sub("", text) if ch.isalpha()]
    return len(letters) >= 4 and all(ch.isupper() for ch in letters)


#: A name followed by its author marks: affiliation digits or a footnote sign ("Foroutan1*,", "Majumdar1").
_AUTHOR_MARK = re.compile(r"[a-z][\d*\u2217\u2020\u2021\u00a7]+(?=[,\s]|$)")


def is_byline(text: str) -> bool:
    """Whether a one- or two-line paragraph is a paper's byline, not a heading: two or more names with author
    marks ("Vahid Foroutan1*, Ratul Majumdar1"), or one with a footnote sign, between commas or "and" (a new
    user's walk, 2026-12-07: the byline set 1 pt above the body became every chunk's section)."""
    marks = _AUTHOR_MARK.findall(text)
    signs = any(ch in text for ch in "*\u2217\u2020\u2021\u00a7")
    return ("," in text or " and " in text) and (len(marks) >= 2 or (signs and len(marks) >= 1))


def is_bold_title(para: list[Line], text: str, body: float) -> bool:
    """Whether paragraph ``para`` (joined ``text``) is an unnumbered title set bold in the body's size: it passes
    :func:`heading_size`'s shape rules, every line is bold, at least ``body`` - 0.5 pt, capitalised, at most 80
    characters, not a byline or a contents entry (:data:`_NOT_TITLE`). Only where bold is rare
    (:func:`bold_is_rare`), and only when prose follows (:func:`page_paragraphs`)."""
    if not _heading_shaped(para, text, 80) or not text[0].isupper() or _NOT_TITLE.search(text):
        return False
    return all(ln.bold for ln in para) and para[0].size >= body - 0.5 and sum(ch.isalpha() for ch in text) >= 3


def is_prose(text: str) -> bool:
    """Whether a paragraph reads as running text: 8 or more words, at least 70 % of its non-space characters
    letters (a table's data row is mostly digits)."""
    chars = [ch for ch in text if not ch.isspace()]
    return len(text.split()) >= 8 and sum(ch.isalpha() for ch in chars) >= 0.7 * len(chars)


# --------------------------------------------------------------------------- paragraphs


@dataclass
class Para:
    """One paragraph of the canonical text: ``text``; ``size`` heading font size or ``None``; ``lines``
    how many visual lines; ``kind`` of its first line; ``start``/``end`` canonical offsets once placed."""

    text: str
    size: float | None
    lines: int
    kind: str
    start: int = 0
    end: int = 0
    bold_title: bool = False
    font: float | None = None  # the first line's font size (points), heading or not
    code: bool = False  # lines kept as set (:func:`code_text`)


#: Monospaced lines are a code listing's only where they are at most this share of the page's text: a page typed
#: in Courier throughout is prose. (0.5 before: a manual's page of two PostScript listings, 56 % Courier, read each
#: listing as one line, its comments swallowing the code after them; pdfcpu's DCT_Filter.pdf, a new user's walk,
#: 2026-12-07. Prose typed in Courier and wrapped at a margin is joined anyway: :func:`wrapped_prose`.)
CODE_MAX_SHARE = 0.8


def wrapped_prose(para: list[Line]) -> bool:
    """Whether monospaced lines are prose wrapped at a margin (a letter quoted in Courier: a review, 2026-12-07), not a
    listing: three or more lines of 40 characters on average, all but the last at least 60 % as wide as the widest
    for 80 % of them (ragged right, not a listing's short lines), letters and spaces 85 % of the characters."""
    if len(para) < 3 or sum(len(ln.text) for ln in para) < 40 * len(para):
        return False
    widths = [ln.x1 - ln.x0 for ln in para]
    full = max(widths)
    wide = sum(w >= 0.6 * full for w in widths[:-1]) >= 0.8 * (len(para) - 1)
    text = " ".join(ln.text for ln in para)
    return wide and sum(ch.isalpha() or ch.isspace() for ch in text) >= 0.85 * len(text)


def code_text(para: list[Line]) -> str:
    """A code listing's or a command line's lines as set: one per line, indented by their offset from the leftmost
    (in the font's character widths). Joined as prose they were one run-on line (a router's configuration guide,
    a JavaScript listing: a new user's walk, 2026-12-07)."""
    left = min(ln.x0 for ln in para)
    width = max(0.6 * para[0].size, 1.0)
    return "\n".join(" " * min(int(round((ln.x0 - left) / width)), 40) + ln.text for ln in para)


#: Spacing accents a TeX font draws as a glyph of their own before the letter they sit on (OT1 encoding): the text
#: layer reads "Mazi`eres", "M\u00b4ery" where a reader sees "Mazi\u00e8res", "M\u00e9ry" (a new user's walk over the
#: Raft paper, 2026-12-07). Each maps to its combining mark.
SPACING_ACCENTS = {"`": "\u0300", "\u00b4": "\u0301", "\u00a8": "\u0308", "\u02c6": "\u0302", "\u02dc": "\u0303",
                   "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02da": "\u030a"}


def spacing_accents(text: str) -> str:
    """``text`` with each spacing accent that stands before a letter, inside a word or (not a backtick) at its start,
    composed with it when Unicode has that accented letter ("Mazi`eres" -> "Mazi\u00e8res", "G\u00a8odel" ->
    "G\u00f6del"; "run `echo`" and "x`y" stay as they are). ASCII "^" and "~" are never read as accents. Linear."""
    if not any(ch in text for ch in SPACING_ACCENTS):
        return text
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        before = text[i - 1] if i else " "
        # a backtick only inside a word ("Mazi`eres"): before a word it opens code ("run `echo`")
        if ch in SPACING_ACCENTS and i + 1 < len(text) and text[i + 1].isalpha() \
                and (before.isalpha() or (before.isspace() and ch != "`")):
            composed = unicodedata.normalize("NFC", text[i + 1] + SPACING_ACCENTS[ch])
            if len(composed) == 1:
                out.append(composed)
                i += 2
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _hyphen_end(text: str) -> bool:
    return text.endswith(("-", "\u2010")) and text[-2:-1].isalpha()


def page_paragraphs(lines: list[Line], lexicon: Lexicon, body: float, bold_titles: bool = False) -> list[Para]:
    """A page's paragraphs, NFC; a paragraph cut by a column break (no final punctuation, next one starts
    lower-case, or ends in a hyphen the lexicon joins) is joined back; a short paragraph (a margin note)
    that falls between the two halves of a hyphenated word is moved before the joined paragraph.
    ``body`` is the body font size (points); ``bold_titles`` lets bold unnumbered lines be headings
    (:func:`is_bold_title`) when running text follows them within two paragraphs (:func:`is_prose`)."""
    out: list[Para] = []
    total = sum(len(ln.text) for ln in lines if ln.kind == "text")
    listings = sum(len(ln.text) for ln in lines if ln.kind == "text" and ln.mono) <= CODE_MAX_SHARE * total
    for para in paragraphs_of(lines):
        kind = para[0].kind
        code = (listings and kind == "text" and len(para) >= 2 and all(ln.mono for ln in para)
                and not wrapped_prose(para))
        if kind == "table":
            text = para[0].text
        elif code:
            text = code_text(para)
        else:
            text = soft_hyphens(join_lines([ln.text for ln in para], lexicon), lexicon)
        text = unicodedata.normalize("NFC", spacing_accents(text))
        text = text.rstrip().lstrip("\n") if code else text.strip()
        if not text:
            continue
        size = heading_size(para, text, body)
        bold_title = size is None and bold_titles and is_bold_title(para, text, body)
        if bold_title:
            size = para[0].size
        prev = out[-1] if out else None
        aside = out[-2] if len(out) > 1 else None
        if code:  # a listing is never joined to the prose around it, nor a heading
            out.append(Para(text, None, len(para), kind, font=para[0].size, code=True))
            continue
        if prev is not None and prev.code:
            prev = aside = None
        if (aside is not None and aside.kind == kind == prev.kind == "text" and _hyphen_end(aside.text)
                and prev.lines <= 2 and len(prev.text) <= 60 and text[:1].islower()
                and lexicon.join(aside.text, text)):
            # ``For for-`` | margin note ``splncs04.bst`` | ``matting``: the word goes on past the note
            aside.text = aside.text[:-1] + text
            aside.lines += len(para)
            out[-2], out[-1] = out[-1], aside
            continue
        if (prev is not None and len(out) == 1 and kind == prev.kind == "text" and prev.font == para[0].size
                and size is not None and prev.size is None and prev.lines >= 3 and not prev.text.endswith((".", "!", "?", ":", ";"))
                and len(para) == 1 and text[:1].isupper()):
            # a long title (the page's first paragraph) wrapped over two blocks: three lines "... using
            # Electrostatic" | "Hysteresis" (its last
            # line, alone in its block, was the document's first heading: a new user's walk, 2026-12-07). A
            # heading of two lines over another stays two headings ("CLUSTER COORDINATION AT" | "COUNTRY LEVEL")
            prev.text = join_lines([prev.text, text], lexicon)
            prev.lines += 1
            continue
        if (prev is not None and kind == prev.kind == "text" and text[:1].islower()
                and (size == prev.size or prev.text.endswith(("-", "\u2010")))
                and not prev.text.endswith((".", "!", "?", ":", ";"))
                and not (_hyphen_end(prev.text) and re.match(r"(?<!\S)\S*\d", text))):
            # a paragraph cut by a column break, or a call-out / heading set one line per block
            prev.text = join_lines([prev.text, text], lexicon)
            prev.lines += len(para)
            if prev.size != size or (prev.size is not None and (prev.lines > 2 or len(prev.text) > 120)):
                prev.size = None  # too long for a heading: body text, so it stays in the chunks
        else:
            out.append(Para(text, size, len(para), kind, bold_title=bold_title, font=para[0].size))
    for i, p in enumerate(out):
        if p.bold_title and not any(q.kind == "text" and q.size is None and is_prose(q.text) for q in out[i + 1:i + 3]):
            p.size = None  # a bold line that no prose follows: a table's header row, a label, not a title
    return join_items(out)


def is_item(text: str) -> bool:
    """Whether a paragraph is a list item: a bullet marker first (:data:`BULLETS`), or a dash or ``*`` and a space."""
    return bool(_ITEM.match(text))


def join_items(paras: list[Para]) -> list[Para]:
    """A page's list items as lists (issue 28: a slide's bullets are a list): a marker drawn alone (Beamer and
    PowerPoint draw the marker apart from its text) is joined to the paragraph after it, and consecutive
    items become one paragraph, one item per line, so the chunker keeps them as list lines."""
    out: list[Para] = []
    for p in paras:
        prev = out[-1] if out else None
        if (prev is not None and prev.kind == p.kind == "text" and len(prev.text) <= 2
                and prev.text.strip() and prev.text.strip() in BULLETS + _SPACED_MARKERS):
            prev.text, prev.size, prev.lines = prev.text.strip() + " " + p.text, None, prev.lines + p.lines
            p = out.pop()
        prev = out[-1] if out else None
        if prev is not None and prev.kind == p.kind == "text" and is_item(p.text) and is_item(prev.text.split("\n")[0]):
            prev.text, prev.size, prev.lines = prev.text + "\n" + p.text, None, prev.lines + p.lines
            continue
        out.append(p)
    return out


def join_across_pages(pages: list[list[Para]], lexicon: Lexicon) -> None:
    """A word hyphenated over a page end (``Mög-`` | ``lichkeit``) is completed on the earlier page when
    the lexicon joins it; the rest of the paragraph stays on its page. In place."""
    prev_last: Para | None = None
    for paras in pages:
        if not paras:
            continue
        first = paras[0]
        if (prev_last is not None and prev_last.kind == first.kind == "text" and prev_last.size is None
                and prev_last.text.endswith(("-", "\u2010")) and first.text[:1].islower()
                and lexicon.join(prev_last.text, first.text)):
            word, _, rest = first.text.partition(" ")
            prev_last.text = prev_last.text[:-1] + word
            first.text = rest.strip()
            if not first.text:
                paras.pop(0)
        prev_last = paras[-1] if paras else prev_last



@dataclass
class Built:
    canonical: str
    spans: list[PageSpan]
    paras: list[Para]


def assemble(pages: list[list[Para]], labels: list[str | None]) -> Built:
    parts: list[str] = []
    spans: list[PageSpan] = []
    all_paras: list[Para] = []
    pos = 0
    for i, paras in enumerate(pages):
        if not paras:
            spans.append(PageSpan(i + 1, labels[i], pos, pos))
            continue
        page_start = pos + 2 if parts else 0
        off = page_start
        for j, p in enumerate(paras):
            if j:
                off += 2
            p.start, p.end = off, off + len(p.text)
            off = p.end
            all_paras.append(p)
        parts.append("\n\n".join(p.text for p in paras))
        pos = page_start + len(parts[-1])
        spans.append(PageSpan(i + 1, labels[i], page_start, pos))
    return Built("\n\n".join(parts), spans, all_paras)
