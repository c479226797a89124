"""Page furniture of paged documents (stage 1; issues 13 and 28): running headers and footers, slide decks.

A running line is a line in the top or bottom :data:`HEADER_ZONE` of the page whose text, digits ignored,
repeats on at least half of the pages (3 pages or more), counted over all pages and again over odd and
over even pages (books whose headers alternate), whose numbers stay or count pages (:func:`_counts_pages`: an
invoice's number and total are the page's own) and which is not the only text of most of its pages. Such lines are taken out of the canonical text (so out of
chunks, key passages and claims) and recorded as dropped on purpose, so the coverage audit does not count
them as lost; the viewer still shows them, on the page itself. A line in those zones with no letter or
digit (a rule of dots, a decoration) is furniture too.

A **slide deck** (:func:`is_slide_deck`: 3+ pages, at least 80 % of them landscape at 1.2:1 or wider,
at most 1,200 characters of text on a page at the median; Beamer, PowerPoint and Keynote exports) is read
as slides: each frame title is a heading (the font-size rule), its bullets a list
(:func:`rag.ingest.pdf.pdf_text.join_items`), and its title slide (page 1 with no sentence of 12 words) is
tagged :attr:`rag.types.TextRole.HEADING` (:func:`title_slide`): the author and date on it are never a
key passage ("X is the founder of OpenBSD" was taken from a title slide). An overlay step (Beamer's
``\\pause``, a PowerPoint build exported slide by slide: every line of the page is on the next page too)
is left out in favour of the completed slide that follows it (:func:`drop_overlay_steps`), so the deck
does not make the same chunk four times and a citation opens the slide with every item shown.
"""

from __future__ import annotations

import re
from collections import Counter

from rag.ingest.pdf.layout import Line
from rag.ingest.pdf.pdf_page import PageRead
from rag.ingest.pdf.pdf_text import body_size
from rag.types import PageSpan, RoleSpan, TextRole

#: Share (0..1) of the page height, at the top and at the bottom, where running headers and footers sit.
HEADER_ZONE = 0.12
#: In a deck, margin lines at most this share of the body font size are its headline and footline print.
SMALL_PRINT = 0.75


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text)).strip().lower()


def _is_margin(ln: Line) -> bool:
    return ln.y1 <= HEADER_ZONE * ln.page_h or ln.y0 >= (1 - HEADER_ZONE) * ln.page_h


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:8])


def _fits(n: tuple[int, ...], prev: tuple[int, ...], step: int, page: int, bound: int | None) -> bool:
    return all(v == p or (v - p == step and (bound is None or abs(v - page) <= bound)) for v, p in zip(n, prev))


def _counts_pages(seen: list[tuple[int, list[tuple[int, ...]]]], words: bool = False) -> bool:
    """Whether a line repeated on pages (``(1-based page, the numbers of each of its lines on that page)``) is a
    running line by its numbers: from page to page each number stays the same or moves on by as many pages (a page
    counter, "Page 3 of 11", a journal's "1125"), allowing :data:`COUNTER_BREAKS` of the steps to break (a book's
    printed numbers skip where plates or blank pages are left unnumbered). A number that changes otherwise
    ("Invoice 1043" on page 1, "1051" on page 2; "Total due: EUR 3,087.40") is the page's own fact (a walk over qpdf's
    test files, 2026-12-07: every invoice's number and total were dropped as a running footer, coverage 100 %).
    A line with ``words`` counts pages only within :data:`MAX_PAGE_OFFSET` of the page's own number ("Invoice 1044"
    on page 2 is an invoice's number, "1125" alone a journal's page)."""
    bound = MAX_PAGE_OFFSET if words else None
    width = Counter(len(n) for _, options in seen for n in options).most_common(1)[0][0]
    rows = [(page, [n for n in options if len(n) == width][:MAX_OPTIONS]) for page, options in seen]
    rows = [(page, options) for page, options in rows if options]
    if len(rows) < 2:
        return True
    allowed = COUNTER_BREAKS * (len(rows) - 1)
    for start in rows[0][1]:
        prev, prev_page, breaks = start, rows[0][0], 0
        for page, options in rows[1:]:
            fit = next((n for n in options if _fits(n, prev, page - prev_page, page, bound)), None)
            breaks += fit is None
            prev, prev_page = fit or options[0], page
            if breaks > allowed:
                break
        if breaks <= allowed:
            return True
    return False


#: How far a counting number in a line with words may stand from the page's own number (front matter, a part's
#: title pages): further, it is the page's own fact (:func:`_counts_pages`).
MAX_PAGE_OFFSET = 60
#: Share of the page-to-page steps of a running line's numbers that may break the count (:func:`_counts_pages`).
COUNTER_BREAKS = 0.2
#: Lines of one key read on a page at most (a page number and a footnote's number both read "#").
MAX_OPTIONS = 4


