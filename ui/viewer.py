"""The in-app document viewer (issue 17): one code path that opens any citation at its place, used by the
Source page and by the chat's preview dialog.

* PDF: the PDF.js component ``streamlit-pdf-viewer`` (its PDF.js and worker ship inside the wheel: no CDN)
  shows the pages around the cited one, scrolled to the quote, whose line boxes are drawn as annotations
  (:func:`ui.view.pdf.pdf_view`); the browser's own viewer at ``#page=N`` in a new tab stays as a
  secondary link.
* PPTX: the cited slide as a card with its speaker notes; XLSX/CSV: the cited rows with the sheet's
  header and A1 row numbers; images: the picture with the cited region boxed, then the OCR text;
  DOCX/EPUB/HTML: the rendered text; text and Markdown: the canonical text as written. In every text view
  the passage is highlighted and scrolled into view (:mod:`ui.view.pdf`).

Slides and sheets need the document's locator map (:attr:`rag.types.Document.parts`): the store keeps it
(:meth:`rag.store.store.Store.parts`, issue 23), so the viewer never extracts the document again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st
import streamlit.components.v1 as components

from rag.answer.cite import Citation, row_locator
from rag.errors import RagError
from rag.ingest.image import open_frames
from rag.types import Locator, LocatorKind, MediaType
from ui import services
from ui.format import md_escape
from ui.view.pdf import pdf_view
from ui.view.text import (
    document_html,
    highlight_html,
    image_region_png,
    parts_of_kind,
    sheet_html,
    slide_html,
    view_page,
)

#: The PDF viewer's zoom on a phone (1.0: the page at its own size, about 12-point text read at 12 points).
PHONE_ZOOM = 1.0

#: Height (pixels) of the viewer's frame.
VIEW_HEIGHT = 640


@dataclass(frozen=True)
class Target:
    """What to open: a document, the cited range (0-based code points), its locator and quote.

    ``page`` the 1-based physical page a PDF opens at; ``index`` the ``n`` of ``[n]`` (0: none);
    ``label`` the locator label shown above the view.
    """

    document_id: str
    media_type: str
    start: int
    end: int
    quote: str = ""
    page: int | None = None
    locator: Locator | None = None
    index: int = 0
    label: str = ""

    @classmethod
    def from_citation(cls, c: Citation, page: int | None = None) -> "Target":
        """From a :class:`rag.answer.cite.Citation` (``page`` overrides its page: where most of the quote is)."""
        return cls(c.document_id, c.media_type, c.start, c.end, c.quote, page or c.page,
                   c.locator, c.index, c.locator_label)

    @classmethod
    def from_chunk(cls, row: Any, index: int = 0, page: int | None = None, label: str = "") -> "Target":
        """From a stored chunk (``rag.store.store.ChunkRow``)."""
        return cls(row.document_id, row.media_type, row.start, row.end, row.content, page or row.page,
                   row_locator(row), index, label)


@st.cache_data(show_spinner=False, max_entries=32)
def _region_png(doc_id: str, name: str, frame: int, box: tuple | None) -> bytes | None:
    try:
        frames = open_frames(services.store().original_path(doc_id).read_bytes(), name)
    except (RagError, OSError):
        return None
    if not 1 <= frame <= len(frames):
        return None
    return image_region_png(frames[frame - 1], box)


@st.cache_data(show_spinner="Opening the PDF…", max_entries=16)
def _pdf(path: str, mtime: float, page: int, quote: str):
    return pdf_view(path, page, quote)


def _frame(body_html: str, title: str, height: int) -> None:
    components.html(view_page(body_html, title=title), height=height, scrolling=True)


def show(t: Target, *, height: int = VIEW_HEIGHT, key: str = "viewer") -> None:
    """Open ``t`` in the app: the view for its format, scrolled to the cited passage (see the module docstring)."""
    store = services.store()
    doc = store.get_document(t.document_id)
    if doc is None:
        st.warning("This document has been deleted since the answer was given.")
        return
    if t.label:
        number = f"\\[{t.index}\\] " if t.index else ""
        st.markdown(f"**{number}{md_escape(t.label)}**")
    if t.media_type == MediaType.PDF:
        _show_pdf(t, doc, height, key)
        return
    canonical = store.canonical_text(t.document_id)
    if not 0 <= t.start <= t.end <= len(canonical):
        st.error(f"The cited range {t.start}:{t.end} is outside this document (0:{len(canonical)}).")
        return
    kind = t.locator.kind if t.locator is not None else LocatorKind.CHARS
    if kind == LocatorKind.SLIDE:
        _show_slide(t, doc, canonical, height)
    elif kind == LocatorKind.ROWS:
        parts = store.parts(doc.id)
        _frame(sheet_html(canonical, parts_of_kind(parts, LocatorKind.ROWS, t.start), t.start, t.end),
               doc.name, height)
    elif kind == LocatorKind.REGION:
        _show_image(t, doc, canonical, height)
    elif kind in (LocatorKind.PARAGRAPH, LocatorKind.SECTION):
        _frame(document_html(canonical, t.start, t.end), doc.name, height)
    else:
        _frame(highlight_html(canonical, t.start, t.end), doc.name, height)


def _show_pdf(t: Target, doc: Any, height: int, key: str) -> None:
    from streamlit_pdf_viewer import pdf_viewer

    served = services.publish_pdf(t.document_id)
    path = services.store().original_path(t.document_id)
    page = t.page or 1
    try:
        view = _pdf(str(path), path.stat().st_mtime, page, t.quote)
    except (OSError, ValueError) as e:
        st.error(md_escape(f"{doc.name}: cannot open page {page} ({e})"))
        return
    located = f"; {view.coverage:.0%} of the quote located and outlined" if t.quote else ""
    whole = f" · [open the whole PDF in the browser's viewer at page {page}]({served}#page={page})" if served else ""
    st.caption(f"Page {page} of {doc.pages or '?'} (pages {view.first_page}–{view.first_page + view.page_count - 1} "
               f"shown here{located}){whole}")
    # a phone (its browser says "Mobi", as MDN advises to test): the page at its own size, its text's width
    # cropped (ui.view.pdf.crop_to_text), scrolled sideways if need be; fitted to a phone's width it opened at
    # 51 % and the outlined quote could not be read (issue 42). Elsewhere: fitted to the viewer's width.
    phone = "Mobi" in (st.context.headers.get("User-Agent") or "")
    pdf_viewer(view.pdf, height=height, annotations=view.annotations, key=f"{key}-pdf-{t.document_id[:12]}-{page}",
               zoom_level=PHONE_ZOOM if phone else None,
               scroll_to_annotation=1 if view.annotations else None,
               scroll_to_page=None if view.annotations else view.page, scroll_behavior="instant",
               render_text=True, annotation_outline_size=2)


def _show_slide(t: Target, doc: Any, canonical: str, height: int) -> None:
    parts = services.store().parts(doc.id)
    slides = [p for p in parts if p.kind == LocatorKind.SLIDE]
    here = next((p for p in slides if p.number == t.locator.first), None)
    if here is None:
        _frame(document_html(canonical, t.start, t.end), doc.name, height)
        return
    _frame(slide_html(canonical, here, t.start, t.end, len(slides)), doc.name, height)


def _show_image(t: Target, doc: Any, canonical: str, height: int) -> None:
    loc = t.locator
    png = _region_png(doc.id, doc.name, loc.scope_number or 1, loc.box)
    if png is not None:
        page = f"page {loc.scope_number}, " if (loc.scope_number or 1) > 1 else ""
        st.image(png, caption=f"{page}the cited lines outlined", width="stretch")
    _frame(document_html(canonical, t.start, t.end), doc.name, max(240, height // 2))
