"""Issue 17's readers (rag/ingest/docx, pptx, sheets, html, epub, image, sniff) on tiny real files made with the
same libraries (tests/samples.py): canonical text, sections, locator parts, chunk locators, damaged files."""

from __future__ import annotations

import io
import re
import zipfile
from types import SimpleNamespace

import pytest
import samples

from rag.answer.cite import fragment, locator_label
from rag.errors import ExtractionError
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.ingest.locate import locator_at
from rag.types import LocatorKind, MediaType


def _count(text: str) -> int:
    return len(text.split()) + 2


def _chunks(doc):
    return chunk_document(doc, "E", count_tokens=_count)


def _row(doc, c):
    """A chunk as the store returns it (what citations read)."""
    return SimpleNamespace(chunk_id=c.index, document_id=doc.id, document_name=doc.name, document_label=doc.name,
                           media_type=doc.media_type, content=c.content, section=c.section, start=c.start,
                           end=c.end, page=c.page, page_end=c.page_end, locator=c.locator, role=c.role)


def _cited(doc, needle: str):
    """The chunk holding ``needle`` and its label and fragment."""
    c = next(c for c in _chunks(doc) if needle in c.content)
    return c, locator_label(_row(doc, c)), fragment(_row(doc, c))


def _check_offsets(doc):
    for p in doc.parts:
        assert 0 <= p.start <= p.end <= len(doc.canonical)
    assert [p.start for p in doc.parts] == sorted(p.start for p in doc.parts)
    for h in doc.headings:
        assert doc.canonical[h.start:h.end].lstrip("#").strip() == h.title
    for c in _chunks(doc):
        assert doc.canonical[c.start:c.end] == c.content
        assert c.locator is not None


# --------------------------------------------------------------------------- DOCX


def test_docx_headings_paragraphs_lists_and_table():
    doc = extract_bytes(samples.docx_bytes(), "manual.docx")
    assert doc.media_type == MediaType.DOCX and doc.title == "Harbour operations manual"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "Harbour operations manual"), (1, "Cranes"),
                                                          (2, "Inspections"), (1, "Quay")]
    assert "- Check the hook latch\n- Check the limit switches" in doc.canonical
    assert "| Device | Interval | Who |\n| --- | --- | --- |\n| Wire rope | 90 days | rigger |" in doc.canonical
    inspections = [(p.number, doc.canonical[p.start:p.end][:20]) for p in doc.parts if p.scope == "Inspections"]
    assert inspections == [(1, "Every lifting device"), (2, samples.DOCX_NEEDLE[:20]), (3, "- Check the hook lat"),
                           (4, "- Check the limit sw"), (5, "| Device | Interval ")]
    _check_offsets(doc)


def test_docx_citation_is_heading_path_and_paragraph():
    doc = extract_bytes(samples.docx_bytes(), "manual.docx")
    c, label, frag = _cited(doc, samples.DOCX_NEEDLE)
    assert c.section == ("Cranes", "Inspections")
    assert c.locator.kind == LocatorKind.PARAGRAPH and c.locator.first == 1
    assert label.startswith("manual.docx > Cranes > Inspections, \u00b6 1")
    assert frag == f"#char={c.start},{c.end}"


# --------------------------------------------------------------------------- PPTX


def test_pptx_one_section_per_slide_notes_marked_and_slide_parts():
    doc = extract_bytes(samples.pptx_bytes(), "induction.pptx")
    assert doc.media_type == MediaType.PPTX and doc.title == "Cold store induction"
    assert [h.title for h in doc.headings] == ["Cold store induction", "Driving in the cold store", "Speaker notes",
                                               "Temperatures"]
    slides = [(p.kind, p.number, p.scope) for p in doc.parts]
    assert slides == [("slide", 1, "Cold store induction"), ("slide", 2, "Driving in the cold store"),
                      ("slide", 3, "Temperatures")]
    second = doc.canonical[doc.parts[1].start:doc.parts[1].end]
    assert second.startswith("# Driving in the cold store") and "## Speaker notes\n\nTell the story" in second
    assert "- " + samples.PPTX_NEEDLE in second
    assert "| Room | Set point |\n| --- | --- |\n| Chiller | 2 °C |" in doc.canonical
    _check_offsets(doc)


