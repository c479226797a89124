"""Issue 37's XLSX kinds on small generated workbooks: title rows as the sheet's caption, multi-row headers
joined (and repeated in every chunk), charts' titles and labels, text boxes (rag/ingest/office/sheets.py, ooxml.py)."""

from __future__ import annotations

import io
import zipfile

import ooxml_samples as S
import openpyxl
from openpyxl.chart import BarChart, Reference

from rag.ingest.chunk import table_header
from rag.ingest.extract import extract_bytes

HEADER = ("| County | Bachelor's degree or higher / Percent | Bachelor's degree or higher / Margin of error "
          "| Population |")


def _census():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S1501"
    ws["A1"] = "Educational attainment by county, 2019"
    ws["A2"], ws["B2"], ws["D2"] = "County", "Bachelor's degree or higher", "Population"
    ws.merge_cells("B2:C2")
    ws.merge_cells("D2:D3")
    ws["B3"], ws["C3"] = "Percent", "Margin of error"
    for i in range(60):
        ws.append([f"County {i}", 20 + i / 10, 1.5, 1000 + i])
    return wb


def test_title_rows_are_the_caption_and_two_header_rows_are_joined():
    wb = _census()
    wb.properties.title = "Some 2002 edition"  # stale: not shown anywhere
    doc = extract_bytes(S.save(wb), "census.xlsx")
    text = doc.canonical
    assert "# S1501\n\nEducational attainment by county, 2019\n\n" + HEADER + "\n| --- |" in text
    assert "| County 0 | 20 | 1.5 | 1000 |" in text
    assert doc.title == "Educational attainment by county, 2019"
    late = text.index("| County 59 |")
    assert table_header(text, late)[0].startswith(HEADER)
    rows = {p.number for p in doc.parts}
    assert {1, 2, 4, 63} <= rows


