"""Design stages 8/9: numbered sources, locators and URL fragments (server-side citations).

PUBLIC API: :class:`Citation` (record), :func:`locator_label`, :func:`fragment`,
:func:`citations` (gate result + store -> numbered citations),
:func:`citations_from_rows` (the same without a store), :func:`format_sources_for_prompt`
(the prompt block of stage 8: numbers, short headings and quotes, never a link) and
:func:`no_generation_payload` (the JSON of ``ask --no-generate --json``).

The model only ever writes ``[n]``; the server maps each ``n`` to the document
id, name, locator label, fragment and quote built here.

Page locators (issue 13, item 3): a PDF citation's page is the page holding the cited sentence, not the
page the chunk starts on. For a chunk that runs over a page break, :func:`evidence_span` picks the
sentence(s) of the quote sharing most terms with the question, and :func:`evidence_page` finds the page
holding them (:func:`rag.answer.preview.best_page` on the stored original, or the document's page map
when it is at hand). The chunk keeps its range: the label reads ``p. 2 (pp. 1-2)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, Protocol

from rag.ingest.chunk import units
from rag.text import tokenize
from rag.types import Citation


class ChunkLike(Protocol):
    """What a citation needs from a stored chunk (``rag.index.store.ChunkRow`` provides it)."""

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


def _pages(row: ChunkLike, page: int | None = None) -> str:
    if row.page_end is not None and row.page_end != row.page:
        span = f"pp. {row.page}-{row.page_end}"
        return span if page is None else f"p. {page} ({span})"
    return f"p. {row.page if page is None else page}"


def locator(row: ChunkLike, page: int | None = None) -> str:
    """The place inside the document: ``p. 5`` for PDFs (1-based physical page; ``page`` the evidence
    page of a chunk over a page break, shown with the chunk's range), else the section path
    ``Install > Linux``, else ``chars START-END`` (0-based code points)."""
    if row.page is not None:
        return _pages(row, page)
    if row.section:
        return " > ".join(row.section)
    return f"chars {row.start}-{row.end}"


def locator_label(row: ChunkLike, page: int | None = None) -> str:
    """``paper.pdf, p. 5`` for PDFs (``p. 2 (pp. 1-2)`` for a chunk over a page break whose evidence is on
    page 2), ``guide.md > Install > Linux`` for text (design stage 9)."""
    name = row.document_label or row.document_name
    if row.page is not None:
        return f"{name}, {_pages(row, page)}"
    return " > ".join([name, *row.section])


def fragment(row: ChunkLike, page: int | None = None) -> str:
    """URL fragment: ``#page=N`` (1-based physical page, PDF Open Parameters; ``page`` the evidence page
    when given) for PDFs, ``#char=START,END`` (0-based code points into the canonical text) otherwise."""
    if row.page is not None:
        return f"#page={row.page if page is None else page}"
    return f"#char={row.start},{row.end}"


def evidence_span(quote: str, query: str) -> tuple[int, int]:
    """``(start, end)`` character offsets into ``quote`` of its sentence sharing the most distinct terms
    with ``query`` (:func:`rag.text.tokenize`; the earliest on a tie); the whole quote when no sentence
    shares a term. Sentences are the chunker's units (:func:`rag.ingest.chunk.units`)."""
    terms = set(tokenize(query))
    best, best_n = (0, len(quote)), 0
    for a, b in units(quote) if terms else ():
        n = len(terms & set(tokenize(quote[a:b])))
        if n > best_n:
            best, best_n = (a, b), n
    return best


