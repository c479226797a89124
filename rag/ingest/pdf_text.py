"""Paragraphs of a paged document (stage 1, PDF branch): lines -> paragraphs -> one canonical text.

* lines are joined into paragraphs (one MuPDF block, no vertical gap, same font size), paragraphs and
  pages separated by a blank line; line-end hyphens follow :mod:`rag.ingest.hyphen` (joined only when
  the document attests the word), also across a column or page end;
* a paragraph looks like a heading by its font (:func:`heading_size`: a 1-2 line paragraph, <= 120
  chars, no final period, at least 1 pt above the body size, or bold and numbered); form and annotation
  text is never a heading;
* :func:`assemble` lays the pages out one after the other and records each page's span (1-based
  physical pages) and each paragraph's offsets.

Split out of :mod:`rag.ingest.pdf` (issue 28: no module over 500 lines).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from rag.ingest.hyphen import Lexicon, join_lines
from rag.ingest.layout import Line, paragraphs_of
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


def heading_size(para: list[Line], text: str, body: float) -> float | None:
    """The font size if paragraph ``para`` (joined ``text``) looks like a heading, else None."""
    if len(para) > 2 or len(text) > 120 or len(text) < 2 or text.endswith((".", ",", ";", ":", "-", "\u2010")):
        return None
    if re.search(r"[.!?] \S", _NUMBERED_PREFIX.sub("", text)):
        return None  # a sentence ends inside: body text in a large font (a call-out), not a heading
    if any(ln.kind != "text" or ln.sideways for ln in para):
        return None
    if not text[0].isalnum() or "@" in text or "://" in text:
        return None
    size = para[0].size
    if size >= body + 1 and sum(ch.isalpha() for ch in text) >= 3:
        return size
    if all(ln.bold for ln in para) and _NUMBERED.match(text) and size >= body - 0.5:
        return size
    return None


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


def _hyphen_end(text: str) -> bool:
    return text.endswith(("-", "\u2010")) and text[-2:-1].isalpha()


def page_paragraphs(lines: list[Line], lexicon: Lexicon, body: float) -> list[Para]:
    """A page's paragraphs, NFC; a paragraph cut by a column break (no final punctuation, next one starts
    lower-case, or ends in a hyphen the lexicon joins) is joined back; a short paragraph (a margin note)
    that falls between the two halves of a hyphenated word is moved before the joined paragraph."""
    out: list[Para] = []
    for para in paragraphs_of(lines):
        kind = para[0].kind
        if kind == "table":
            text = para[0].text
        else:
            text = join_lines([ln.text for ln in para], lexicon).replace("\u00ad", "")
        text = unicodedata.normalize("NFC", text).strip()
        if not text:
            continue
        size = heading_size(para, text, body)
        prev = out[-1] if out else None
        aside = out[-2] if len(out) > 1 else None
        if (aside is not None and aside.kind == kind == prev.kind == "text" and _hyphen_end(aside.text)
                and prev.lines <= 2 and len(prev.text) <= 60 and text[:1].islower()
                and lexicon.join(aside.text, text)):
            # ``For for-`` | margin note ``splncs04.bst`` | ``matting``: the word goes on past the note
            aside.text = aside.text[:-1] + text
            aside.lines += len(para)
            out[-2], out[-1] = out[-1], aside
            continue
        if (prev is not None and kind == prev.kind == "text" and text[:1].islower()
                and (size == prev.size or prev.text.endswith(("-", "\u2010")))
                and not prev.text.endswith((".", "!", "?", ":", ";"))
                and not (_hyphen_end(prev.text) and re.match(r"\S*\d", text))):
            # a paragraph cut by a column break, or a call-out / heading set one line per block
            prev.text = join_lines([prev.text, text], lexicon)
            prev.lines += len(para)
            if prev.size != size or (prev.size is not None and (prev.lines > 2 or len(prev.text) > 120)):
                prev.size = None  # too long for a heading: body text, so it stays in the chunks
        else:
            out.append(Para(text, size, len(para), kind))
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