def test_a_row_of_years_under_merged_group_labels_is_part_of_the_header():
    """PhpSpreadsheet's ComboChart1.xlsx (a new user's walk, 2026-12-07): "INVENTORY" and "VALUATION" merged over
    "Item | Project Cost | Project Year | 2019 | 2020 | 2021" were the header, and the row of real column names a
    row of data: the row's numbers are years rising left to right, labels of the columns under them."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["B1"] = "INVENTORY", "VALUATION"
    ws.merge_cells("B1:F1")
    ws.append(["Item", "Project Cost", "Project Year", 2019, 2020, 2021])
    ws.append(["Solar Panels at City Hall", "$100,000", 2020, None, "$100,000", None])
    ws.append(["New Benches", "$20,000", 2019, "$20,000", None, None])
    text = extract_bytes(S.save(wb), "plan.xlsx").canonical
    assert ("| INVENTORY / Item | VALUATION / Project Cost | VALUATION / Project Year | VALUATION / 2019 | VALUATION / 2020 "
            "| VALUATION / 2021 |\n| --- |" in text)
    assert "| Solar Panels at City Hall | $100,000 | 2020 |  | $100,000 |  |" in text


def test_a_plain_table_is_unchanged():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Part", "Count"])
    ws.append(["M4 bolt", 1250])
    ws.append(["M5 bolt", 800])
    assert "| Part | Count |\n| --- | --- |\n| M4 bolt | 1250 |" in extract_bytes(S.save(wb), "p.xlsx").canonical


def _with_text_box(data: bytes, text: str) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    name = next(n for n in src.namelist() if n.startswith("xl/drawings/drawing") and n.endswith(".xml"))
    xml = src.read(name).decode("utf-8")
    box = ('<xdr:twoCellAnchor xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing" '
           f'xmlns:a="{S.A_NS}"><xdr:from><xdr:col>5</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>1</xdr:row>'
           "<xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>9</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>6"
           '</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to><xdr:sp><xdr:nvSpPr><xdr:cNvPr id="9" name="TextBox 1"/>'
           '<xdr:cNvSpPr txBox="1"/></xdr:nvSpPr><xdr:spPr/><xdr:txBody><a:bodyPr/><a:p><a:r><a:t>'
           f"{text}</a:t></a:r></a:p></xdr:txBody></xdr:sp><xdr:clientData/></xdr:twoCellAnchor>")
    end = xml.rindex("</")
    return S.replace_part(data, name, xml[:end] + box + xml[end:])


def test_chart_titles_labels_and_text_boxes_are_read():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Dashboard"
    ws.append(["Area", "Score"])
    for area, score in (("Storage", 4), ("Crypto", 3), ("Network", 5)):
        ws.append([area, score])
    chart = BarChart()
    chart.title = "MASVS Compliance Diagram - Android"
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=4), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=4))
    ws.add_chart(chart, "D2")
    data = _with_text_box(S.save(wb), "Application Security Verification Standard 4.0.1")
    text = extract_bytes(data, "dash.xlsx").canonical
    assert "Chart: MASVS Compliance Diagram - Android" in text
    assert "Application Security Verification Standard 4.0.1" in text
    assert text.index("| Network | 5 |") < text.index("Chart: MASVS")


def test_tables_side_by_side_are_two_tables_and_a_form_stays_one():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Orders"
    ws.append(["Order", "Customer", "Amount", None, "Orders", 30])
    ws.append(["A-1", "Ames", 120, None, "Total", 4410])
    ws.append(["A-2", "Baker", 80, None, "Average", 147])
    for i in range(3, 31):
        ws.append([f"A-{i}", f"Customer {i}", 100 + i])
    doc = extract_bytes(S.save(wb), "orders.xlsx")
    text = doc.canonical
    # before: "| A-1 | Ames | 120 |  | Total | 4410 |", the summary glued to the first orders under their header
    assert "| Order | Customer | Amount |\n| --- | --- | --- |\n| A-1 | Ames | 120 |" in text
    assert "| Orders | 30 |\n| --- | --- |\n| Total | 4410 |\n| Average | 147 |" in text
    rows = [p for p in doc.parts if p.kind.value == "rows"]
    assert {p.anchor for p in rows} == {"A:C", "E:F"}
    form = openpyxl.Workbook()  # labels, an empty column, values filled here and there: one table
    fs = form.active
    for i, (label, value) in enumerate([("Client name:", "Acme"), ("Location:", None), ("Start date:", None),
                                         ("Scope:", "All functions"), ("Level:", None), ("Tester:", "R. Roe")]):
        fs.cell(i + 1, 1, label)
        fs.cell(i + 1, 2, "note" if i == 0 else None)
        fs.cell(i + 1, 4, value)
        fs.cell(i + 1, 5, "x" if value else None)
    assert "| Scope: |  |  | All functions | x |" in extract_bytes(S.save(form), "form.xlsx").canonical
    shipped = openpyxl.Workbook()  # one header row over both blocks: one table (a reviewer's probe, 2026-12-07)
    ss = shipped.active
    ss.append(["order", "customer", None, "carrier", "tracking"])
    for i in range(8):
        ss.append([f"A-{i}", f"Customer {i}", None] + (["UPS", f"1Z{i}"] if i < 3 else []))
    assert "| A-1 | Customer 1 |  | UPS | 1Z1 |" in extract_bytes(S.save(shipped), "orders.xlsx").canonical


def test_a_part_named_in_another_case_or_missing_is_mended_not_refused():
    """Go's excelize writes xl/SharedStrings.xml, another writer declares a shared-strings part it never stores: Excel
    opens both; they were refused as damaged (a new user's walk, 2026-12-07)."""
    from rag.ingest.office.xlsx_package import repaired

    wb = openpyxl.Workbook()  # openpyxl writes its strings inline: the parts are added here
    wb.active.append(["Region", "Units"])
    wb.active.append(["North", 59])
    data = S.save(wb)
    sst = b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0" uniqueCount="0"/>'
    cased = io.BytesIO()
    with zipfile.ZipFile(cased, "w") as z:
        for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
            z.writestr(info.filename, zipfile.ZipFile(io.BytesIO(data)).read(info))
        z.writestr("xl/SharedStrings.xml", sst)
    missing = KeyError("There is no item named 'xl/sharedStrings.xml' in the archive")
    mended, what = repaired(cased.getvalue(), missing)
    assert what == "xl/SharedStrings.xml read as xl/sharedStrings.xml"
    assert "xl/sharedStrings.xml" in zipfile.ZipFile(io.BytesIO(mended)).namelist()
    assert "| North | 59 |" in extract_bytes(mended, "excelize.xlsx").canonical
    mended, what = repaired(data, missing)
    assert what == "xl/sharedStrings.xml missing, read as empty"
    assert zipfile.ZipFile(io.BytesIO(mended)).read("xl/sharedStrings.xml").startswith(b"<?xml")
    assert repaired(data, KeyError("There is no item named 'xl/worksheets/sheet9.xml' in the archive")) is None


def test_a_styles_part_without_cell_style_formats_is_mended():
    """SheetJS's xlsx-stream-d-date-cell.xlsx (a streaming writer's file, which Excel opens) has no ``cellStyleXfs``;
    openpyxl failed on it with an IndexError and the file was refused as damaged (a walk, 2026-12-07)."""
    wb = openpyxl.Workbook()
    wb.active.append(["Duration", 1.5])
    wb.active["B1"].number_format = "[h]:mm:ss"
    data = S.save(wb)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            body = zin.read(info)
            if info.filename == "xl/styles.xml":
                start, end = body.index(b"<cellStyleXfs"), body.index(b"</cellStyleXfs>") + len(b"</cellStyleXfs>")
                body = body[:start] + body[end:]
            zout.writestr(info.filename, body)
    got = extract_bytes(out.getvalue(), "stream.xlsx")
    assert "| Duration | 36:00:00 |" in got.canonical
    assert any("no cell style formats" in w for w in got.warnings)


def test_cell_comments_are_named_in_a_warning_not_read():
    """PhpSpreadsheet's formscomments.xlsx (a new user's walk, 2026-12-07): two notes dropped without a word, where DOCX
    and ODF name theirs."""
    from openpyxl.comments import Comment

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Part", "Count"])
    ws.append(["M4 bolt", 1250])
    ws["B2"].comment = Comment("Recount on Monday", "Owen")
    doc = extract_bytes(S.save(wb), "stock.xlsx")
    assert "| M4 bolt | 1250 |" in doc.canonical and "Recount" not in doc.canonical
    assert any(w.startswith("not read: 1 cell comment(s)") for w in doc.warnings), doc.warnings


def test_a_data_row_of_years_under_a_merged_label_stays_data():
    # a review (2026-12-07): "Alice Moreno | 2015 | 2019 | North" under "Term (years)" merged over two columns was
    # taken for a header row
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["B1"], ws["D1"] = "Member", "Term (years)", "District"
    ws.merge_cells("B1:C1")
    for row in (["Alice Moreno", 2015, 2019, "North"], ["Bob Chen", 2017, 2021, "South"]):
        ws.append(row)
    text = extract_bytes(S.save(wb), "terms.xlsx").canonical
    assert "| Alice Moreno | 2015 | 2019 | North |" in text and "Member / Alice" not in text


def test_a_damaged_comments_part_loses_only_the_warning():
    from openpyxl.comments import Comment

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Part", "Count"])
    ws.append(["M4 bolt", 1250])
    ws["B2"].comment = Comment("Recount on Monday", "Owen")
    data = bytearray(S.save(wb))
    info = next(i for i in zipfile.ZipFile(io.BytesIO(bytes(data))).infolist() if i.filename.startswith("xl/comments"))
    assert info.compress_type == zipfile.ZIP_DEFLATED
    name_len, extra_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start:start + 4] = b"\xff\xff\xff\xff"  # deflate block type 3: "invalid block type" (zlib.error)
    doc = extract_bytes(bytes(data), "stock.xlsx")
    assert "| M4 bolt | 1250 |" in doc.canonical


