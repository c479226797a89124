"""The records every pipeline stage shares, and the named choices (``StrEnum``) of the settings.

Records (frozen dataclasses; offsets are 0-based Python code points into the
stored canonical text, ``end`` exclusive; pages are 1-based physical pages):

* :class:`PageSpan`, :class:`Heading`, :class:`Part`, :class:`RoleSpan`, :class:`Document` - stage 1 (ingest), what an extractor
  returns (``Part`` is the locator map of the formats of issue 17: slides, sheet rows, paragraphs, HTML sections,
  OCR lines);
* :class:`Locator` - where a chunk is, in the unit of its format (design stage 9, issue 17);
* :class:`Chunk` - stage 2 (ingest), ``canonical[start:end] == content``;
* :class:`Hit` - stages 4-6 (index), one retrieved chunk with its ranks and cosine distance;
* :class:`QueryPlan` - stages 4-5 (index), how the question was searched (issue 19);
* the answer's :class:`rag.answer.cite.Citation` (stages 8-9) is the answer layer's own.

Named choices: :class:`DocStatus`, :class:`GateKind`, :class:`Verdict`, :class:`AnswerVerdict`, :class:`TextRole`, :class:`RetrievalMode`,
:class:`ChunkStrategy`, :class:`MediaType`, :class:`LocatorKind`. Each is a ``StrEnum``, so it
compares equal to (and serialises as) its plain string value: ``"ready" ==
DocStatus.READY`` and JSON contracts are unchanged.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from enum import StrEnum


class DocStatus(StrEnum):
    """A document's life in the store (design "What the store must promise")."""

    QUEUED = "queued"
    INDEXING = "indexing"
    READY = "ready"
    FAILED = "failed"


class GateKind(StrEnum):
    """Which refusal gate decides (design stage 7; issue 8's learned gate; issue 15's calibrated gate, the default)."""

    DISTANCE = "distance"
    LEARNED = "learned"
    CALIBRATED = "calibrated"


class Verdict(StrEnum):
    """What the gate tells the user (issue 15).

    ``answered``: the sources seem to answer it; ``mentions``: the documents
    mention this but may not answer it (the sources are shown with that
    warning); ``refused``: no answer, and the model is not called.
    """

    ANSWERED = "answered"
    MENTIONS = "mentions"
    REFUSED = "refused"


class AnswerVerdict(StrEnum):
    """What an answer is worth, in one word a user can rely on (issue 24, item 4); shown the same way in the chat,
    the CLI (``ask --json``'s ``verdict``), saved chats and the Markdown export.

    ``supported``: every claim shown passed the claim check and agrees with the key passage; ``partly_supported``:
    some of it is backed by the sources (a claim passed while another was left out, or the verbatim key
    passage stands in for the model's answer); ``may_not_answer``: the documents mention the subject but what is
    shown may not answer the question; ``refused``: the gate found nothing to answer from (no model ran).
    """

    SUPPORTED = "supported"
    PARTLY_SUPPORTED = "partly_supported"
    MAY_NOT_ANSWER = "may_not_answer"
    REFUSED = "refused"


class TextRole(StrEnum):
    """What a piece of a document is to a reader (issues 24 and 28): only ``body`` text answers a question.

    ``body``: running text, list items, table rows; ``heading``: a title or heading line alone;
    ``furniture``: running headers and footers of pages and slides (author, date, "page x / y", deck
    title), repeated across pages; ``references``: reference-list / bibliography entries; ``toc``: a
    table of contents (entries, dot leaders, page numbers); ``navigation``: a web page's or manual's
    navigation line ("Previous: ... Next: ... [Index]"). Everything but ``body`` stays searchable (or
    visible in the viewer) but never stands as a key passage or as the support of a claim, and ranks
    below body text.
    """

    BODY = "body"
    HEADING = "heading"
    FURNITURE = "furniture"
    REFERENCES = "references"
    TOC = "toc"
    NAVIGATION = "navigation"


def role_of(value: object) -> TextRole:
    """The :class:`TextRole` named by ``value`` (a stored column, a JSON field); ``body`` for ``None``, an empty
    or an unknown value (a store written before roles, or by a newer version)."""
    try:
        return TextRole(value) if value else TextRole.BODY
    except ValueError:
        return TextRole.BODY


