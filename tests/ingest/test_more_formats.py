"""More formats with locators, and true refusal reasons (issue 28, items 4-5): OpenDocument text, spreadsheet
and presentation (odfdo); FB2, XPS, CBZ and MOBI through PyMuPDF with page locators; an encrypted OOXML file is
"password-protected", not a "legacy Office file". Small files are made here; the handed ones are tried too."""

from __future__ import annotations

import io
import zipfile

import pymupdf
import pytest
from odfdo import Cell, Document, DrawPage, Frame, Header, List, Paragraph, Row, Table

from rag.errors import ExtractionError
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.ingest.sniff import ENCRYPTED_OOXML, sniff
from rag.types import LocatorKind, MediaType


def _save(doc: Document) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def test_odt_headings_paragraphs_lists_and_tables():
    doc = Document("text")
    body = doc.body
    body.append(Header(1, "Installation"))
    body.append(Paragraph("Run the installer twice on a new machine."))
    body.append(List(["Download the package", "Check its checksum"]))
    table = Table("Sizes", width=2, height=2)
    table.set_value((0, 0), "Model")
    table.set_value((1, 0), "Weight")
    table.set_value((0, 1), "W-200")
    table.set_value((1, 1), "12 kg")
    body.append(table)
    got = extract_bytes(_save(doc), "guide.odt")
    assert got.media_type == MediaType.ODT.value
    assert [h.title for h in got.headings] == ["1. Installation"]  # odfdo's template numbers headings "1."
    assert "Run the installer twice on a new machine." in got.canonical
    assert "- Download the package\n- Check its checksum" in got.canonical
    assert "| W-200 | 12 kg |" in got.canonical
    chunks = chunk_document(got, count_tokens=lambda t: len(t.split()))
    loc = chunks[0].locator
    assert loc.kind == LocatorKind.PARAGRAPH and loc.scope == "1. Installation" and loc.first == 1


def test_ods_rows_keep_their_sheet_row_numbers_and_repeated_empty_rows_cost_nothing():
    doc = Document("spreadsheet")
    sheet = Table("Q1 sales")
    for values in (["Region", "Total"], ["North", "1200"], ["South", "950"]):
        row = Row()
        for v in values:
            row.append(Cell(v))
        sheet.append(row)
    blank = Row()
    blank.set_attribute("table:number-rows-repeated", "1048000")  # a styled band repeated to the sheet's end
    sheet.append(blank)
    last = Row()
    last.append(Cell("Total"))
    last.append(Cell("2150"))
    sheet.append(last)
    doc.body.append(sheet)
    got = extract_bytes(_save(doc), "sales.ods")
    assert got.media_type == MediaType.ODS.value
    assert "| North | 1200 |" in got.canonical and "| Total | 2150 |" in got.canonical
    rows = [p for p in got.parts if p.kind == LocatorKind.ROWS]
    assert [p.number for p in rows] == [1, 2, 3, 1048004] and rows[0].scope == "Q1 sales"


def test_odp_slides_titles_bullets_notes_and_no_footer():
    doc = Document("presentation")
    for template in doc.body.get_draw_pages():  # the new document's empty first page
        doc.body.delete(template)
    page = DrawPage("p1", name="Slide 1")
    page.append(Frame.text_frame("Quarterly results", size=("20cm", "2cm"), position=("1cm", "1cm"),
                                 presentation_class="title"))
    page.append(Frame.text_frame("Revenue grew by 12 percent", size=("20cm", "5cm"), position=("1cm", "4cm")))
    page.append(Frame.text_frame("ACME confidential", size=("8cm", "1cm"), position=("1cm", "18cm"),
                                 presentation_class="footer"))
    doc.body.append(page)
    got = extract_bytes(_save(doc), "results.odp")
    assert got.media_type == MediaType.ODP.value
    assert got.headings[0].title == "Quarterly results"
    assert "Revenue grew by 12 percent" in got.canonical and "confidential" not in got.canonical
    assert got.parts[0].kind == LocatorKind.SLIDE and got.parts[0].number == 1


def test_the_handed_ods_is_read(cases_dir):
    path = cases_dir / "wild" / "calamine_issues.ods"
    if not path.exists():
        pytest.skip("../shared/cases/wild not present")
    got = extract_bytes(path.read_bytes(), path.name)
    assert got.media_type == MediaType.ODS.value and "# datatypes" in got.canonical


FB2 = """<?xml version="1.0" encoding="UTF-8"?>
<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0">
<description><title-info><book-title>The Lighthouse Keeper</book-title></title-info></description>
<body><section><title><p>Chapter One</p></title>
<p>The lighthouse keeper climbed the 137 steps every evening at dusk.</p>
<p>He lit the lamp and wrote the weather in his log.</p></section></body></FictionBook>
"""


def test_fb2_is_an_ebook_with_page_locators_not_a_text_file():
    got = extract_bytes(FB2.encode(), "keeper.fb2")
    assert got.media_type == MediaType.FB2.value
    assert "climbed the 137 steps" in got.canonical and "<p>" not in got.canonical
    assert got.pages and got.page_at(got.canonical.index("137 steps")) == 1


def test_cbz_pages_are_read_by_ocr():
    from rag.ingest.ocr import available

    if not available():
        pytest.skip("OCR engine not installed")
    src = pymupdf.open()
    src.new_page(width=400, height=200).insert_text((30, 100), "Page one of the comic", fontsize=24)
    png = src[0].get_pixmap(dpi=100).tobytes("png")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("001.png", png)
    got = extract_bytes(buf.getvalue(), "comic.cbz")
    assert got.media_type == MediaType.CBZ.value and "comic" in got.canonical.lower() and got.ocr_pages == (1,)


