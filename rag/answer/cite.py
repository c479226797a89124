"""Design stages 8/9: numbered sources, locators and URL fragments (server-side citations).

PUBLIC API: :class:`Citation` (record), :func:`row_locator`, :func:`locator_label`, :func:`fragment`,
:func:`citations` (gate result + store -> numbered citations),
:func:`citations_from_rows` (the same without a store; labels two sources share told apart, :func:`told_apart`),
:func:`format_sources_for_prompt`
(the prompt block of stage 8: numbers, short headings and quotes, never a link), and a citation's JSON
(:func:`citation_json` / :func:`citation_from_json`).

The model only ever writes ``[n]``; the server maps each ``n`` to the document
id, name, locator label, fragment and quote built here.

Page locators (issue 13, item 3): a PDF citation's page is the page holding the cited sentence, not the
page the chunk starts on. For a chunk that runs over a page break, :func:`evidence_span` picks the
sentence(s) of the quote sharing most terms with the question, and :func:`evidence_page` finds the page
holding them in the document's page map (the store keeps it, issue 23: nothing here opens the PDF).
The chunk keeps its range: the label reads ``p. 2 (pp. 1-2)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from rag.answer.tables import table_columns
from rag.errors import StoreError
from rag.ingest.office.pptx import NOTES_HEADING
from rag.question import analyse
from rag.text import tokenize, units
from rag.types import Hit, Locator, LocatorKind, TextRole, page_at, role_of

if TYPE_CHECKING:
    from rag.answer.gate import GateResult
    from rag.store.store import Store


@dataclass(frozen=True)
class Citation:
    """One numbered source, as the server attaches it after generation.

    ``index`` is the ``n`` of ``[n]`` (1-based); ``document_id`` the content
    hash; ``document_name`` the user's file name (display only);
    ``locator_label`` e.g. ``"paper.pdf, p. 5"``, ``"guide.md > Install > Linux"``,
    ``"deck.pptx, slide 3"``, ``"sales.xlsx, Q1!A2:D9"``;
    ``fragment`` ``"#page=N"`` (1-based physical page) for PDFs,
    ``"#char=START,END"`` (0-based code points into the canonical text) for
    text, DOCX and EPUB, and the format's own for the others (see
    :func:`fragment`); ``quote`` the chunk's ``content`` (never its embedded ``text``);
    ``cosine_distance`` in ``[0, 2]``; ``fused_rank`` 1-based rank after
    reciprocal rank fusion; ``page`` 1-based or ``None``; ``start``/``end``
    canonical offsets; ``media_type`` of the document; ``chunk_id`` the
    store's chunk row id; ``section`` the heading path; ``document_label``
    the name as shown (the name plus a short id when another stored document
    has the same name; empty means ``document_name``); ``locator`` the chunk's
    :class:`rag.types.Locator` (``None`` for chunks stored before issue 17); ``also_in``
    the locator labels of other chunks with exactly the same content, collapsed
    into this source before gating and citing (issue 15: the same text
    uploaded twice is cited once and says where else it is); ``role`` the
    chunk's :class:`rag.types.TextRole` (issue 28; ``body`` for chunks stored before it):
    anything but ``body`` is never a key passage nor the support of a claim. ``unit_cosines``: the question's
    cosine similarity to each unit of the quote that has a stored vector (issue 27's sentences, list items, table
    rows), as ``(start, end, cosine)`` with offsets into ``quote``; set by
    :func:`rag.answer.pipeline.gated_sources` for the key passage's choice, empty elsewhere, never serialized.
    ``columns``: the names of the columns of the table the chunk sits in (its header row's cells, from the stored
    canonical text; empty outside a named table) and ``first_column`` the 0-based column of the quote's first
    cell (a piece of a wide row starts mid-row): the model and the claim check read each row with its column
    names (:mod:`rag.answer.tables`).
    """

    index: int
    document_id: str
    document_name: str
    locator_label: str
    fragment: str
    quote: str
    cosine_distance: float
    fused_rank: int
    page: int | None
    start: int
    end: int
    media_type: str
    chunk_id: int
    section: tuple[str, ...] = ()
    document_label: str = ""
    locator: Locator | None = None
    also_in: tuple[str, ...] = ()
    role: TextRole = TextRole.BODY
    unit_cosines: tuple[tuple[int, int, float], ...] = field(default=(), compare=False, repr=False)
    columns: tuple[str, ...] = ()
    first_column: int = 0


class ChunkLike(Protocol):
    """What a citation needs from a stored chunk (``rag.store.store.ChunkRow`` provides it).

    ``locator`` may be ``None`` (text, chunks stored before issue 17, PDF chunks stored before issue 36);
    ``role`` the chunk's :class:`rag.types.TextRole` (or its value).
    """

    chunk_id: int
    document_id: str
    document_name: str
    document_label: str
    media_type: str
    content: str
    section: tuple[str, ...]
    start: int
    end: int
    page: int | None
    page_end: int | None
    locator: Locator | None
    role: TextRole | str


def row_locator(row: ChunkLike) -> Locator:
    """The chunk's :class:`rag.types.Locator`: the stored one (issue 17's formats, and PDF chunks since issue 36),
    else ``page`` from ``page``/``page_end`` (a PDF chunk stored before: 1-based physical pages), else ``chars``
    (text and Markdown)."""
    loc = row.locator
    if loc is not None:
        return loc
    if row.page is not None:
        return Locator(LocatorKind.PAGE, row.page, row.page_end if row.page_end is not None else row.page)
    return Locator(LocatorKind.CHARS)


def _span(first: int | None, last: int | None) -> str:
    """``3`` or ``3–5`` (en dash)."""
    return f"{first}" if last is None or last == first else f"{first}\u2013{last}"


def _pages(row: ChunkLike, page: int | None = None) -> str:
    if row.page_end is not None and row.page_end != row.page:
        span = f"pp. {row.page}-{row.page_end}"
        return span if page is None else f"p. {page} ({span})"
    return f"p. {row.page if page is None else page}"


_PLAIN_SHEET = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def a1_range(loc: Locator) -> str:
    """The A1 reference of a ``rows`` locator: ``Q1!A2:E9``, ``'Q1 sales'!A2:E9`` (quoted as Excel does
    when the name has spaces or punctuation), ``A2:E9`` without a sheet name (CSV)."""
    first_col, _, last_col = (loc.anchor or "A:A").partition(":")
    ref = f"{first_col}{loc.first}:{last_col or first_col}{loc.last}"
    if not loc.scope:
        return ref
    sheet = loc.scope if _PLAIN_SHEET.match(loc.scope) else "'" + loc.scope.replace("'", "''") + "'"
    return f"{sheet}!{ref}"


def _path(name: str, section: tuple[str, ...]) -> str:
    return " > ".join([name, *section])


def locator(row: ChunkLike, page: int | None = None) -> str:
    """The place inside the document, without the document's name (see :func:`locator_label`)."""
    label = locator_label(row, page)
    name = row.document_label or row.document_name
    return label[len(name):].lstrip(" ,>") if label.startswith(name) else label