class RetrievalMode(StrEnum):
    """Which retrieval legs run (design stages 4-5)."""

    HYBRID = "hybrid"
    DENSE = "dense"
    BM25 = "bm25"


class ChunkStrategy(StrEnum):
    """The design's six chunking strategies (stage 2; E is the product's)."""

    A = "A"
    B = "B"
    C = "C"
    D = "D"
    E = "E"
    F = "F"


class MediaType(StrEnum):
    """Media types the extractors produce (sniffed from bytes, never from the name)."""

    PDF = "application/pdf"
    MARKDOWN = "text/markdown"
    TEXT = "text/plain"
    DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    XLS = "application/vnd.ms-excel"
    CSV = "text/csv"
    HTML = "text/html"
    EPUB = "application/epub+zip"
    PNG = "image/png"
    JPEG = "image/jpeg"
    TIFF = "image/tiff"
    ODT = "application/vnd.oasis.opendocument.text"
    ODS = "application/vnd.oasis.opendocument.spreadsheet"
    ODP = "application/vnd.oasis.opendocument.presentation"
    XPS = "application/vnd.ms-xpsdocument"
    FB2 = "application/x-fictionbook+xml"
    MOBI = "application/x-mobipocket-ebook"
    CBZ = "application/vnd.comicbook+zip"


class LocatorKind(StrEnum):
    """The unit a citation points at, by format (design stage 9; issue 17).

    ``page`` PDF, 1-based physical page; ``chars`` text and Markdown, code-point
    range; ``slide`` PPTX, 1-based slide; ``rows`` CSV/XLSX, sheet + 1-based
    sheet rows (A1 numbering); ``paragraph`` DOCX (counted within the innermost
    heading's section) and EPUB (counted within the chapter), 1-based;
    ``section`` HTML, the section's heading anchor (``id``); ``region`` images,
    OCR lines and their pixel box.
    """

    PAGE = "page"
    CHARS = "chars"
    SLIDE = "slide"
    ROWS = "rows"
    PARAGRAPH = "paragraph"
    SECTION = "section"
    REGION = "region"



@dataclass(frozen=True)
class PageSpan:
    """One PDF page inside the canonical text.

    ``page`` is the 1-based physical page number (what ``#page=N`` takes);
    ``label`` the PDF page label if the file defines labels, else ``None``;
    ``start``/``end`` are 0-based code-point offsets into ``Document.canonical``
    (``end`` exclusive). Pages with no text layer have ``start == end``.
    """

    page: int
    label: str | None
    start: int
    end: int

    def to_json(self) -> list:
        """``[page, label, start, end]`` (what the store keeps per document, issue 23)."""
        return [self.page, self.label, self.start, self.end]

    @classmethod
    def from_json(cls, v: list) -> "PageSpan":
        """The inverse of :meth:`to_json`."""
        return cls(int(v[0]), v[1], int(v[2]), int(v[3]))


def page_at(pages: "tuple[PageSpan, ...] | list[PageSpan]", offset: int) -> int | None:
    """1-based physical page of ``pages`` (a document's page spans, by ``start``) holding canonical ``offset``;
    ``None`` when there are none (not a PDF). An offset between pages belongs to the page before it; empty
    pages at the same offset are skipped back over."""
    if not pages:
        return None
    starts = [p.start for p in pages]
    i = max(0, min(bisect.bisect_right(starts, offset) - 1, len(pages) - 1))
    while i > 0 and pages[i].start == pages[i].end and pages[i].start >= offset:
        i -= 1
    return pages[i].page


@dataclass(frozen=True)
class Heading:
    """A section heading found in the canonical text.

    ``level`` 1 for ``#``, 2 for ``##`` ...; ``title`` the heading's words;
    ``start``/``end`` the offsets of the heading line in the canonical text
    (0-based code points, ``end`` exclusive, newline not included).
    """

    level: int
    title: str
    start: int
    end: int


Box = tuple[int, int, int, int]
"""A pixel rectangle ``(x0, y0, x1, y1)`` of an image, origin top-left, ``x1``/``y1`` exclusive."""