def evidence_page(row: ChunkLike, query: str, locate: Callable[[str, int, int], int] | None = None,
                  page_at: Callable[[int], int | None] | None = None) -> int | None:
    """The 1-based page holding the cited sentence of ``row`` for ``query`` (module doc).

    ``row.page`` when the chunk sits on one page or is not a PDF's. Otherwise the sentence from
    :func:`evidence_span` is placed with ``page_at`` (canonical offset -> page, e.g.
    ``Document.page_at``; its middle character decides) when given, else with ``locate(text, first,
    last)`` (e.g. :func:`rag.answer.preview.best_page` on the stored PDF), else ``row.page``.
    """
    if row.page is None or row.page_end is None or row.page_end == row.page:
        return row.page
    a, b = evidence_span(row.content, query)
    if page_at is not None:
        return page_at(row.start + (a + b) // 2) or row.page
    if locate is not None:
        return locate(row.content[a:b], row.page, row.page_end)
    return row.page


def citations_from_rows(hits: Sequence[Any], rows: Sequence[ChunkLike],
                        pages: Sequence[int | None] | None = None) -> list[Citation]:
    """Number ``hits`` (``rag.types.Hit``, in order) 1..n with their chunk ``rows`` (same order).

    The quote is the chunk's ``content`` (never the embedded ``text``). ``pages`` optionally gives each
    row's evidence page (:func:`evidence_page`); default the chunk's first page.
    """
    if len(hits) != len(rows):
        raise ValueError(f"{len(hits)} hits for {len(rows)} chunk rows")
    pages = list(pages) if pages is not None else [r.page for r in rows]
    return [
        Citation(index=i, document_id=r.document_id, document_name=r.document_name,
                 locator_label=locator_label(r, p), fragment=fragment(r, p), quote=r.content,
                 cosine_distance=float(h.cosine_distance), fused_rank=int(h.fused_rank), page=p,
                 start=r.start, end=r.end, media_type=r.media_type, chunk_id=int(r.chunk_id),
                 section=tuple(r.section), document_label=r.document_label or r.document_name)
        for i, (h, r, p) in enumerate(zip(hits, rows, pages), start=1)
    ]


def stored_pdf_locator(store: Any) -> Callable[[ChunkLike], Callable[[str, int, int], int] | None]:
    """For a row, a ``locate(text, first, last) -> page`` over the store's original PDF
    (:func:`rag.answer.preview.best_page`), or ``None`` when the store kept no file for it."""

    def for_row(row: ChunkLike):
        try:
            path = store.original_path(row.document_id)
        except Exception:  # noqa: BLE001 - no original kept: the chunk's own page
            return None
        if not path.is_file():
            return None
        from rag.answer.preview import best_page

        return lambda text, first, last: best_page(path, text, first, last)[0]

    return for_row


def evidence_pages(rows: Sequence[ChunkLike], query: str, store: Any = None) -> list[int | None]:
    """:func:`evidence_page` of each row, located in the store's original PDFs (when ``store`` is given)."""
    locate_for = stored_pdf_locator(store) if store is not None else (lambda row: None)
    out = []
    for r in rows:
        crosses = r.page is not None and r.page_end is not None and r.page_end != r.page
        out.append(evidence_page(r, query, locate_for(r)) if crosses else r.page)
    return out


def citations(gate_result: Any, store: Any) -> list[Citation]:
    """Numbered citations for the sources the gate kept (``rag.answer.gate.GateResult``), via ``store.chunks(ids)``.

    Each PDF citation opens at its evidence page for the gate's query (:func:`evidence_page`). A refused
    gate result gives ``[]``.
    """
    hits = list(gate_result.sources)
    if not hits:
        return []
    rows = store.chunks([h.chunk_id for h in hits])
    return citations_from_rows(hits, rows, evidence_pages(rows, gate_result.query, store))


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
    d["section"] = list(c.section)
    pinned = ["index", "document_id", "document_name", "locator_label", "fragment", "quote", "cosine_distance"]
    return {**{k: d[k] for k in pinned}, **{k: v for k, v in d.items() if k not in pinned}}


def no_generation_payload(gate_result: Any, cites: Sequence[Citation]) -> dict[str, Any]:
    """The ``ask --no-generate --json`` object:
    ``{"query", "threshold", "refused", "refusal", "answer": null, "citations": [...]}``."""
    return {
        "query": gate_result.query,
        "threshold": gate_result.threshold,
        "refused": gate_result.refused,
        "refusal": gate_result.refusal,
        "answer": None,
        "citations": [citation_json(c) for c in cites],
    }