def test_pptx_citation_is_the_slide():
    doc = extract_bytes(samples.pptx_bytes(), "induction.pptx")
    c, label, frag = _cited(doc, samples.PPTX_NEEDLE)
    assert (c.locator.kind, c.locator.first, c.locator.last) == ("slide", 2, 2)
    assert label == "induction.pptx, slide 2 (Driving in the cold store)" and frag == "#slide=2"
    notes, label, _ = _cited(doc, "collision near door 4")
    assert label.endswith("slide 2 (Driving in the cold store), speaker notes")


# --------------------------------------------------------------------------- XLSX and CSV


def test_xlsx_sheets_rows_numbers_as_written():
    doc = extract_bytes(samples.xlsx_bytes(), "sales.xlsx")
    assert doc.media_type == MediaType.XLSX
    assert [h.title for h in doc.headings] == ["Q1 sales", "Notes"]  # the empty sheet is skipped
    assert "| North | 1200 | 2.50 | 12.5% | 2026-03-01 |" in doc.canonical
    assert "| South | 950 | $1,234.50 | 30% | 2026-03-02 14:30 |" in doc.canonical
    assert "| Forecast holds | 0.3 |" in doc.canonical  # 0.1 + 0.2 as Excel shows it
    rows = [(p.scope, p.number, p.anchor) for p in doc.parts]
    assert rows == [("Q1 sales", 1, "A:E"), ("Q1 sales", 2, "A:E"), ("Q1 sales", 4, "A:E"), ("Notes", 2, "B:C"),
                    ("Notes", 3, "B:C")]
    _check_offsets(doc)
    c, label, frag = _cited(doc, "South")
    assert label == "sales.xlsx, 'Q1 sales'!A1:E4" and frag == "#'Q1%20sales'!A1:E4"


def test_long_sheet_chunks_repeat_the_header_and_give_row_ranges():
    body = "\n".join(f"{i},part number {i},{i}.50,bin {i % 7}" for i in range(1, 200))
    doc = extract_bytes(("id,name,price,bin\n" + body).encode(), "parts.csv")
    chunks = _chunks(doc)
    assert len(chunks) > 3
    for c in chunks:
        assert re.search(r"\| id \| name \| price \| bin \|\n\|[- |]+\|\n", c.text)  # header + rule in every embedded text
        cells = [line.split("|")[1].strip() for line in c.content.split("\n") if line.strip("| -")]
        records = [1 if cell == "id" else int(cell) + 1 for cell in cells]  # record 1 is the header
        assert (c.locator.first, c.locator.last) == (records[0], records[-1])
    c = chunks[2]
    assert locator_label(_row(doc, c)) == f"parts.csv, rows {c.locator.first}\u2013{c.locator.last}"
    assert fragment(_row(doc, c)) == f"#row={c.locator.first}-{c.locator.last}"


def test_csv_keeps_numbers_and_counts_records():
    doc = extract_bytes(samples.CSV_TEXT.encode(), "prices.csv")
    assert doc.media_type == MediaType.CSV
    assert doc.canonical == ("| id | item | price |\n| --- | --- | --- |\n| 1 | bolt | 007 |\n"
                             "| 2 | nut, hex | 3.10 |\n| 4 | washer | 1e3 |")
    assert [p.number for p in doc.parts] == [1, 2, 3, 5]  # the blank record 4 counts, as in a spreadsheet


