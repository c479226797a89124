"""What a walk over SheetJS's spreadsheet test files (2026-12-07) found refused, or read as raw markup: each file
is written here, small, in the format found."""

import io
import struct
import zipfile

import pytest

from rag.errors import ExtractionError
from rag.ingest.extract import extract_bytes


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in entries.items():
            zf.writestr(name, body)
    return buf.getvalue()


def test_an_excel_4_worksheet_is_read():
    """CRLFX5_2.XLS and CRLFR9_4.XLS (Excel 2.x-4.0, no OLE2 container) were "binary data (NUL bytes)"."""
    def rec(kind: int, body: bytes) -> bytes:
        return struct.pack("<HH", kind, len(body)) + body

    def label(r: int, c: int, text: str) -> bytes:
        raw = text.encode("latin-1")
        return rec(0x0004, struct.pack("<HH", r, c) + b"\x00\x00\x00" + bytes([len(raw)]) + raw)

    data = (rec(0x0009, struct.pack("<HH", 0x0007, 0x0010)) + rec(0x0000, struct.pack("<HHHH", 0, 2, 0, 2))
            + label(0, 0, "Item") + label(0, 1, "Price") + label(1, 0, "Bolt") + label(1, 1, "0.25 EUR") + rec(0x000A, b""))
    assert "| Bolt | 0.25 EUR |" in extract_bytes(data, "OLD.XLS").canonical