def test_formula_cells_without_a_stored_result_are_named_in_a_warning():
    """openpyxl (and many report generators) write a formula without computing it: Excel computes it on opening, a
    reader of the file's bytes finds no value. The cell reads as empty (we do not evaluate formulas), and the
    document says how many results it could not read instead of being "ready" as if whole."""
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Item", "Cost"], ["Paper", 10], ["Ink", 32], ["Total", "=SUM(B2:B3)"], ["Mean", "=AVERAGE(B2:B3)"]):
        ws.append(row)
    bio = io.BytesIO()
    wb.save(bio)
    doc = extract_bytes(bio.getvalue(), "budget.xlsx")
    assert "| Ink | 32 |" in doc.canonical and "SUM" not in doc.canonical
    assert [w for w in doc.warnings if "formula" in w] == [
        "not read: 2 formula cell(s) have no stored result (the program that saved the file did not compute them; "
        "open and save it in a spreadsheet program to read them)"]
    ws["B4"] = 42  # a stored value: nothing to warn of
    ws["B5"] = 21
    bio = io.BytesIO()
    wb.save(bio)
    assert not [w for w in extract_bytes(bio.getvalue(), "budget.xlsx").warnings if "formula" in w]


def test_a_formula_whose_result_is_an_empty_string_is_computed_not_missing():
    """Excel writes a formula that gives "" (``=IFNA(...; "")``) as ``t="str"`` with an empty ``<v></v>``; openpyxl
    writes an uncomputed one with ``<v></v>`` and no type. LibreOffice writes the empty result in an ODS with an
    empty paragraph and no value type (a real Paris open-data sheet of ``../shared`` has 6,156 of them); odfdo
    writes an uncomputed one with no paragraph at all."""
    wb = openpyxl.Workbook()
    wb.active.append(["Street", "Corner"])
    wb.active.append(["rue Rambuteau", '=IF(1=2,"x","")'])
    bio = io.BytesIO()
    wb.save(bio)
    with zipfile.ZipFile(bio) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    sheet = "xl/worksheets/sheet1.xml"
    assert b'<c r="B2"><f>' in parts[sheet]
    uncomputed = extract_bytes(bio.getvalue(), "streets.xlsx").warnings
    parts[sheet] = parts[sheet].replace(b'<c r="B2"><f>', b'<c r="B2" t="str"><f>')  # as Excel saves it
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, body in parts.items():
            z.writestr(n, body)
    assert [w for w in uncomputed if "1 formula cell" in w]
    assert not [w for w in extract_bytes(out.getvalue(), "streets.xlsx").warnings if "formula" in w]

    from odfdo import Cell, Document, Paragraph, Table
    for computed in (True, False):
        doc = Document("spreadsheet")
        table = Table("Sheet1")
        table.set_value("A1", "Street")
        table.set_value("A2", "rue Rambuteau")
        cell = Cell()
        cell.formula = 'of:=IF(1=2;"x";"")'
        if computed:
            cell.append(Paragraph(""))  # LibreOffice's empty result
        table.set_cell("B2", cell)
        doc.body.append(table)
        bio = io.BytesIO()
        doc.save(bio)
        said = [w for w in extract_bytes(bio.getvalue(), "streets.ods").warnings if "formula" in w]
        assert bool(said) is not computed