def test_csv_sniffed_from_content_and_dialect():
    semi = "name;qty\napple;3\npear;4\nplum;5\n"
    assert extract_bytes(semi.encode(), "stock.dat").media_type == MediaType.CSV
    assert extract_bytes(semi.encode(), "stock.txt").media_type == MediaType.TEXT  # named as text: stays text
    prose = "Hello, world. This is prose, with commas.\nAnd a second line\nwith none at all.\n"
    assert extract_bytes(prose.encode(), "notes").media_type == MediaType.TEXT


# --------------------------------------------------------------------------- Markdown and text


def _budget_chunks(doc, budget: int):
    return chunk_document(doc, "E", budget_chars=budget, count_tokens=_count)


def test_markdown_and_text_passages_say_their_paragraph_within_the_section():
    """Every source of one Markdown section read the same label ("guide.md > Install"; 151 of 381 saved answers of
    the dev corpora showed two sources under one label). A passage now says the paragraphs it touches, counted
    within its section's body, the heading line left out; the link still opens the exact characters."""
    md = ("# Guide\n\nIntro words about the guide.\n\n## Install\n\nFirst install paragraph about the kettle "
          "and its filters.\n\nSecond install paragraph about descaling the boiler every month.\n\nThird install "
          "paragraph about the warranty card and its dates.\n")
    doc = extract_bytes(md.encode(), "guide.md")
    chunks = _budget_chunks(doc, 80)
    rows = {c.content.split()[0] + " " + c.content.split()[1]: c for c in chunks}
    first, second, third = rows["First install"], rows["Second install"], rows["Third install"]
    labels = [locator_label(_row(doc, c)) for c in (first, second, third)]
    assert labels == ["guide.md > Install, ¶ 1", "guide.md > Install, ¶ 2", "guide.md > Install, ¶ 3"]
    assert all(c.locator.kind == LocatorKind.CHARS for c in (first, second, third))
    assert fragment(_row(doc, second)) == f"#char={second.start},{second.end}"
    assert doc.canonical[second.start:second.end] == second.content
    whole = _budget_chunks(doc, 4000)
    assert [locator_label(_row(doc, c)) for c in whole if "install" in c.content] == ["guide.md > Install, ¶ 1–3"]
    txt = extract_bytes(b"Alpha paragraph one with words.\n\nBeta paragraph two with words.\n", "notes.txt")
    assert [locator_label(_row(txt, c)) for c in _budget_chunks(txt, 40)] == ["notes.txt, ¶ 1", "notes.txt, ¶ 2"]


def test_a_chunk_stored_without_paragraphs_keeps_its_heading_path():
    """A Markdown chunk of a store indexed before carries a ``chars`` locator without numbers (or none): its label is
    the heading path, as it was."""
    row = SimpleNamespace(document_name="guide.md", document_label="guide.md", section=("Install",), page=None,
                          page_end=None, locator=None)
    assert locator_label(row) == "guide.md > Install"


# --------------------------------------------------------------------------- HTML


def test_a_web_pages_passage_is_located_by_its_paragraph_within_its_section():
    """A new user's four sources from one Wikipedia page (2026-12-06) all read just "web-wikipedia-t-sne.html":
    the text before the page's first subheading has no heading path. A section's passage now says its paragraph,
    the heading not counted; offsets of canonical text, a blank line (or more) between paragraphs."""
    from rag.ingest.locate import paragraph_number

    text = "Title\n\nFirst para.\n\n\nSecond para.\nstill second.\n\nThird."
    assert paragraph_number(text, 0, text.index("First")) == 1
    assert paragraph_number(text, 0, text.index("still")) == 2
    assert paragraph_number(text, 0, text.index("Third")) == 3
    assert paragraph_number(text, 0, 0, heading=False) == 1 and paragraph_number(text, 0, text.index("First"), heading=False) == 2
    html = ("<html><body><h1>Guide</h1><p>One.</p><p>Two, about brewing formulas at length.</p><h2 id='x'>More</h2>"
            "<p>Three.</p></body></html>")
    doc = extract_bytes(html.encode(), "guide.html")
    _c, label, _frag = _cited(doc, "brewing formulas")
    assert label == "guide.html, ¶ 1–2"  # the title heading (h1) is the page, not a section of it