@pytest.mark.parametrize(("data", "name", "said"), [
    (_zip({"[Content_Types].xml": b"<Types/>", "xl/workbook.bin": b"\x83\x01\x00"}), "book.xlsb",
     "an Excel binary workbook (.xlsb), not read here; save it as .xlsx"),
    (_zip({"Index/Document.iwa": b"\x00", "Metadata/Properties.plist": b"<plist/>"}), "budget.numbers",
     "an Apple Numbers, Pages or Keynote file"),
    (b'<?xml version="1.0"?>\n<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
     b'office:mimetype="application/vnd.oasis.opendocument.spreadsheet"><office:body/></office:document>', "t.fods",
     "a flat OpenDocument file"),
    (b'<?xml version="1.0"?>\n<?mso-application progid="Excel.Sheet"?>\n<Workbook '
     b'xmlns="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet/></Workbook>', "t.xml",
     "an Excel or Word 2003 XML file"),
    (b"ID;PWXL;N;E\nC;Y1;X1;K\"foo\"\nE\n", "write.slk", "a SYLK spreadsheet (.slk)"),
])
def test_spreadsheets_not_read_here_are_named_with_what_to_do(data, name, said):
    # before: "a ZIP archive that is not one of the formats read here", or the markup indexed as text
    with pytest.raises(ExtractionError, match=said.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        extract_bytes(data, name)


# --------------------------------------------------------------------------- postlight/parser's saved news pages

_PARA = "<p>" + "The tyres of an airliner are inflated to 200 psi, six times a car's, and rarely burst on landing. " * 4 + "</p>"


def test_an_article_in_a_box_that_enables_modals_or_a_script_hook_is_read():
    """WIRED's article sat in "promo_status-promo", the New York Post's in "box article modal-enabled", a GitHub
    README in "js-code-nav-container", a BuzzFeed caption in "subbuzz__figure-footer": each was left out as furniture
    (WIRED's page was read as its ad-blocker notice)."""
    for wrapper in ("promo_status-promo", "box article modal-enabled", "Box js-code-nav-container"):
        page = (f"<html><head><title>Airplane tyres</title></head><body><div class='{wrapper}'><h1>Airplane tyres</h1>"
                f"{_PARA}</div><div class='site-footer'>Contact us</div></body></html>").encode()
        text = extract_bytes(page, "tyres.html").canonical
        assert "inflated to 200 psi" in text and "Contact us" not in text, wrapper
    page = (f"<html><body><article><h1>Mermaids</h1>{_PARA}<figure><img src='a.jpg'><div class='subbuzz__figure-footer'>"
            "The caption read: that is how I imagine mermaids.</div></figure></article></body></html>").encode()
    assert "how I imagine mermaids" in extract_bytes(page, "m.html").canonical


def test_a_share_box_that_enables_sharing_is_still_furniture():
    page = (f"<html><body><article><h1>Post</h1>{_PARA}<div class='sharedaddy sd-sharing-enabled'>Share this: Twitter"
            "</div></article></body></html>").encode()
    assert "Share this" not in extract_bytes(page, "p.html").canonical


def test_line_breaks_inside_pre_are_lines():
    """Medium's code listings use <br> inside <pre>: "// Method callboolean drawBorderTop = ..." put the statement
    inside the comment."""
    page = (f"<html><body><main><h1>Flags</h1>{_PARA}<pre>// Method call<br>boolean top = containsFlag(x);<br/>"
            "int b = <b>2</b>;</pre></main></body></html>").encode()
    assert "// Method call\nboolean top = containsFlag(x);\nint b = 2;" in extract_bytes(page, "code.html").canonical


def test_a_minified_doctype_and_a_section_label_h1():
    """bioRxiv's "<!doctypehtml>" page was read as text (its markup indexed); the Miami Herald's title was its
    section label "Business Monday", the first <h1>, not the headline the <title> names."""
    page = (b"<!doctypehtml><html><head><title>Sub-nucleosomal organization in urine cell-free DNA | bioRxiv</title>"
            b"</head><body><h1>Sub-nucleosomal organization in urine cell-free DNA</h1>" + _PARA.encode() + b"</body></html>")
    doc = extract_bytes(page, "biorxiv.org.html")
    assert doc.media_type == "text/html" and "<title>" not in doc.canonical
    page = (b"<html><head><title>From Metrorail to bike paths, this is what CEOs think of public transit | Miami Herald"
            b"</title></head><body><h1>Business Monday</h1><h1>From Metrorail to bike paths, this is what CEOs think of "
            b"public transit</h1>" + _PARA.encode() + b"</body></html>")
    assert extract_bytes(page, "herald.html").title == "From Metrorail to bike paths, this is what CEOs think of public transit"


# --------------------------------------------------------------------------- qpdf's test PDFs

def _pdf(pages: list[list[tuple[float, str]]]) -> bytes:
    import fitz

    doc = fitz.open()
    for lines in pages:
        page = doc.new_page(width=595, height=842)
        for y, text in lines:
            page.insert_text((72, y), text, fontsize=11)
    return doc.tobytes()


def test_a_margin_line_whose_numbers_are_no_page_counter_is_the_page_s_own_fact():
    """Four invoices in one PDF: each page's number and total sat in the header and footer zones and were dropped
    as running lines (digits were ignored), coverage 100 %, no warning; a page counter still goes."""
    invoices = [("1043", "1,250.00"), ("1051", "3,087.40"), ("1060", "9,912.15"), ("1072", "2,400.00")]
    pages = [[(40, f"Invoice {no}"), (300, f"Customer {k}: items as agreed in the framework contract of March."),
              (780, f"Total due: EUR {total}"), (815, f"Page {k + 1} of 4")] for k, (no, total) in enumerate(invoices)]
    text = extract_bytes(_pdf(pages), "invoices.pdf").canonical
    for no, total in invoices:
        assert f"Invoice {no}" in text and f"Total due: EUR {total}" in text
    assert "Page 2 of 4" not in text


def test_a_page_s_only_line_is_its_text_though_every_page_has_one():
    """qpdf's 11-pages.pdf ("Original page 5" alone on page 5) was read as "Original page 1": the other ten pages
    empty, their one line taken for a running header."""
    doc = extract_bytes(_pdf([[(40, f"Original page {k}")] for k in range(1, 12)]), "11-pages.pdf")
    assert all(f"Original page {k}" in doc.canonical for k in range(1, 12))


def test_a_pdf_without_its_header_is_called_damaged_not_something_else():
    # qpdf's issue-263.pdf opens "%PDFn": it was "not a PDF although named .pdf (the bytes look like application/pdf)"
    with pytest.raises(ExtractionError, match="damaged PDF: no PDF header"):
        extract_bytes(b"%PDFn\r\ntrailer\r\n<</Root <<5 0 R>> >>\r\n", "issue-263.pdf")


def test_a_sticky_note_is_named_in_a_warning_not_read():
    """qpdf's comment-annotation.pdf: a note saying "Salad" was lost without a word; a comment is named, not read."""
    import fitz

    doc = fitz.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Potato harvest figures for the northern fields.", fontsize=11)
    page.add_text_annot((300, 100), "Salad")
    got = extract_bytes(doc.tobytes(), "notes.pdf")
    assert "Salad" not in got.canonical
    assert any(w.startswith("not read: 1 comment(s)") for w in got.warnings)


def test_consecutive_invoice_numbers_are_no_page_counter_but_a_journal_s_page_number_is():
    """The walk's four invoices numbered 1043-1046 on pages 1-4 count like pages; a counter with words stands within
    60 of the page number, so they are the pages' facts. A number alone ("1125", a journal's page) still goes."""
    pages = [[(40, f"Invoice {1043 + k}"), (300, f"Customer {k}: items as agreed in the framework contract."),
              (815, f"{1125 + k}")] for k in range(4)]
    text = extract_bytes(_pdf(pages), "invoices.pdf").canonical
    assert all(f"Invoice {1043 + k}" in text for k in range(4))
    assert "1126" not in text