def test_mobi_is_recognised_by_its_header():
    data = b"\x00" * 60 + b"BOOKMOBI" + b"\x00" * 100
    assert sniff(data, "book.mobi") == MediaType.MOBI.value
    with pytest.raises(ExtractionError, match="MOBI e-book"):  # a header alone is a damaged book, named as such
        extract_bytes(data, "book.mobi")


def test_the_handed_xps_and_fb2(cases_dir):
    wild = cases_dir / "wild"
    if not (wild / "pymupdf_test_open2.xps").exists():
        pytest.skip("../shared/cases/wild not present")
    xps = extract_bytes((wild / "pymupdf_test_open2.xps").read_bytes(), "test_open2.xps")
    assert xps.media_type == MediaType.XPS.value and "optional dependencies" in xps.canonical.lower() and xps.pages
    fb2 = extract_bytes((wild / "pymupdf_test_open2.fb2").read_bytes(), "test_open2.fb2")
    assert fb2.media_type == MediaType.FB2.value and "<FictionBook" not in fb2.canonical


def test_an_encrypted_office_file_is_password_protected_not_legacy(cases_dir):
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500 + "EncryptedPackage".encode("utf-16-le") + b"\x00" * 64
    assert sniff(ole, "book.xlsx") == ENCRYPTED_OOXML
    with pytest.raises(ExtractionError, match="password-protected"):
        extract_bytes(ole, "book.xlsx")
    legacy = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500 + "WordDocument".encode("utf-16-le")
    with pytest.raises(ExtractionError, match="legacy Office file"):
        extract_bytes(legacy, "old.doc")
    path = cases_dir / "wild" / "calamine_pass_protected.xlsx"
    if path.exists():
        with pytest.raises(ExtractionError, match="password-protected"):
            extract_bytes(path.read_bytes(), path.name)


def test_a_billion_laughs_epub_is_refused_for_what_it_is():
    lol = ('<?xml version="1.0"?><!DOCTYPE package [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
           '<package xmlns="http://www.idpf.org/2007/opf" version="2.0"><metadata>&b;</metadata></package>')
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" '
                    'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                    '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>')
        zf.writestr("content.opf", lol)
    with pytest.raises(ExtractionError, match=r"content.opf declares XML entities .*billion laughs"):
        extract_bytes(buf.getvalue(), "lol.epub")


def _hiding_styles(doc: Document) -> None:
    """A paragraph style and a text style that hide their text, and a paragraph style inheriting the first."""
    from odfdo import Element

    auto = doc.content.get_element("//office:automatic-styles")
    for xml in ('<style:style style:name="Gone" style:family="paragraph">'
                '<style:text-properties text:display="none"/></style:style>',
                '<style:style style:name="GoneToo" style:family="paragraph" style:parent-style-name="Gone"/>',
                '<style:style style:name="Tiny" style:family="text"><style:text-properties fo:font-size="1pt"/>'
                '</style:style>'):
        auto.append(Element.from_tag(xml))


def test_odt_text_its_styles_hide_is_left_out_and_reported():
    """A new user's walk (2026-12-07): pandoc's hiddenTextByStyle.odt, one paragraph styled display:none, was
    indexed and became the key passage."""
    from odfdo import Span

    doc = Document("text")
    _hiding_styles(doc)
    body = doc.body
    body.append(Paragraph("The gate code is 4411."))
    body.append(Paragraph("The old gate code was 9000.", style="Gone"))
    body.append(Paragraph("The spare key sits under the mat.", style="GoneToo"))
    shown = Paragraph("Visitors sign in at the desk. ")
    shown.append(Span("Staff use door 7.", style="Tiny"))
    body.append(shown)
    got = extract_bytes(_save(doc), "house.odt")
    assert "4411" in got.canonical and "Visitors sign in at the desk." in got.canonical
    for unseen in ("9000", "spare key", "door 7"):
        assert unseen not in got.canonical
    assert any("hidden text left out: 3" in w and "display none" in w and "under 2 pt" in w for w in got.warnings)
    assert got.coverage == 1.0  # what was left out for a reason is not a loss


def test_an_odt_of_hidden_text_only_says_so():
    doc = Document("text")
    _hiding_styles(doc)
    doc.body.append(Paragraph("Hidden text", style="Gone"))
    with pytest.raises(ExtractionError, match="no visible text in this ODT: hidden text left out"):
        extract_bytes(_save(doc), "hidden.odt")


def test_odt_paragraph_numbers_count_the_paragraphs_a_reader_sees():
    """tika's testODT-TIKA-6000.odt (a new user's walk, 2026-12-07): empty paragraphs were counted, so "¶ 9-12"
    was cited for what a reader counts as the 4th to 6th paragraph of the section."""
    doc = Document("text")
    body = doc.body
    body.append(Header(1, "Loan rules"))
    for text in ("Click the menu.", "", "", "This section sets the rules.", "", "Example: 21,7 means 21 days."):
        body.append(Paragraph(text))
    got = extract_bytes(_save(doc), "manual.odt")
    at = got.canonical.index("Example: 21,7")
    part = next(p for p in got.parts if p.kind == LocatorKind.PARAGRAPH and p.start <= at < p.end)
    assert part.scope.endswith("Loan rules") and part.number == 3