def test_cells_with_an_empty_style_attribute_are_read():
    # calamine's empty_s_attribute.xlsx (a walk, 2026-12-07): cells written <c r="A1" s="" t="s"> were "damaged XLSX
    # (TypeError: list indices must be integers ...)"
    import io
    import zipfile

    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append(["Name", "Value"])
    wb.active.append(["John", 1])
    buf = io.BytesIO()
    wb.save(buf)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            body = zin.read(info)
            if info.filename == "xl/worksheets/sheet1.xml":
                body = body.replace(b'<c r="A2"', b'<c s="" r="A2"').replace(b'<c r="B2"', b'<c s="" r="B2"')
            zout.writestr(info, body)
    text = extract_bytes(out.getvalue(), "people.xlsx").canonical
    assert "| John | 1 |" in text


def test_a_chart_sheet_is_read_with_its_chart_s_titles():
    # XlsxWriter's chart_bar16.xlsx (a walk, 2026-12-07): a chart sheet's title and axis titles were never read
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["Month", "Sales"], ["Jan", 10], ["Feb", 14]):
        ws.append(row)
    chart = BarChart()
    chart.title = "Monthly sales of the Lisbon office"
    chart.y_axis.title = "Units sold"
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    sheet = wb.create_chartsheet("Sales chart")
    sheet.add_chart(chart)
    hidden = wb.create_chartsheet("Old chart")
    hidden.sheet_state = "hidden"
    old = BarChart()
    old.title = "Draft figures never shown"
    hidden.add_chart(old)
    buf = io.BytesIO()
    wb.save(buf)
    doc = extract_bytes(buf.getvalue(), "sales.xlsx")
    assert "# Sales chart" in doc.canonical and "Chart: Monthly sales of the Lisbon office" in doc.canonical
    assert "Axis: Units sold" in doc.canonical and "Draft figures" not in doc.canonical
    assert any("Old chart" in w for w in doc.warnings), doc.warnings