def test_a_wikipedia_navigation_box_is_no_content():
    """A new user saw Wikipedia's "Machine learning and data mining" side box (``<table class="vertical-navbox
    nowraplinks">``) in a page's indexed text (2026-12-06), though navigation is dropped: "navbox" is a class word
    of navigation too, as are "noprint" (what a site hides when printed: its tagline, header, footer) and
    "jump-link". An infobox (facts about the subject) stays."""
    html = ("<html><body><div id='content'><h1>t-SNE</h1><div id='siteSub' class='noprint'>From Wikipedia, the free "
            "encyclopedia</div><a class='mw-jump-link' href='#mw-head'>Jump to navigation</a>"
            "<table class='vertical-navbox nowraplinks'><tr><th>Machine "
            "learning and data mining</th></tr><tr><td>Clustering Regression</td></tr></table>"
            "<table class='infobox'><tr><th>Developer</th><td>Laurens van der Maaten</td></tr></table>"
            "<p>t-SNE is a method for visualization of high-dimensional data.</p></div></body></html>")
    text = extract_bytes(html.encode(), "t-sne.html").canonical
    assert "Machine learning and data mining" not in text and "Clustering" not in text
    assert "free encyclopedia" not in text and "Jump to navigation" not in text  # hidden in print, a skip link
    assert "Laurens van der Maaten" in text and "t-SNE is a method for visualization" in text


def test_html_main_content_only_with_heading_anchors():
    doc = extract_bytes(samples.HTML_PAGE.encode(), "install.html")
    assert doc.media_type == MediaType.HTML and doc.title == "Installing Acme"
    text = doc.canonical
    for boilerplate in ("cookies", "Home page", "Related posts", "all rights reserved", "tracking", "color: red"):
        assert boilerplate not in text
    assert "Acme runs on Linux and macOS.\nIt needs Python 3.11." in text
    assert "1. Download the tarball.\n2. Unpack it\n  - with tar" in text
    assert "  tar xf acme.tgz\n  ./install --prefix /opt/acme" in text  # <pre> keeps its indentation
    assert "| Distribution | Oldest release |\n| --- | --- |\n| Debian | 12 |" in text
    assert [(p.kind, p.scope, p.anchor) for p in doc.parts] == [
        ("section", "Installing Acme", "install"), ("section", "On Linux", "on-linux"), ("section", "On macOS", "mac")]
    _check_offsets(doc)
    c, label, frag = _cited(doc, "brew formula")
    assert label == "install.html > On macOS, ¶ 1" and frag == "#mac"  # the anchor in the link only (issue 42)


def test_html_declared_charset_and_no_main_element():
    page = ('<html><head><meta charset="windows-1252"><title>Caf\xe9 menu</title></head><body>'
            '<div id="nav" class="menu"><a>Home</a> <a>Contact us today</a></div>'
            '<div class="content"><h2>Desserts</h2><p>Cr\xe8me br\xfbl\xe9e costs 6 \u20ac.</p></div>'
            '<div class="footer">Opening hours and address</div></body></html>').encode("cp1252")
    doc = extract_bytes(page, "menu.htm")
    assert "Crème brûlée costs 6 €." in doc.canonical
    assert "Contact us" not in doc.canonical and "Opening hours" not in doc.canonical
    assert doc.title == "Café menu"


# --------------------------------------------------------------------------- EPUB


