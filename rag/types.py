"""The records every pipeline stage shares, and the named choices (``StrEnum``) of the settings.

Records (frozen dataclasses; offsets are 0-based Python code points into the
stored canonical text, ``end`` exclusive; pages are 1-based physical pages):

* :class:`PageSpan`, :class:`Heading`, :class:`Document` - stage 1 (ingest), what an extractor returns;
* :class:`Chunk` - stage 2 (ingest), ``canonical[start:end] == content``;
* :class:`Hit` - stages 4-6 (index), one retrieved chunk with its ranks and cosine distance;
* :class:`QueryPlan` - stages 4-5 (index), how the question was searched (issue 19);
* :class:`Citation` - stages 8-9 (answer), one numbered source as the server attaches it.

Named choices: :class:`DocStatus`, :class:`GateKind`, :class:`RetrievalMode`,
:class:`ChunkStrategy`, :class:`MediaType`. Each is a ``StrEnum``, so it
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
    """Which refusal gate decides (design stage 7; issue 8's learned gate)."""

    DISTANCE = "distance"
    LEARNED = "learned"


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


MEDIA_PDF = MediaType.PDF.value
MEDIA_MARKDOWN = MediaType.MARKDOWN.value
MEDIA_TEXT = MediaType.TEXT.value


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


@dataclass(frozen=True)
class Document:
    """An extracted document.

    ``id`` is the hex sha256 of the original bytes; ``name`` the user's file
    name (display metadata only, never used as a path); ``media_type`` sniffed
    from the bytes (``application/pdf``, ``text/markdown``, ``text/plain``);
    ``canonical`` the stored text every offset points into (NFC, ``\\n`` line
    ends); ``title`` the document title used in chunk headers; ``pages`` one
    :class:`PageSpan` per physical page (PDF only, empty otherwise);
    ``headings`` in order of offset; ``warnings`` human-readable (e.g. pages
    with no text layer, a repaired file); ``image_only_pages`` the 1-based
    physical pages with no text layer.
    """

    id: str
    name: str
    media_type: str
    canonical: str
    title: str
    size_bytes: int
    extractor: str
    extractor_version: str
    pages: tuple[PageSpan, ...] = ()
    headings: tuple[Heading, ...] = ()
    warnings: tuple[str, ...] = ()
    image_only_pages: tuple[int, ...] = ()

    @property
    def page_count(self) -> int:
        return len(self.pages)

    def page_at(self, offset: int) -> int | None:
        """1-based physical page holding canonical offset ``offset``; ``None`` for non-PDF documents."""
        if not self.pages:
            return None
        starts = [p.start for p in self.pages]
        i = bisect.bisect_right(starts, offset) - 1
        i = max(0, min(i, len(self.pages) - 1))
        # skip back over empty pages sitting at the same offset
        while i > 0 and self.pages[i].start == self.pages[i].end and self.pages[i].start >= offset:
            i -= 1
        return self.pages[i].page


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
    forced a split beyond the character budget.
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


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk, in final order.

    ``rank`` 1-based final position (after the optional rerank); ``fused_rank``
    1-based rank after reciprocal rank fusion (equals ``rank`` without rerank);
    ``rrf_score`` the fusion score (``1/(60+r)`` per leg); ``cosine_distance``
    ``1 - <q, v>`` computed from the stored vector for EVERY hit (BM25-only
    hits included); ``dense_rank``/``bm25_rank`` 1-based rank in each leg or
    ``None`` when that leg did not return it; ``bm25_score`` raw BM25 score or
    ``None``; ``rerank_score`` the cross-encoder logit or ``None``.
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


@dataclass(frozen=True)
class QueryPlan:
    """How one question was searched (issue 19): what ``search --json`` and ``ask --json`` report as ``retrieval``.

    ``query`` the question as asked; ``language`` the ISO 639-1 code its BM25
    terms were stemmed in (chosen among the indexed documents' languages);
    ``bm25_weight`` the BM25 list's weight in the fusion, in [0, 1] (1.0 = the
    design's plain RRF; lower when its best chunk covers little of the
    question); ``rewritten`` the query the local model rewrote it into, or
    ``None`` when the question was searched as asked.
    """

    query: str
    language: str = "en"
    bm25_weight: float = 1.0
    rewritten: str | None = None

    def to_json(self) -> dict:
        """``{"query", "language", "bm25_weight", "rewritten_query"}`` (weight rounded to 4 places)."""
        return {"query": self.query, "language": self.language, "bm25_weight": round(self.bm25_weight, 4),
                "rewritten_query": self.rewritten}


@dataclass(frozen=True)
class Citation:
    """One numbered source, as the server attaches it after generation.

    ``index`` is the ``n`` of ``[n]`` (1-based); ``document_id`` the content
    hash; ``document_name`` the user's file name (display only);
    ``locator_label`` e.g. ``"paper.pdf, p. 5"`` or ``"guide.md > Install > Linux"``;
    ``fragment`` ``"#page=N"`` (1-based physical page) for PDFs or
    ``"#char=START,END"`` (0-based code points into the canonical text) for
    text; ``quote`` the chunk's ``content`` (never its embedded ``text``);
    ``cosine_distance`` in ``[0, 2]``; ``fused_rank`` 1-based rank after
    reciprocal rank fusion; ``page`` 1-based or ``None``; ``start``/``end``
    canonical offsets; ``media_type`` of the document; ``chunk_id`` the
    store's chunk row id; ``section`` the heading path; ``document_label``
    the name as shown (the name plus a short id when another stored document
    has the same name; empty means ``document_name``).
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
