"""The in-app viewer (issue 17) through `streamlit.testing.v1.AppTest`: files of every new format uploaded on the
Documents page, then the Source page opened at a chunk of each, as a citation link opens it (the chat's preview
dialog calls the same `ui.viewer.show`). A real store with the fake embedder, no model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import samples

ROOT = Path(__file__).resolve().parents[2]
DOCS_PAGE = str(ROOT / "app_pages" / "1_Documents.py")
SOURCE_PAGE = str(ROOT / "app_pages" / "2_Source.py")
TIMEOUT = 900  # seconds; a bound on waiting (indexing on 2 shared cores), never an assertion
PDF_SENTENCE = "The ferry timetable changes on the first Monday of October every year."


def _pdf_bytes() -> bytes:
    """Five pages of about 700 characters each (so chunks end at page ends); page 4 holds the sentence."""
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, 6):
        page = doc.new_page()
        lines = [f"Page {n} line {i} talks about harbour logistics, berths and cranes." for i in range(10)]
        if n == 4:
            lines[5] = PDF_SENTENCE
        page.insert_text((72, 90), "\n".join(lines), fontsize=11)
    return doc.tobytes()


FILES = {
    "manual.docx": samples.docx_bytes, "induction.pptx": samples.pptx_bytes, "sales.xlsx": samples.xlsx_bytes,
    "install.html": lambda: samples.HTML_PAGE.encode(), "almanac.epub": samples.epub_bytes,
    "prices.csv": lambda: samples.CSV_TEXT.encode(), "ferry.pdf": _pdf_bytes,
}


@pytest.fixture(scope="module")
def uploaded(tmp_path_factory, fake_embedder_module):
    """A fresh store with one file of each format, uploaded through the Documents page."""
    from streamlit.testing.v1 import AppTest

    mp = pytest.MonkeyPatch()
    store_dir = tmp_path_factory.mktemp("viewer-store")
    mp.setenv("RAG_STORE", str(store_dir))
    at = AppTest.from_file(DOCS_PAGE, default_timeout=TIMEOUT).run()
    at.file_uploader(key="uploader").set_value(
        [(name, make(), "application/octet-stream") for name, make in FILES.items()]).run()
    assert not at.exception, at.exception
    ok = [s.value for s in at.success]
    assert all(any(v.startswith(f"{name}: indexed") for v in ok) for name in FILES), (ok, [e.value for e in at.error])
    from rag.store.store import Store

    store = Store(store_dir)
    yield store
    store.close()
    mp.undo()


def _open(store, name: str, needle: str):
    """The Source page opened at the chunk of ``name`` holding ``needle``, as ``[1]``'s link opens it."""
    from streamlit.testing.v1 import AppTest

    doc = next(d for d in store.documents() if d.name == name)
    row = next(c for c in store.document_chunks(doc.id) if needle in c.content)
    src = AppTest.from_file(SOURCE_PAGE, default_timeout=TIMEOUT)
    params = {"doc": doc.id, "chunk": str(row.chunk_id), "start": str(row.start), "end": str(row.end), "n": "1"}
    if row.page:
        params["page"] = str(row.page)
    src.query_params.update(params)
    src.run()
    assert not src.exception, src.exception
    return src, row


def _view(src) -> str:
    frames = src.get("iframe")
    assert frames, "no view was drawn"
    return frames[-1].proto.srcdoc


def _label(src) -> str:
    return src.markdown[0].value


def _marked(view: str) -> str:
    """The text of every marked element, in order, HTML tags dropped."""
    import html

    return " ".join(html.unescape(m) for m in re.findall(r'<mark class="cited"[^>]*>(.*?)</mark>', view, re.S))


def test_docx_opens_at_the_paragraph_in_the_rendered_text(uploaded):
    src, row = _open(uploaded, "manual.docx", samples.DOCX_NEEDLE)
    assert _label(src).startswith("**\\[1\\] manual.docx > Cranes > Inspections, ¶ 1")
    view = _view(src)
    assert "<h2>Inspections</h2>" in view and 'id="cited"' in view
    assert samples.DOCX_NEEDLE in _marked(view) and "Mooring lines" not in _marked(view)
    assert "scrollIntoView" in view


def test_pptx_opens_the_slide_with_its_notes(uploaded):
    src, _ = _open(uploaded, "induction.pptx", samples.PPTX_NEEDLE)
    assert _label(src) == "**\\[1\\] induction.pptx, slide 2 (Driving in the cold store)**"
    view = _view(src)
    assert "Slide 2 of 3" in view and '<div class="rag-slide"><h1>Driving in the cold store</h1>' in view
    assert samples.PPTX_NEEDLE in _marked(view)
    assert '<div class="rag-notes"><h2>Speaker notes</h2>' in view
    assert "Temperatures" not in view and "Warehouse team" not in view  # only the cited slide


def test_sheet_opens_at_its_rows_with_header_and_row_numbers(uploaded):
    src, _ = _open(uploaded, "sales.xlsx", "South")
    assert "sales.xlsx, 'Q1 sales'\\!A1:E4" in _label(src)
    view = _view(src)
    assert '<th class="rownum" style="text-align:center">E</th>' in view
    assert re.search(r'<tr class="cited"[^>]*><td class="rownum">4</td>', view)
    assert "$1,234.50" in view and "Forecast holds" not in view  # one sheet


def test_csv_and_html_and_epub_open_at_their_places(uploaded):
    src, _ = _open(uploaded, "prices.csv", "washer")
    assert "prices.csv, rows 1–5" in _label(src) and '<td class="rownum">5</td>' in _view(src)
    src, _ = _open(uploaded, "install.html", "brew formula")
    assert _label(src) == "**\\[1\\] install.html > On macOS, ¶ 1**"  # the h1 is the title, not in the path
    assert "brew formula" in _marked(_view(src)) and "cookies" not in _view(src)
    src, _ = _open(uploaded, "almanac.epub", "Three roofs")
    assert "almanac.epub > The first storm, ¶" in _label(src)
    assert "Three roofs were lost." in _marked(_view(src))


def test_pdf_opens_in_the_pdfjs_viewer_at_the_page_with_the_quote_outlined(uploaded):
    src, row = _open(uploaded, "ferry.pdf", "ferry timetable")
    assert row.page == 4
    assert _label(src) == "**\\[1\\] ferry.pdf, p. 4**"
    caption = src.caption[0].value
    assert "Page 4 of 5" in caption and "100% of the quote located" in caption
    assert re.search(r"\(/app/static/[0-9a-f]{32}/[0-9a-f]{32}\.pdf#page=4\)", caption)  # the secondary action stays
    component = src.get("component_instance")[0]
    args = json.loads(component.proto.json_args)
    assert args["scroll_to_annotation"] == 1 and args["annotations"]
    pages_shown = 5  # pages 1-5: the cited page 4 and up to 3 either side
    assert {a["page"] for a in args["annotations"]} == {4} and all(a["width"] > 50 for a in args["annotations"])
    import base64

    import pymupdf

    with pymupdf.open(stream=base64.b64decode(args["binary"]), filetype="pdf") as sliced:
        assert sliced.page_count == pages_shown and PDF_SENTENCE in sliced[3].get_text()
