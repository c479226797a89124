"""Design stages 8/9: numbered sources, locators and URL fragments (server-side citations).

PUBLIC API: :class:`Citation` (record), :func:`locator_label`, :func:`fragment`,
:func:`citations` (gate result + store -> numbered citations),
:func:`citations_from_rows` (the same without a store), :func:`format_sources_for_prompt`
(the prompt block of stage 8: numbers, names and quotes, never a link) and
:func:`no_generation_payload` (the JSON of ``ask --no-generate --json``).

The model only ever writes ``[n]``; the server maps each ``n`` to the document
id, name, locator label, fragment and quote built here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any, Protocol

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


def _pages(row: ChunkLike) -> str:
    if row.page_end is not None and row.page_end != row.page:
        return f"pp. {row.page}-{row.page_end}"
    return f"p. {row.page}"


def locator(row: ChunkLike) -> str:
    """The place inside the document: ``p. 5`` for PDFs (1-based physical page), else the
    section path ``Install > Linux``, else ``chars START-END`` (0-based code points)."""
    if row.page is not None:
        return _pages(row)
    if row.section:
        return " > ".join(row.section)
    return f"chars {row.start}-{row.end}"


def locator_label(row: ChunkLike) -> str:
    """``paper.pdf, p. 5`` for PDFs, ``guide.md > Install > Linux`` for text (design stage 9)."""
    name = row.document_label or row.document_name
    if row.page is not None:
        return f"{name}, {_pages(row)}"
    return " > ".join([name, *row.section])


def fragment(row: ChunkLike) -> str:
    """URL fragment: ``#page=N`` (1-based physical page, PDF Open Parameters) for PDFs,
    ``#char=START,END`` (0-based code points into the canonical text) otherwise."""
    if row.page is not None:
        return f"#page={row.page}"
    return f"#char={row.start},{row.end}"


def citations_from_rows(hits: Sequence[Any], rows: Sequence[ChunkLike]) -> list[Citation]:
    """Number ``hits`` (``rag.types.Hit``, in order) 1..n with their chunk ``rows`` (same order).

    The quote is the chunk's ``content`` (never the embedded ``text``).
    """
    if len(hits) != len(rows):
        raise ValueError(f"{len(hits)} hits for {len(rows)} chunk rows")
    return [
        Citation(index=i, document_id=r.document_id, document_name=r.document_name,
                 locator_label=locator_label(r), fragment=fragment(r), quote=r.content,
                 cosine_distance=float(h.cosine_distance), fused_rank=int(h.fused_rank), page=r.page,
                 start=r.start, end=r.end, media_type=r.media_type, chunk_id=int(r.chunk_id),
                 section=tuple(r.section), document_label=r.document_label or r.document_name)
        for i, (h, r) in enumerate(zip(hits, rows), start=1)
    ]


def citations(gate_result: Any, store: Any) -> list[Citation]:
    """Numbered citations for the sources the gate kept (``rag.answer.gate.GateResult``), via ``store.chunks(ids)``.

    A refused gate result gives ``[]``. Chunks the gate collapsed into a
    source as identical copies (``gate_result.duplicates``) are named in that
    citation's ``also_in``.
    """
    hits = list(gate_result.sources)
    if not hits:
        return []
    cites = citations_from_rows(hits, store.chunks([h.chunk_id for h in hits]))
    dups = getattr(gate_result, "duplicates", None) or {}
    if not dups:
        return cites
    return [replace(c, also_in=tuple(locator_label(r) for r in store.chunks(dups[c.chunk_id])))
            if c.chunk_id in dups else c for c in cites]


#: Alias kept for callers that named it after the gate.
citations_from_gate = citations


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