def test_epub_chapters_and_paragraphs_within_chapters():
    doc = extract_bytes(samples.epub_bytes(), "almanac.epub")
    assert doc.media_type == MediaType.EPUB and doc.title == "Storm Almanac"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "The first storm"), (3, "Aftermath"), (1, "Calm")]
    assert "1. The first storm" not in doc.canonical  # the navigation document is not a chapter
    parts = [(p.scope_number, p.number, doc.canonical[p.start:p.end][:12]) for p in doc.parts]
    assert parts == [(1, 1, "The wind ros"), (1, 2, "By noon the "), (1, 3, "Three roofs "), (2, 1, "The sea lay "),
                     (2, 2, "- no wind\n- ")]
    _check_offsets(doc)
    _, label, _ = _cited(doc, "Three roofs")
    assert label == "almanac.epub > The first storm, \u00b6 3"


def test_epub_with_encrypted_chapters_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(samples.epub_bytes())) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item.filename))
        dst.writestr("META-INF/encryption.xml", '<encryption><EncryptedData><CipherReference URI="EPUB/c1.xhtml"/>'
                                                "</EncryptedData></encryption>")
    with pytest.raises(ExtractionError, match=r"^locked\.epub: DRM-protected EPUB"):
        extract_bytes(buf.getvalue(), "locked.epub")


# --------------------------------------------------------------------------- images (OCR)


def _fake_ocr(monkeypatch, lines):
    """Replace the OCR engine by one that 'reads' the given ``(text, box)`` lines (plumbing tests)."""
    from rag.ingest import ocr

    def fake(image, **kw):
        got = tuple(ocr.OcrLine(t, *box, 0.99) for t, box in lines)
        return ocr.OcrResult(got, (), "fake-ocr", 1.0)

    monkeypatch.setattr(ocr, "ocr_image", fake)


def test_image_lines_paragraphs_and_region_locators(monkeypatch):
    _fake_ocr(monkeypatch, [("Crane inspection record", (42, 46, 382, 78)),
                            ("The hook latch was replaced.", (41, 125, 643, 158)),
                            ("Load test passed.", (41, 176, 454, 208)),
                            ("Inspector: Morgan Ellery", (39, 284, 390, 321))])
    doc = extract_bytes(samples.png_bytes(), "record.png")
    assert doc.media_type == MediaType.PNG and doc.title == "record"
    assert doc.canonical == ("Crane inspection record\n\nThe hook latch was replaced.\nLoad test passed.\n\n"
                             "Inspector: Morgan Ellery")
    assert [(p.number, p.box) for p in doc.parts][1] == (2, (41, 125, 643, 158))
    assert doc.warnings and "OCR (fake-ocr)" in doc.warnings[0]
    _check_offsets(doc)
    c, label, frag = _cited(doc, "hook latch")  # the three paragraphs fit one chunk
    assert (c.locator.first, c.locator.last) == (1, 4) and c.locator.box == (39, 46, 643, 321)
    assert label == "record.png, lines 1\u20134" and frag == "#xywh=39,46,604,275"
    assert locator_at(doc, doc.parts[1].start, doc.parts[2].end).box == (41, 125, 643, 208)


def test_multipage_tiff_has_a_section_per_page(monkeypatch):
    from PIL import Image

    _fake_ocr(monkeypatch, [("Same words on each page", (10, 10, 200, 30))])
    buf = io.BytesIO()
    Image.new("RGB", (300, 100), "white").save(buf, "TIFF", save_all=True,
                                               append_images=[Image.new("RGB", (300, 100), "white")])
    doc = extract_bytes(buf.getvalue(), "fax.tiff")
    assert doc.media_type == MediaType.TIFF and [h.title for h in doc.headings] == ["Page 1", "Page 2"]
    assert [(p.scope_number, p.number) for p in doc.parts] == [(1, 1), (2, 1)]


def test_image_without_text_refused(monkeypatch):
    _fake_ocr(monkeypatch, [])
    with pytest.raises(ExtractionError, match=r"^blank\.jpg: no text found by OCR"):
        extract_bytes(samples.png_bytes("JPEG"), "blank.jpg")