def locator_label(row: ChunkLike, page: int | None = None) -> str:
    """Where a citation points, as a person reads it (design stage 9, issue 17), by locator kind:

    * page: ``paper.pdf, p. 5`` / ``pp. 5-6`` (1-based physical pages); ``p. 2 (pp. 1-2)`` for a chunk
      over a page break whose evidence (``page``, issue 13) is on page 2;
    * chars: ``guide.md > Install > Linux, ¶ 2–3`` (the heading path, the paragraphs counted within the section's
      body: :func:`rag.ingest.locate.text_locator`); without ``¶`` for a store indexed before;
    * slide: ``deck.pptx, slide 3 (Safety)``, ``..., speaker notes`` for a chunk of the notes;
    * rows: ``sales.xlsx, 'Q1 sales'!A2:E9``; ``data.csv, rows 2–9`` (A1 row numbers);
    * paragraph: ``report.docx > Install > Wiring, ¶ 2–3`` (DOCX: counted within the innermost section);
      ``..., ¶ 4, rows 5–9`` inside a table (header row 1: :func:`rag.ingest.locate.table_rows`; every format
      counted by paragraphs);
      ``book.epub > Calm, ¶ 5`` (EPUB: counted within the chapter, named by its title; ``book.epub, chapter 4,
      ¶ 2`` for a chapter without one, by its place in the reading order: the count includes the cover and title
      pages, so it is shown only when nothing else names the chapter, a new user's walk, 2026-12-07);
    * section: ``page.html > Install > On Linux, ¶ 2–3`` (the heading path, the paragraphs counted within the
      section, its heading left out; its anchor is in the link's fragment only: issue 42, labels read
      "(#firstHeading)" and "(#detailsedit)", which no person writes); without ``¶`` for a store indexed before;
    * region: ``scan.png, lines 3–7``; ``fax.tiff, page 2, lines 1–4`` (OCR lines).
    """
    name = row.document_label or row.document_name
    loc = row_locator(row)
    kind = loc.kind
    if kind == LocatorKind.PAGE:
        return f"{name}, {_pages(row, page)}" if row.page is not None else name
    if kind == LocatorKind.SLIDE:
        # an untitled slide's heading is its number ("Slide 6"): "slide 6 (Slide 6)" says it twice
        said = loc.scope and loc.scope.strip().casefold() != f"slide {loc.first}"
        scope = f" ({loc.scope})" if said else ""
        notes = ", speaker notes" if row.section and row.section[-1] == NOTES_HEADING else ""
        return f"{name}, slide {_span(loc.first, loc.last)}{scope}{notes}"
    if kind == LocatorKind.ROWS:
        if loc.scope:
            return f"{name}, {a1_range(loc)}"
        rows = "row" if loc.last is None or loc.last == loc.first else "rows"
        return f"{name}, {rows} {_span(loc.first, loc.last)}"
    if kind == LocatorKind.PARAGRAPH:
        if loc.scope_number is not None:  # an e-book's chapter: by its title, as the book's contents name it
            titled = loc.scope.strip() and loc.scope.strip().casefold() != f"chapter {loc.scope_number}"
            where = f"{name} > {loc.scope.strip()}" if titled else f"{name}, chapter {loc.scope_number}"
            return f"{where}, \u00b6 {_span(loc.first, loc.last)}{_rows(loc)}"
        return f"{_path(name, row.section)}, \u00b6 {_span(loc.first, loc.last)}{_rows(loc)}"
    if kind == LocatorKind.SECTION:
        return _path(name, row.section) + (f", \u00b6 {_span(loc.first, loc.last)}{_rows(loc)}"
                                           if loc.first is not None else "")
    if kind == LocatorKind.REGION:
        page = f"page {loc.scope_number}, " if loc.scope_number and loc.scope_number > 1 else ""
        return f"{name}, {page}lines {_span(loc.first, loc.last)}"
    return _path(name, row.section) + (f", \u00b6 {_span(loc.first, loc.last)}{_rows(loc)}"
                                       if loc.first is not None else "")