@dataclass(frozen=True)
class Part:
    """One addressable unit of a document inside the canonical text: the locator map of issue 17's formats.

    ``kind`` what it is (:class:`LocatorKind`: a slide, a sheet row, a
    paragraph, an HTML section, an OCR line); ``number`` 1-based within
    ``scope`` (slide N of the deck; row N of the sheet as in A1; paragraph N
    of its section or chapter; line N of the image or TIFF frame; section N of
    the page); ``start``/``end`` 0-based code-point offsets into
    ``Document.canonical`` (``end`` exclusive); ``scope`` the sheet name or
    chapter title it counts within (empty when none); ``scope_number`` the
    1-based chapter (EPUB) or image frame (TIFF), else ``None``; ``anchor`` the
    HTML ``id`` of a section, or the used columns of a sheet row as ``"A:D"``;
    ``box`` the pixel box of an OCR line. Parts of one document do not
    overlap and are sorted by ``start``.
    """

    kind: LocatorKind
    number: int
    start: int
    end: int
    scope: str = ""
    scope_number: int | None = None
    anchor: str = ""
    box: Box | None = None

    def to_json(self) -> dict:
        """A plain dict for JSON (``kind`` as its string, ``box`` as a list or ``None``); what the store keeps."""
        return {"kind": str(self.kind), "number": self.number, "start": self.start, "end": self.end,
                "scope": self.scope, "scope_number": self.scope_number, "anchor": self.anchor,
                "box": list(self.box) if self.box is not None else None}

    @classmethod
    def from_json(cls, d: dict) -> "Part | None":
        """The inverse of :meth:`to_json`; ``None`` for an unknown kind (a newer store)."""
        try:
            kind = LocatorKind(d["kind"])
        except (KeyError, ValueError):
            return None
        box = d.get("box")
        return cls(kind, int(d["number"]), int(d["start"]), int(d["end"]), d.get("scope") or "",
                   d.get("scope_number"), d.get("anchor") or "", tuple(int(v) for v in box) if box else None)


@dataclass(frozen=True)
class RoleSpan:
    """A stretch of the canonical text that is not body text (issue 28): ``role`` a :class:`TextRole`
    other than ``body``; ``start``/``end`` 0-based code-point offsets into ``Document.canonical`` (``end``
    exclusive). Spans of one document do not overlap and are sorted by ``start``; text outside every
    span is ``body``. The chunker never lets a chunk cross a span's edge, so each chunk has one role."""

    role: TextRole
    start: int
    end: int


@dataclass(frozen=True)
class Locator:
    """Where a chunk is, in its format's own unit (design stage 9, issue 17); stored with the chunk.

    ``kind`` :class:`LocatorKind`; ``first``/``last`` 1-based numbers of the
    first and last unit the chunk touches (pages, slides, sheet rows,
    paragraphs, OCR lines; for ``chars`` the paragraphs of the section's body, ``None`` in a store indexed
    before; for ``section`` the paragraphs of the HTML section); ``scope``
    the sheet name or chapter title; ``scope_number`` the 1-based chapter or
    image frame; ``anchor`` the HTML section id, or ``"A:D"`` the used columns
    of a sheet; ``box`` the union pixel box of the chunk's OCR lines; ``rows`` the 1-based first and last
    rows of the table a chunk of a paragraph-counted locator lies in (``paragraph``, ``section``, ``chars``:
    a table is one paragraph, so every chunk of a long one read "¶ 4"; the header row is row 1),
    ``None`` elsewhere and in a store indexed before.
    :mod:`rag.answer.cite` turns it into a label and a URL fragment.
    """

    kind: LocatorKind
    first: int | None = None
    last: int | None = None
    scope: str = ""
    scope_number: int | None = None
    anchor: str = ""
    box: Box | None = None
    rows: tuple[int, int] | None = None

    def to_json(self) -> dict:
        """A plain dict for JSON (``kind`` as its string, ``box`` as a list or ``None``)."""
        return {"kind": str(self.kind), "first": self.first, "last": self.last, "scope": self.scope,
                "scope_number": self.scope_number, "anchor": self.anchor,
                "box": list(self.box) if self.box is not None else None,
                "rows": list(self.rows) if self.rows is not None else None}

    @classmethod
    def from_json(cls, d: dict | None) -> "Locator | None":
        """The inverse of :meth:`to_json`; ``None`` for ``None`` or an unknown kind (a newer store)."""
        if not d:
            return None
        try:
            kind = LocatorKind(d["kind"])
        except (KeyError, ValueError):
            return None
        box, rows = d.get("box"), d.get("rows")
        return cls(kind=kind, first=d.get("first"), last=d.get("last"), scope=d.get("scope") or "",
                   scope_number=d.get("scope_number"), anchor=d.get("anchor") or "",
                   box=tuple(int(v) for v in box) if box else None,
                   rows=(int(rows[0]), int(rows[1])) if rows and len(rows) == 2 else None)