@pytest.mark.slow
def test_real_ocr_reads_the_picture():
    pytest.importorskip("rapidocr_onnxruntime", reason="the OCR engine is not installed")
    doc = extract_bytes(samples.png_bytes(), "record.png")
    words = set(doc.canonical.lower().split())
    assert {"crane", "inspection", "latch", "replaced", "tonnes.", "ellery"} <= words
    assert [p.number for p in doc.parts] == [1, 2, 3, 4]
    assert "\n\nInspector" in doc.canonical  # the gap before the signature starts a paragraph


# --------------------------------------------------------------------------- sniffing and damaged files


@pytest.mark.parametrize("make,name,media", [
    (samples.docx_bytes, "manual.bin", MediaType.DOCX), (samples.pptx_bytes, "deck.txt", MediaType.PPTX),
    (samples.xlsx_bytes, "book", MediaType.XLSX), (samples.epub_bytes, "book.zip", MediaType.EPUB),
])
def test_type_comes_from_the_bytes_not_the_name(make, name, media):
    assert extract_bytes(make(), name).media_type == media


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


@pytest.mark.parametrize("make,name,reason", [
    (samples.docx_bytes, "broken.docx", "damaged DOCX"), (samples.pptx_bytes, "broken.pptx", "damaged PPTX"),
    (samples.xlsx_bytes, "broken.xlsx", "damaged XLSX"), (samples.epub_bytes, "broken.epub", "damaged EPUB"),
    (samples.png_bytes, "broken.png", "damaged image"),
])
def test_damaged_files_name_the_file_and_the_reason(make, name, reason):
    with pytest.raises(ExtractionError, match=rf"^{name.replace('.', '[.]')}: ") as info:
        extract_bytes(_truncated(make()), name)
    assert info.value.name == name
    assert reason in info.value.reason or "unsupported file type (a ZIP archive" in info.value.reason


def test_zip_with_a_missing_part_is_a_damaged_docx():
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(samples.docx_bytes())) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            if item.filename != "[Content_Types].xml":
                dst.writestr(item, src.read(item.filename))
    with pytest.raises(ExtractionError, match=r"^report\.docx: damaged DOCX \("):
        extract_bytes(buf.getvalue(), "report.docx")


def test_other_archives_and_legacy_office_are_named():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes.txt", "hello")
    with pytest.raises(ExtractionError, match=r"^a\.zip: unsupported file type \(a ZIP archive"):
        extract_bytes(buf.getvalue(), "a.zip")
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    with pytest.raises(ExtractionError, match=r"^old\.doc: legacy Office file"):
        extract_bytes(ole, "old.doc")


def test_empty_office_files_refused():
    import docx

    buf = io.BytesIO()
    docx.Document().save(buf)
    with pytest.raises(ExtractionError, match=r"^empty\.docx: no text in this DOCX"):
        extract_bytes(buf.getvalue(), "empty.docx")


def test_a_slide_that_is_mostly_a_picture_is_reported_as_not_read():
    """apache/poi's ececapstonespring2012.pptx (a new user's walk, 2026-12-07): the Gantt table a reader sees on
    slide 17 is a picture; its answer ("16h") was in no chunk, and nothing said so."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    s1 = deck.slides.add_slide(deck.slide_layouts[5])
    s1.shapes.title.text = "Budget"
    s1.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text_frame.text = "The total cost is $8,962."
    s2 = deck.slides.add_slide(deck.slide_layouts[5])
    s2.shapes.title.text = "Gantt Chart"
    s2.shapes.add_picture(io.BytesIO(samples.png_bytes()), Inches(0.5), Inches(1.5), Inches(9), Inches(5.5))
    buf = io.BytesIO()
    deck.save(buf)
    doc = extract_bytes(buf.getvalue(), "capstone.pptx")
    [warning] = [w for w in doc.warnings if "picture covers" in w]
    assert warning.startswith("slide(s) 2:")