def _repeated(pages: list[list[Line]], min_pages: int, first: int = 1, step: int = 1) -> set[str]:
    """Keys of margin lines repeated on at least half of ``pages`` (whose 1-based numbers are ``first``,
    ``first + step`` ...) and :data:`min_pages`, whose numbers count pages (:func:`_counts_pages`), and which are
    not the only text of most of their pages (qpdf's "Original page 5", "Potato": a page's one line is its text)."""
    if len(pages) < min_pages:
        return set()
    seen: dict[str, list[tuple[int, list[tuple[int, ...]]]]] = {}
    alone: Counter = Counter()
    for j, lines in enumerate(pages):
        text = [ln for ln in lines if ln.kind == "text" and ln.text.strip()]
        mine: dict[str, list[tuple[int, ...]]] = {}
        for ln in text:
            if _is_margin(ln):
                mine.setdefault(_key(ln.text), []).append(_numbers(ln.text))
        for k, options in mine.items():
            seen.setdefault(k, []).append((first + j * step, options))
            alone[k] += len(text) == 1
    need = max(min_pages, (len(pages) + 1) // 2)
    return {k for k, at in seen.items() if len(at) >= need and 2 * alone[k] < len(at)
            and _counts_pages(at, any(c.isalpha() for c in k))}


def running_lines(pages: list[list[Line]]) -> tuple[set[str], set[str], set[str]]:
    """Keys (digits -> ``#``) of header/footer lines repeating on >= half the pages (3+ pages): over all
    pages, over odd pages and over even pages (1-based), as ``(all, odd, even)`` (:func:`_repeated`)."""
    odd, even = pages[0::2], pages[1::2]
    return _repeated(pages, 3), _repeated(odd, 3, 1, 2), _repeated(even, 3, 2, 2)


#: A book's running head changes with its chapter: the top row of a page, in at most the body size, whose words
#: (digits aside) head this many pages or more within a few pages of each other is one, though it heads under half.
CHAPTER_HEAD_PAGES = 3
#: Share of the page height the top row of a page must end within to be read as a running head (a book set with
#: a wide top margin puts its heads below :data:`HEADER_ZONE`: mupdf_explored.pdf's at 13.6 %).
HEAD_ROW_ZONE = 0.2


def _top_row(r: PageRead) -> list[Line]:
    """The page's topmost row of text lines (a running head and its page number), when it lies in the top
    :data:`HEAD_ROW_ZONE` of the page."""
    text = [ln for ln in r.lines if ln.kind == "text" and ln.text.strip()]
    if not text:
        return []
    top = min(ln.y0 for ln in text)
    return [ln for ln in text if ln.y0 <= top + 2 and ln.y1 <= HEAD_ROW_ZONE * ln.page_h]


def chapter_heads(reads: list[PageRead]) -> set[str]:
    """Keys of running heads that change with the chapter (mupdf_explored.pdf: 125 lines such as "CHAPTER 8. THE
    DOCUMENT INTERFACE 30" kept, one inside a quoted passage; a new user's walk, 2026-12-07): a page's top row
    (:func:`_top_row`) that holds a page number (a line of digits), at most the body text's size, repeated on
    :data:`CHAPTER_HEAD_PAGES` pages or more, three of them within five pages (a chapter's run, not a heading the
    document repeats far apart). A chapter's own
    heading is larger than the body, or on one page only, and a title or a table's header repeated at the top of
    pages has no page number beside it (a reviewer's probe, 2026-12-07: "Chapter 1" ... "Chapter 4" in the body
    size, and a table header repeated on four pages, were dropped), so they stay."""
    body = _inner_body(reads)
    pages: dict[str, list[int]] = {}
    for i, r in enumerate(reads):
        row = _top_row(r)
        if not any(ln.text.strip().isdigit() for ln in row):
            continue  # a running head shares its row with the page number; a title or a table header does not
        for k in {_key(ln.text) for ln in row if ln.size <= body + 0.1 and sum(c.isalpha() for c in ln.text) >= 4}:
            pages.setdefault(k, []).append(i)
    n = CHAPTER_HEAD_PAGES
    return {k for k, at in pages.items() if len(at) >= n and any(at[j + n - 1] - at[j] <= 5 for j in range(len(at) - n + 1))}


def _inner_body(reads: list[PageRead]) -> float:
    """The body font size of the pages' text outside the margins (a deck's footline can carry more characters)."""
    return body_size([[ln for ln in r.lines if ln.kind == "text" and not _is_margin(ln)] for r in reads])


def small_print(reads: list[PageRead]) -> set[str]:
    """Keys of a deck's headline and footline: margin lines in small print (at most :data:`SMALL_PRINT` of the
    body size) repeating on 3 pages or more. A deck's navigation and footer change with its sections, so they
    repeat on fewer than half of the pages; its frame titles are large, so they never count."""
    body = _inner_body(reads)
    counts: Counter = Counter()
    for r in reads:
        counts.update({_key(ln.text) for ln in r.lines
                       if ln.kind == "text" and _is_margin(ln) and ln.size <= SMALL_PRINT * body})
    return {k for k, n in counts.items() if n >= 3}


#: A running line in type this many times the body size or larger is a title repeated on every page: its first
#: occurrence is kept ("PRIMARY ELECTION, AUGUST 7, 2018" over each page of a county's results was nowhere in the
#: text, a new user's walk, 2026-12-07).
REPEATED_TITLE = 1.3


def drop_running(reads: list[PageRead], deck: bool = False) -> None:
    """Remove running header/footer lines from ``reads`` in place, recording them in ``dropped``; in a slide
    ``deck`` (:func:`is_slide_deck`) also its small-print headline and footline (:func:`small_print`). A running
    line in large type (:data:`REPEATED_TITLE`) is kept where it first stands."""
    every, odd, even = running_lines([r.lines for r in reads])
    every |= small_print(reads) if deck else set()
    heads = set() if deck else chapter_heads(reads)
    body = _inner_body(reads)
    title_size = body + 1 if deck else float("inf")  # a deck's frame titles are never furniture
    once: set[str] = set()  # a title repeated at the top of every page is read once, where it first stands
    for i, r in enumerate(reads):
        keys = every | (odd if i % 2 == 0 else even)
        keep = []
        if heads:  # a chapter's running head, and the page number on its row
            row = _top_row(r)
            if any(_key(ln.text) in heads for ln in row):
                gone = {id(ln) for ln in row if _key(ln.text) in heads or ln.text.strip().isdigit()}
                r.dropped += [ln.text for ln in row if id(ln) in gone]
                r.lines = [ln for ln in r.lines if id(ln) not in gone]
        for ln in r.lines:
            key = _key(ln.text)
            if not deck and key in keys and ln.size >= REPEATED_TITLE * body and key not in once:
                once.add(key)
                keep.append(ln)
            elif (ln.kind == "text" and _is_margin(ln) and ln.size < title_size
                    and (key in keys or not any(c.isalnum() for c in ln.text))):
                r.dropped.append(ln.text)
            else:
                keep.append(ln)
        r.lines = keep


def drop_overlay_steps(reads: list[PageRead]) -> list[int]:
    """In a deck, empty every page whose lines (text, as a multiset) are all on the next page too, recording
    them as dropped on purpose; returns the 1-based pages emptied."""
    out = []
    for i in range(len(reads) - 1):
        mine = Counter(" ".join(ln.text.split()) for ln in reads[i].lines)
        if mine and not mine - Counter(" ".join(ln.text.split()) for ln in reads[i + 1].lines):
            reads[i].dropped += [ln.text for ln in reads[i].lines]
            reads[i].lines = []
            out.append(i + 1)
    return out


def is_slide_deck(reads: list[PageRead]) -> bool:
    """Whether the pages read are a slide deck (rule in the module doc)."""
    sized = [r for r in reads if r.width and r.height]
    if len(sized) < 3:
        return False
    wide = sum(r.width >= 1.2 * r.height for r in sized)
    chars = sorted(sum(len(ln.text) for ln in r.lines) for r in reads)
    return wide >= 0.8 * len(sized) and chars[len(chars) // 2] <= 1200


def _has_long_sentence(text: str, words: int = 12) -> bool:
    r"""Whether ``text`` holds a sentence of ``words`` words or more: a word ending in ``.``, ``!`` or ``?`` with
    at least ``words - 1`` words before it (what ``(?:\S+\s+){11,}\S+[.!?](?=\s|$)`` found, in a linear scan
    instead: issue 35)."""
    return any(w[-1] in ".!?" for w in text.split()[words - 1:])


def title_slide(canonical: str, spans: list[PageSpan]) -> list[RoleSpan]:
    """The title slide of a deck as a ``heading`` role span: page 1's text when it holds no sentence of 12+
    words (a title, an author, an institute, a date); ``[]`` otherwise."""
    if not spans or spans[0].end <= spans[0].start:
        return []
    text = canonical[spans[0].start:spans[0].end]
    if _has_long_sentence(text):
        return []
    return [RoleSpan(TextRole.HEADING, spans[0].start, spans[0].end)]