@dataclass(frozen=True)
class Document:
    """An extracted document.

    ``id`` is the hex sha256 of the original bytes; ``name`` the user's file
    name (display metadata only, never used as a path); ``media_type`` the
    :class:`MediaType` sniffed from the bytes (one per reader: PDF, Markdown,
    text, DOCX, PPTX, XLSX, CSV, HTML, EPUB, PNG, JPEG, TIFF, ODT, ODS, ODP,
    XPS, FB2, MOBI, CBZ; a string is converted, an unknown one raises
    ``ValueError``);
    ``canonical`` the stored text every offset points into (NFC, ``\\n`` line
    ends); ``title`` the document title used in chunk headers; ``pages`` one
    :class:`PageSpan` per physical page (PDF only, empty otherwise);
    ``headings`` in order of offset; ``warnings`` human-readable (e.g. pages
    with no text layer, a repaired file); ``image_only_pages`` the 1-based
    physical pages with no text layer (scanned; read by OCR or not).

    Extraction report (issue 13; the store keeps ``pages``, ``parts``, ``ocr_pages`` and the warnings, issue 23):
    ``page_coverage`` per page the share (0..1) of PyMuPDF's own words kept in the canonical text
    (:mod:`rag.ingest.pdf.audit`); ``ocr_pages`` pages read by OCR; ``flagged_pages`` pages whose text
    layer is unreadable (wrong glyph mapping); ``blank_pages`` empty pages; ``tables`` tables kept as
    Markdown rows; ``hyphen_joins`` every line-end hyphen removed (``"cli-mate -> climate"``);
    ``metadata`` front-matter fields of a Markdown file (``(key, value)``); ``encoding`` the text
    encoding a text file was decoded from; ``stats`` other named figures (OCR ms, reading orders used).
    ``parts`` the locator map of the formats of issue 17 (slides, sheet rows, paragraphs, HTML
    sections, OCR lines; empty for PDF and text). ``roles`` the stretches that are not body text
    (:class:`RoleSpan`: reference lists, tables of contents, navigation lines, a deck's title slide;
    issue 28), sorted, not overlapping. What a range of the text is (its locator, its role) is read by
    :mod:`rag.ingest.locate`. ``coverage`` the share (0..1) of the words a person sees that the canonical text
    holds, by the format's independent audit (:mod:`rag.ingest.coverage`; a PDF: the mean of its pages'),
    ``None`` for a format without an audit. ``left_out`` the pieces of text the reader left out on purpose, for a
    reason: hidden (HTML, EPUB, Markdown; counted by reason in a warning) or an HTML page's furniture (navigation,
    sidebars, footers as the page marks them, and what lies outside the main content): the coverage audit does not
    count them as missed (issue 37, :func:`rag.ingest.coverage.judge`); not stored.
    """

    id: str
    name: str
    media_type: MediaType
    canonical: str
    title: str
    size_bytes: int
    extractor: str
    extractor_version: str
    pages: tuple[PageSpan, ...] = ()
    headings: tuple[Heading, ...] = ()
    warnings: tuple[str, ...] = ()
    image_only_pages: tuple[int, ...] = ()
    page_coverage: tuple[float, ...] = ()
    ocr_pages: tuple[int, ...] = ()
    flagged_pages: tuple[int, ...] = ()
    blank_pages: tuple[int, ...] = ()
    tables: int = 0
    hyphen_joins: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    encoding: str = "utf-8"
    stats: tuple[tuple[str, float], ...] = ()
    parts: tuple[Part, ...] = ()
    roles: tuple[RoleSpan, ...] = ()
    coverage: float | None = None
    left_out: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "media_type", MediaType(self.media_type))

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def page_at(self, offset: int) -> int | None:
        """1-based physical page holding canonical offset ``offset``; ``None`` for non-PDF documents."""
        return page_at(self.pages, offset)


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit.

    ``text`` is what gets EMBEDDED (``[Doc title > Section]\\n`` + content for
    strategies E/F, else ``content``); ``content`` is what gets QUOTED, and
    ``canonical[start:end] == content`` always (0-based code points, end
    exclusive). ``section`` the heading path (may be empty); ``page`` and
    ``page_end`` the 1-based physical pages of ``start`` and of ``end - 1``
    (``None`` for text documents); ``index`` the 0-based position in the
    document; ``token_split`` whether the encoder window (256 word-pieces)
    forced a split beyond the character budget; ``locator`` where it is in its
    format's unit (:class:`Locator`; ``None`` in stores written before issue 17); ``role`` what the
    chunk is to a reader (:class:`TextRole`; issue 28: only ``body`` answers a question).
    """

    doc_id: str
    index: int
    text: str
    content: str
    section: tuple[str, ...]
    start: int
    end: int
    page: int | None = None
    page_end: int | None = None
    token_split: bool = False
    locator: Locator | None = None
    role: TextRole = TextRole.BODY


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk, in final order.

    ``rank`` 1-based final position (after the optional rerank); ``fused_rank``
    1-based rank after reciprocal rank fusion (equals ``rank`` without rerank);
    ``rrf_score`` the fusion score (``1/(60+r)`` per leg); ``cosine_distance``
    ``1 - <q, v>`` computed from the stored vector for EVERY hit (BM25-only
    hits included); ``dense_rank``/``bm25_rank`` 1-based rank in each leg or
    ``None`` when that leg did not return it; ``bm25_score`` raw BM25 score or
    ``None``; ``rerank_score`` the cross-encoder logit or ``None``; ``unit_distance`` the dense leg's own distance
    for the chunk when its units are searched (``1 - max(own similarity, best unit similarity - margin)``,
    :func:`rag.index.units.dense_leg`), ``None`` otherwise: a long chunk whose one sentence answers is near
    through that sentence, though its whole vector is far.
    """

    chunk_id: int
    rank: int
    fused_rank: int
    rrf_score: float
    cosine_distance: float
    dense_rank: int | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    rerank_score: float | None = None
    unit_distance: float | None = None


