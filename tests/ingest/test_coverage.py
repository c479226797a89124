"""The independent coverage audit of issue 37 (rag/ingest/coverage.py, coverage_ooxml.py): what a person sees,
read from the raw XML, against the canonical text; a loss is named in a warning, the document still indexed."""

from __future__ import annotations

import dataclasses

import ooxml_samples as S
import openpyxl
import pptx
import pytest
from ooxml_samples import p

from rag.ingest import coverage
from rag.ingest.extract import extract_bytes, with_coverage
from rag.ingest.limits import Limits
from rag.ingest.office.coverage_ooxml import docx_seen, pptx_seen, xlsx_seen

COVER = ('<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val="Cover Pages"/></w:docPartObj></w:sdtPr>'
         "<w:sdtContent>" + "".join(p(f"Guide paragraph {i} explains the forklift battery charging rules in detail.")
                                    for i in range(40)) + "</w:sdtContent></w:sdt>")


def _guide() -> bytes:
    return S.save(S.docx_with_body(COVER + p("References") + p("Only this last section was read once.")))


def test_a_read_document_is_covered_and_says_so():
    doc = extract_bytes(_guide(), "guide.docx")
    assert doc.coverage == 1.0
    assert not any("coverage" in w for w in doc.warnings)


def test_text_lost_inside_a_content_control_is_named_in_a_warning():
    data = _guide()
    doc = extract_bytes(data, "guide.docx")
    lost = dataclasses.replace(doc, canonical=doc.canonical[doc.canonical.index("References"):], coverage=None,
                               warnings=())
    got = with_coverage(lost, data, Limits())
    assert got.coverage < 0.1
    (warning,) = got.warnings
    assert warning.startswith("text coverage 2 % of the words a reader sees: about 3,")
    assert "characters inside a content control were not read" in warning


def test_the_audit_reads_notes_headers_text_boxes_and_skips_hidden_and_deleted_text():
    import docx

    d = S.docx_with_body(
        '<w:p><w:r><w:t xml:space="preserve">Seen </w:t></w:r><w:r><w:rPr><w:vanish/></w:rPr><w:t>SECRET</w:t>'
        '</w:r><w:del w:id="1" w:author="a"><w:r><w:delText>GONE</w:delText></w:r></w:del></w:p>')
    d.sections[0].header.paragraphs[0].text = "Running header text"
    assert isinstance(d, docx.document.Document)
    seen = docx_seen(S.save(d), Limits())
    assert [(s.place, s.text) for s in seen] == [("body", "Seen"), ("header or footer", "Running header text")]


def test_pptx_and_xlsx_auditors_see_slides_notes_smartart_and_cells():
    deck = pptx.Presentation()
    s = deck.slides.add_slide(deck.slide_layouts[1])
    s.shapes.title.text = "Plan"
    s.placeholders[1].text_frame.text = "Decide early"
    s.notes_slide.notes_text_frame.text = "Say it slowly"
    data = S.with_smartart(S.save(deck), 1, [("Draw flows", [])])
    places = {(x.place, x.text) for x in pptx_seen(data, Limits())}
    assert {("slide", "Plan"), ("slide", "Decide early"), ("speaker notes", "Say it slowly"),
            ("SmartArt", "Draw flows")} <= places
    assert extract_bytes(data, "plan.pptx").coverage == 1.0
    wb = openpyxl.Workbook()
    wb.active.append(["Part", 12])
    hidden = wb.create_sheet("Secret")
    hidden.append(["hidden sheet text"])
    hidden.sheet_state = "hidden"
    book = S.save(wb)
    assert [(x.place, x.text) for x in xlsx_seen(book, Limits())] == [("cell", "Part")]
    assert extract_bytes(book, "b.xlsx").coverage == 1.0


def test_judging_counts_repeated_pieces_once_and_words_as_a_multiset():
    seen = [coverage.Seen("slide", "SELECT name FROM users")] * 3 + [coverage.Seen("table", "name name")]
    got = coverage.judge(seen, "SELECT name FROM users")
    assert (got.seen, got.found, got.missed) == (6, 4, (("table", 10),))
    assert coverage.judge([], "x").share == 1.0


def test_an_unreadable_file_skips_the_audit_not_the_document():
    doc = extract_bytes(_guide(), "guide.docx")
    assert coverage.audit(doc, b"PK\x05\x06" + b"\0" * 18, Limits()) is None


@pytest.mark.parametrize("limit", [3])  # _rels/.rels (the main part), styles.xml, then document.xml
def test_the_audit_is_bounded_in_parts(monkeypatch, limit):
    from rag.ingest.office import coverage_ooxml

    monkeypatch.setattr(coverage_ooxml, "MAX_PARTS", limit)
    d = S.docx_with_body(p("Body text"))
    d.sections[0].header.paragraphs[0].text = "Header never read"
    assert [s.text for s in docx_seen(S.save(d), Limits())] == ["Body text"]


def _sheet_book(sheet_xml: str, shared: list[str]) -> bytes:
    """A minimal XLSX: one sheet of the given XML and shared strings (what the auditor reads, nothing else)."""
    import io
    import zipfile

    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/workbook.xml", f'<workbook {ns} {rel}><sheets><sheet name="Data" sheetId="1" r:id="rId1"/>'
                                      "</sheets></workbook>")
        z.writestr("xl/_rels/workbook.xml.rels",
                   '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                   '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
                   'worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
        z.writestr("xl/sharedStrings.xml", f"<sst {ns}>" + "".join(f"<si><t>{t}</t></si>" for t in shared) + "</sst>")
        z.writestr("xl/worksheets/sheet1.xml", f"<worksheet {ns}>{sheet_xml}</worksheet>")
    return buf.getvalue()


def test_the_xlsx_auditor_streams_its_sheets_and_keeps_the_visibility_rules():
    import tracemalloc

    cells = ('<cols><col min="2" max="2" hidden="1"/></cols><sheetData>'
             '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>Inline'
             '</t></is></c><c r="D1" t="str"><f>A1</f><v>Formula text</v></c></row>'
             '<row r="2" hidden="1"><c r="A2" t="s"><v>2</v></c></row>')
    rows = "".join(f'<row r="{r}">' + "".join(f'<c r="{col}{r}"><v>{r * 7}</v></c>' for col in "ABCDEFGH") + "</row>"
                   for r in range(3, 5_003))
    book = _sheet_book(cells + rows + '<row r="5003"><c r="A5003" t="s"><v>3</v></c></row></sheetData>',
                       ["Camera", "Hidden column", "Hidden row", "Last row"])
    tracemalloc.start()
    seen = xlsx_seen(book, Limits())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [s.text for s in seen] == ["Camera", "Inline", "Formula text", "Last row"]
    # 5,000 rows of numbers (a 1.2 MB sheet, 45,000 elements): parsed whole, the audit's traced peak was 24 MB;
    # streamed it is 0.5 MB (a row at a time)
    assert peak < 4 * 2**20, peak