def _rows(loc: Locator) -> str:
    """``, row 5`` / ``, rows 5–9``: the rows of the table a paragraph-counted chunk lies in (header row 1), so
    two sources of one long table no longer read alike; ``""`` when the locator names none."""
    if loc.rows is None:
        return ""
    first, last = loc.rows
    return f", {'row' if first == last else 'rows'} {_span(first, last)}"


def fragment(row: ChunkLike, page: int | None = None) -> str:
    """URL fragment of a citation, by locator kind (design stage 9, issue 17).

    ``#page=N`` PDF (1-based physical page, PDF Open Parameters; ``page`` the evidence page when given);
    ``#char=START,END`` text, Markdown, DOCX and EPUB (0-based code points into the canonical text);
    ``#slide=N`` PPTX; ``#'Sheet'!A2:E9`` XLSX (as an Excel hyperlink, percent-encoded);
    ``#row=2-9`` CSV (RFC 7111); ``#<id>`` HTML (the section heading's anchor);
    ``#xywh=x,y,w,h`` images (W3C Media Fragments, pixels; ``#page=N&xywh=...`` for a TIFF's later pages).
    """
    loc = row_locator(row)
    kind = loc.kind
    if kind == LocatorKind.PAGE and row.page is not None:
        return f"#page={row.page if page is None else page}"
    if kind == LocatorKind.SLIDE:
        return f"#slide={loc.first}"
    if kind == LocatorKind.ROWS:
        if loc.scope:
            return "#" + quote(a1_range(loc), safe="!:'$")
        return f"#row={loc.first}" + (f"-{loc.last}" if loc.last != loc.first else "")
    if kind == LocatorKind.SECTION and loc.anchor:
        return "#" + quote(loc.anchor, safe="-_.~:")
    if kind == LocatorKind.REGION and loc.box is not None:
        x0, y0, x1, y1 = loc.box
        page = f"page={loc.scope_number}&" if loc.scope_number and loc.scope_number > 1 else ""
        return f"#{page}xywh={x0},{y0},{x1 - x0},{y1 - y0}"
    return f"#char={row.start},{row.end}"


def evidence_span(quote: str, query: str) -> tuple[int, int]:
    """``(start, end)`` character offsets into ``quote`` of its sentence sharing the most distinct terms
    with ``query`` (:func:`rag.text.tokenize`; the earliest on a tie); the whole quote when no sentence
    shares a term. Sentences are the chunker's units (:func:`rag.text.units`)."""
    terms = analyse(query).terms
    best, best_n = (0, len(quote)), 0
    for a, b in units(quote) if terms else ():
        n = len(terms & set(tokenize(quote[a:b])))
        if n > best_n:
            best, best_n = (a, b), n
    return best