@dataclass(frozen=True)
class QueryPlan:
    """How one question was searched (issue 19): what ``search --json`` and ``ask --json`` report as ``retrieval``.

    ``query`` the question as asked; ``language`` the ISO 639-1 code its BM25
    terms were stemmed in (chosen among the indexed documents' languages);
    ``bm25_weight`` the BM25 list's weight in the fusion, in [0, 1] (1.0 = the
    design's plain RRF; lower when its best chunk covers little of the
    question); ``rewritten`` the query the local model rewrote it into, or
    ``None`` when the question was searched as asked; ``translated_from`` the
    question's ISO 639-1 code when ``rewritten`` is its translation into the
    documents' language (issue 27, :mod:`rag.answer.translate`); ``reranked``
    whether the local model re-ranked the sources (issue 27; the re-rank was measured, not kept and removed in
    issue 36: always false).
    """

    query: str
    language: str = "en"
    bm25_weight: float = 1.0
    rewritten: str | None = None
    translated_from: str | None = None
    reranked: bool = False

    def to_json(self) -> dict:
        """``{"query", "language", "bm25_weight", "rewritten_query", "translated_from", "reranked"}`` (weight
        rounded to 4 places)."""
        return {"query": self.query, "language": self.language, "bm25_weight": round(self.bm25_weight, 4),
                "rewritten_query": self.rewritten, "translated_from": self.translated_from,
                "reranked": self.reranked}

    @classmethod
    def from_json(cls, d: dict | None) -> "QueryPlan | None":
        """The inverse of :meth:`to_json`; ``None`` for ``None``."""
        if not d:
            return None
        return cls(query=d["query"], language=d.get("language") or "en", bm25_weight=float(d.get("bm25_weight", 1.0)),
                   rewritten=d.get("rewritten_query"), translated_from=d.get("translated_from"),
                   reranked=bool(d.get("reranked", False)))
