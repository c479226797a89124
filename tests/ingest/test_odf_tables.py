"""OpenDocument tables and comments as a reader sees them: a label merged down over rows stays with each row, a
table inside a cell is read in that cell, and comments in the margin are named in a warning, never read as text.
Every file is written here with odfdo."""

from __future__ import annotations

import io

from odfdo import Document, Element, Paragraph

from rag.ingest.extract import extract_bytes

_NS = ('xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
       'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
       'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
       'xmlns:dc="http://purl.org/dc/elements/1.1/"')


def _save(doc: Document) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _cell(text: str, **attrs: str) -> str:
    extra = "".join(f' table:{k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f"<table:table-cell{extra}><text:p>{text}</text:p></table:table-cell>"


_COVERED = "<table:covered-table-cell/>"


def _table(rows: list[str]) -> Element:
    body = "".join(f"<table:table-row>{r}</table:table-row>" for r in rows)
    return Element.from_tag(f'<table:table {_NS} table:name="T"><table:table-column table:number-columns-repeated="3"/>'
                            f"{body}</table:table>")


def test_a_label_merged_down_is_repeated_in_each_row_it_covers():
    doc = Document("text")
    doc.body.append(Paragraph("Course schedule"))
    doc.body.append(_table([
        _cell("Week") + _cell("Day") + _cell("Topic"),
        _cell("Week 4", number_rows_spanned="2") + _cell("Tuesday") + _cell("Sorting"),
        _COVERED + _cell("Thursday") + _cell("Hash tables"),
        _cell("Week 5") + _cell("Tuesday") + _cell("Graphs"),
        _cell("A long note " * 10, number_rows_spanned="2") + _cell("Friday") + _cell("Review"),
        _COVERED + _cell("Saturday") + _cell("Exam"),
    ]))
    text = extract_bytes(_save(doc), "schedule.odt").canonical
    assert "| Week 4 | Thursday | Hash tables |" in text  # before: "|  | Thursday | Hash tables |"
    assert "| Week 5 | Tuesday | Graphs |" in text  # the merge ends with the rows it spans
    assert "|  | Saturday | Exam |" in text  # a long cell is not repeated


def test_a_table_inside_a_cell_is_read_in_its_cell():
    inner = (f'<table:table {_NS} table:name="Inner"><table:table-row>{_cell("Min")}{_cell("8")}</table:table-row>'
             f'<table:table-row>{_cell("Max")}{_cell("64")}</table:table-row></table:table>')
    doc = Document("text")
    doc.body.append(_table([
        _cell("Setting") + _cell("Values"),
        _cell("Password length") + f"<table:table-cell>{inner}</table:table-cell>",
        _cell("Lockout") + _cell("10 tries"),
    ]))
    text = extract_bytes(_save(doc), "settings.odt").canonical
    assert "| Password length | Min 8 Max 64 |" in text
    lines = text.splitlines()
    row = next(ln for ln in lines if ln.startswith("| Password length"))
    assert "Min" in row and "64" in row  # before: the inner rows were rows of the outer table, under its header
    assert not any(ln.startswith("| Min") for ln in lines)


def test_comments_are_named_in_a_warning_and_not_read():
    doc = Document("text")
    para = Paragraph("The deadline is Friday.")
    para.append(Element.from_tag(f"<office:annotation {_NS}><dc:creator>Ann</dc:creator>"
                                 "<text:p>Check with legal first</text:p></office:annotation>"))
    doc.body.append(para)
    got = extract_bytes(_save(doc), "memo.odt")
    assert "Check with legal" not in got.canonical
    assert any("1 comment(s)" in w for w in got.warnings)
    plain = Document("text")
    plain.body.append(Paragraph("No comments here."))
    assert not any("comment" in w for w in extract_bytes(_save(plain), "plain.odt").warnings)


_CHART = ('<?xml version="1.0" encoding="UTF-8"?><office:document-content '
          'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:chart="urn:oasis:names:tc:opendocument:xmlns:chart:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3"><office:body>'
          '<office:chart><chart:chart chart:class="chart:bar"><chart:title><text:p>Sales by quarter</text:p>'
          '</chart:title><chart:plot-area><chart:axis chart:dimension="y"><chart:title><text:p>Units sold</text:p>'
          '</chart:title></chart:axis></chart:plot-area><table:table table:name="local-table"><table:table-header-rows>'
          '<table:table-row><table:table-cell/><table:table-cell><text:p>Widgets</text:p></table:table-cell>'
          '</table:table-row></table:table-header-rows><table:table-rows>'
          '<table:table-row><table:table-cell><text:p>Q1</text:p></table:table-cell><table:table-cell '
          'office:value-type="float" office:value="59"><text:p>59</text:p></table:table-cell></table:table-row>'
          '<table:table-row><table:table-cell><text:p>Q2</text:p></table:table-cell><table:table-cell '
          'office:value-type="float" office:value="41"><text:p>41</text:p></table:table-cell></table:table-row>'
          '</table:table-rows></table:table></chart:chart></office:chart></office:body></office:document-content>')


def _with_chart(doc: Document, anchor) -> bytes:
    anchor.append(Element.from_tag(
        '<draw:frame xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
        'xmlns:xlink="http://www.w3.org/1999/xlink" svg:width="10cm" svg:height="6cm" '
        'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0">'
        '<draw:object xlink:href="./Object 1" xlink:type="simple" xlink:show="embed"/></draw:frame>'))
    doc.set_part("Object 1/content.xml", _CHART.encode())
    doc.manifest.add_full_path("Object 1/", "application/vnd.oasis.opendocument.chart")
    doc.manifest.add_full_path("Object 1/content.xml", "text/xml")
    return _save(doc)


def test_an_embedded_chart_is_read_where_it_stands():
    """LibreOffice stores every chart as an object of the package (odfpy's emb_spreadsheet.odp, a new user's walk,
    2026-12-07: a slide's table kept only its title, nothing said)."""
    doc = Document("text")
    para = Paragraph("The first quarter sold best.")
    doc.body.append(para)
    text = extract_bytes(_with_chart(doc, para), "report.odt").canonical
    assert "Sales by quarter" in text and "Units sold" in text
    assert "|  | Widgets |\n| --- | --- |\n| Q1 | 59 |\n| Q2 | 41 |" in text
    sheet = Document("spreadsheet")
    table = Element.from_tag(f'<table:table {_NS} table:name="Data"><table:table-row>{_cell("Quarter")}'
                             f'{_cell("Units")}</table:table-row><table:table-row>{_cell("Q1")}{_cell("59")}'
                             "</table:table-row></table:table>")
    sheet.body.append(table)
    cell = table.get_elements("descendant::table:table-cell")[0]
    text = extract_bytes(_with_chart(sheet, cell), "sales.ods").canonical
    assert "# Data" in text and "Sales by quarter" in text and "| Q2 | 41 |" in text


def test_an_object_shown_in_several_frames_is_read_once():
    """A review (2026-12-07): one 1,000-row object placed in 50 frames made 50,000 rows, past every reader limit."""
    doc = Document("text")
    paras = [Paragraph(f"Frame {k} shows the sales chart.") for k in range(3)]
    for para in paras:
        doc.body.append(para)
    for para in paras[1:]:
        para.append(Element.from_tag(
            '<draw:frame xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
            'xmlns:xlink="http://www.w3.org/1999/xlink"><draw:object xlink:href="./Object 1"/></draw:frame>'))
    text = extract_bytes(_with_chart(doc, paras[0]), "three.odt").canonical
    assert text.count("| Q1 | 59 |") == 1 and text.count("Frame 2 shows") == 1


def test_a_sheet_hidden_by_its_style_and_hidden_rows_and_columns_are_not_evidence():
    """SheetJS's sheet_visibility.ods and AutoFilter.ods (a walk, 2026-12-07): a sheet is hidden by its table style
    (``table:display="false"``), rows filtered out or collapsed and collapsed columns are not seen by a reader; the
    ODS reader indexed all of them (the XLSX reader left them out)."""
    doc = Document("spreadsheet")
    doc.content.get_element("//office:automatic-styles").append(Element.from_tag(
        '<style:style xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" style:name="taHidden" style:family="table">'
        '<style:table-properties table:display="false"/></style:style>'))
    shown = Element.from_tag(
        f'<table:table {_NS} table:name="Prices"><table:table-column/>'
        '<table:table-column table:visibility="collapse"/><table:table-column/>'
        f'<table:table-row>{_cell("Item")}{_cell("Cost")}{_cell("Price")}</table:table-row>'
        f'<table:table-row>{_cell("Bolt")}{_cell("0.11")}{_cell("0.25")}</table:table-row>'
        f'<table:table-row table:visibility="filter">{_cell("Nut")}{_cell("0.05")}{_cell("0.15")}</table:table-row>'
        f'<table:table-row table:visibility="collapse">{_cell("Washer")}{_cell("0.01")}{_cell("0.05")}</table:table-row>'
        '</table:table>')
    secret = Element.from_tag(f'<table:table {_NS} table:name="Margins" table:style-name="taHidden">'
                              f'<table:table-row>{_cell("Secret margin")}{_cell("56%")}</table:table-row></table:table>')
    doc.body.append(shown)
    doc.body.append(secret)
    got = extract_bytes(_save(doc), "prices.ods")
    assert "| Bolt | 0.25 |" in got.canonical
    for unseen in ("Nut", "Washer", "0.11", "Secret margin", "Margins"):
        assert unseen not in got.canonical
    assert "hidden sheets left out: Margins; never indexed or read by the model" in got.warnings
    assert any("8 cells (6 in hidden rows, 2 in hidden columns)" in w for w in got.warnings)
    assert got.coverage is None or got.coverage >= 0.99