def evidence_page(row: ChunkLike, query: str, locate: Callable[[str, int, int], int] | None = None,
                  page_at: Callable[[int], int | None] | None = None,
                  span: tuple[int, int] | None = None) -> int | None:
    """The 1-based page holding the cited sentence of ``row`` for ``query`` (module doc).

    ``row.page`` when the chunk sits on one page or is not a PDF's. Otherwise the sentence from
    :func:`evidence_span` (or ``span``, offsets into ``row.content``: the sentences the answer quotes from it,
    issue 42) is placed with ``page_at`` (canonical offset -> page, e.g.
    ``Document.page_at`` or :func:`rag.types.page_at` over the store's page map; its middle character
    decides) when given, else with ``locate(text, first, last)`` (e.g. the viewer's
    :func:`ui.view.pdf.best_page` on the PDF itself), else ``row.page``.
    """
    if row.page is None or row.page_end is None or row.page_end == row.page:
        return row.page
    a, b = span if span is not None else evidence_span(row.content, query)
    if page_at is not None:
        return page_at(row.start + (a + b) // 2) or row.page
    if locate is not None:
        return locate(row.content[a:b], row.page, row.page_end)
    return row.page


def citations_from_rows(hits: Sequence[Hit], rows: Sequence[ChunkLike],
                        pages: Sequence[int | None] | None = None) -> list[Citation]:
    """Number ``hits`` (``rag.types.Hit``, in order) 1..n with their chunk ``rows`` (same order).

    The quote is the chunk's ``content`` (never the embedded ``text``). ``pages`` optionally gives each
    row's evidence page (:func:`evidence_page`); default the chunk's first page.
    """
    if len(hits) != len(rows):
        raise ValueError(f"{len(hits)} hits for {len(rows)} chunk rows")
    pages = list(pages) if pages is not None else [r.page for r in rows]
    return told_apart([
        Citation(index=i, document_id=r.document_id, document_name=r.document_name,
                 locator_label=locator_label(r, p), fragment=fragment(r, p), quote=r.content,
                 cosine_distance=float(h.cosine_distance), fused_rank=int(h.fused_rank), page=p,
                 start=r.start, end=r.end, media_type=r.media_type, chunk_id=int(r.chunk_id),
                 section=tuple(r.section), document_label=r.document_label or r.document_name,
                 locator=row_locator(r), role=role_of(r.role))
        for i, (h, r, p) in enumerate(zip(hits, rows, pages), start=1)
    ])


#: Opening words of a source that tell two sources under one label apart (:func:`told_apart`).
OPENING_WORDS = 5


def told_apart(cites: list[Citation]) -> list[Citation]:
    """``cites`` with each label that two of them share told apart by the source's opening words:
    ``web-wikipedia-t-sne.html, ¶ 4, from “Specifically, it models each high-dimensional”``. Two chunks of one long
    paragraph (or slide, or section) read the same label, which a reader takes for a duplicate (a new user's walks,
    2026-12-06). PDF pages are left as they are: several passages of one page are what "p. 9" leads a reader to
    expect, and the viewer outlines each quote on its page."""
    seen: dict[str, int] = {}
    for c in cites:
        seen[c.locator_label] = seen.get(c.locator_label, 0) + 1
    out = []
    for c in cites:
        if seen[c.locator_label] < 2 or (c.locator is not None and c.locator.kind == LocatorKind.PAGE):
            out.append(c)
            continue
        words = c.quote[:300].split()
        while words and not any(ch.isalnum() for ch in words[0]):  # a list bullet, a quote mark, a heading's #
            words.pop(0)
        opening = " ".join(words[:OPENING_WORDS]).rstrip(",;:.")
        out.append(replace(c, locator_label=f"{c.locator_label}, from \u201c{opening}\u201d") if opening else c)
    return out


def crosses_pages(row: ChunkLike) -> bool:
    """Whether chunk ``row`` runs over a page break (of a PDF: pages are ``None`` elsewhere)."""
    return row.page is not None and row.page_end is not None and row.page_end != row.page


def evidence_pages(rows: Sequence[ChunkLike], query: str, store: Store | None = None,
                   spans: Mapping[int, tuple[int, int]] | None = None) -> list[int | None]:
    """:func:`evidence_page` of each row, placed with the store's page map of its document
    (:meth:`rag.store.store.Store.page_map`) when ``store`` is given, else the chunk's first page. ``spans``: per
    chunk id, the range of its content the answer quotes (:func:`evidence_span` for the others)."""
    out = []
    spans = spans or {}
    for r in rows:
        if not crosses_pages(r) or store is None:
            out.append(r.page)
            continue
        pages = store.page_map(r.document_id)
        out.append(evidence_page(r, query, page_at=lambda offset, p=pages: page_at(p, offset),
                                 span=spans.get(int(r.chunk_id))) if pages else r.page)
    return out


def citations(gate_result: GateResult, store: Store, spans: Mapping[int, tuple[int, int]] | None = None,
              ) -> list[Citation]:
    """Numbered citations for the sources the gate kept (``rag.answer.gate.GateResult``), via ``store.chunks(ids)``.

    Each PDF citation opens at its evidence page for the gate's query (:func:`evidence_page`; ``spans``, per chunk
    id, the range of its content the answer quotes, e.g. the key passage's sentences). A refused
    gate result gives ``[]``. Chunks the gate collapsed into a source as identical copies
    (``gate_result.duplicates``) are named in that citation's ``also_in``.
    """
    hits = list(gate_result.sources)
    if not hits:
        return []
    rows = store.chunks([h.chunk_id for h in hits])
    cites = with_columns(citations_from_rows(hits, rows, evidence_pages(rows, gate_result.query, store, spans)),
                         store.canonical_text)
    dups = gate_result.duplicates
    if not dups:
        return cites
    return [replace(c, also_in=tuple(locator_label(r) for r in store.chunks(dups[c.chunk_id])))
            if c.chunk_id in dups else c for c in cites]


def with_columns(cites: Sequence[Citation], canonical_text: Callable[[str], str]) -> list[Citation]:
    """``cites`` each with the column names of the table its quote sits in (:func:`rag.answer.tables.table_columns`
    over ``canonical_text(document_id)``, read once per document and only for quotes holding a ``|``)."""
    texts: dict[str, str] = {}
    out = []
    for c in cites:
        if "|" in c.quote:
            if c.document_id not in texts:
                try:
                    texts[c.document_id] = canonical_text(c.document_id)
                except StoreError:  # deleted since the search: its rows are read as they are
                    texts[c.document_id] = ""
            got = table_columns(texts[c.document_id], c.start) if texts[c.document_id] else None
            if got is not None:
                c = replace(c, columns=got[0], first_column=got[1])
        out.append(c)
    return out


def prompt_heading(c: Citation) -> str:
    """The one-line heading the model reads above a source: its innermost section heading, else the document name.

    Short on purpose: on 2 cores every prompt token costs about 10 ms before the first answer token, and
    the 0.5B copied long ``document - section > section`` lines into its answers (dev q01, q18).
    """
    if c.section:
        return c.section[-1]
    return c.document_label or c.document_name


def format_sources_for_prompt(cites: Sequence[Citation]) -> str:
    """The sources block of the prompt (design stage 8): ``[n] heading`` (:func:`prompt_heading`) then the quote.

    Blocks are separated by a blank line. No URL, fragment, page number or id appears:
    the model sees numbers, headings and quotes only; the server maps ``[n]`` to the locator.
    """
    return "\n\n".join(f"[{c.index}] {prompt_heading(c)}\n{c.quote}" for c in cites)


def citation_json(c: Citation) -> dict[str, Any]:
    """The JSON object of one citation in the CLI contract (plus the extra fields, after the pinned ones)."""
    d = asdict(c)
    del d["unit_cosines"]
    d["section"] = list(c.section)
    d["locator"] = c.locator.to_json() if c.locator is not None else None
    pinned = ["index", "document_id", "document_name", "locator_label", "fragment", "quote", "cosine_distance"]
    return {**{k: d[k] for k in pinned}, **{k: v for k, v in d.items() if k not in pinned}}


def citation_from_json(d: dict[str, Any]) -> Citation:
    """The inverse of :func:`citation_json`: a :class:`rag.answer.cite.Citation` (unknown keys ignored, JSON lists
    back to the tuples the record holds, the locator through :meth:`rag.types.Locator.from_json`, the role
    through :func:`rag.types.role_of`: ``body`` for a citation saved before roles)."""
    fields = Citation.__dataclass_fields__
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in fields}
    return Citation(**{**kw, "locator": Locator.from_json(d.get("locator")), "role": role_of(d.get("role"))})
