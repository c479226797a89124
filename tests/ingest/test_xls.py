"""Legacy Excel 97-2003 workbooks (.xls) read with xlrd, laid out and located as XLSX; what a reader cannot see
left out; a .doc or .ppt (the other OLE2 files) still refused with its reason. Workbooks are written here with
xlwt; the real ones of calamine's test suite (``../shared/cases/wild``) are tried too, skipped when absent."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from rag.errors import ExtractionError, LimitExceeded
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.ingest.limits import Limits
from rag.ingest.sniff import OLE2, sniff
from rag.types import LocatorKind, MediaType


def _budget_xls() -> bytes:
    import xlwt

    wb = xlwt.Workbook()
    ws = wb.add_sheet("Budget 2024")
    for c, h in enumerate(["Item", "Owner", "Amount", "Due"]):
        ws.write(0, c, h, xlwt.easyxf("font: bold on"))
    money, date = xlwt.easyxf(num_format_str="#,##0.00"), xlwt.easyxf(num_format_str="YYYY-MM-DD")
    rows = [("Laptops", "IT", 41850.5, dt.date(2024, 3, 1)), ("Office chairs", "Facilities", 7200, dt.date(2024, 4, 15)),
            ("Secret bonus", "HR", 99999, dt.date(2024, 5, 1)), ("Training", "HR", 12000, dt.date(2024, 6, 30))]
    for r, (item, owner, amount, due) in enumerate(rows, start=1):
        ws.write(r, 0, item)
        ws.write(r, 1, owner)
        ws.write(r, 2, amount, money)
        ws.write(r, 3, due, date)
    ws.row(3).hidden = True  # the secret bonus
    ws.write(6, 0, "invisible note", xlwt.easyxf("font: colour white"))
    ws.write(7, 0, "masked value", xlwt.easyxf(num_format_str=";;;"))
    ws.col(5).hidden = True
    ws.write(1, 5, "hidden column text")
    ws.write(9, 0, True)
    ws.write(9, 1, xlwt.Formula("1/0"))
    internal = wb.add_sheet("Internal")
    internal.write(0, 0, "salary table")
    internal.visibility = 1
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def test_an_xls_reads_as_excel_shows_it_with_sheet_row_locators():
    data = _budget_xls()
    assert sniff(data, "budget.xls") == MediaType.XLS.value
    assert sniff(data, "renamed.bin") == MediaType.XLS.value  # the bytes decide, never the name
    doc = extract_bytes(data, "budget.xls")
    assert doc.media_type == MediaType.XLS.value
    text = doc.canonical
    assert "| Item | Owner | Amount | Due |" in text
    assert "| Laptops | IT | 41,850.50 | 2024-03-01 |" in text  # the cell's number format, the date as a date
    assert "| Training | HR | 12,000.00 | 2024-06-30 |" in text
    rows = {p.number: text[p.start:p.end] for p in doc.parts if p.kind == LocatorKind.ROWS}
    assert rows[2].startswith("| Laptops") and rows[5].startswith("| Training")  # A1 rows: row 4 is hidden
    assert all(p.scope == "Budget 2024" for p in doc.parts if p.kind == LocatorKind.ROWS)
    chunks = chunk_document(doc)
    assert any("Laptops" in c.content for c in chunks)
    assert all(text[c.start:c.end] == c.content for c in chunks)


def test_what_an_xls_reader_cannot_see_is_left_out_and_reported():
    doc = extract_bytes(_budget_xls(), "budget.xls")
    for unseen in ("Secret bonus", "99999", "99,999", "invisible note", "masked value", "hidden column text",
                   "salary table"):
        assert unseen not in doc.canonical
    warnings = " ".join(doc.warnings)
    assert "hidden sheets left out: Internal" in warnings
    assert "hidden rows" in warnings and "hidden columns" in warnings and "white font" in warnings
    assert "number format ;;;" in warnings


def test_booleans_and_errors_read_as_excel_shows_them():
    doc = extract_bytes(_budget_xls(), "budget.xls")
    row = next(doc.canonical[p.start:p.end] for p in doc.parts if p.kind == LocatorKind.ROWS and p.number == 10)
    assert "TRUE" in row


def test_an_xls_past_the_row_limit_fails_alone_with_the_limit_named():
    with pytest.raises(LimitExceeded, match="max_sheet_rows"):
        extract_bytes(_budget_xls(), "budget.xls", limits=Limits(max_sheet_rows=2))


def test_other_ole2_files_are_still_refused_with_their_reason(monkeypatch):
    fake_doc = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500 + "WordDocument".encode("utf-16-le")
    assert sniff(fake_doc, "old.doc") == OLE2
    with pytest.raises(ExtractionError, match=r"^old\.doc: legacy Office file \(\.doc/\.ppt"):
        extract_bytes(fake_doc, "old.doc")
    # a workbook stream named in capitals is still a workbook (calamine's capitalized_wbook_stream.xls, a walk,
    # 2026-12-07, was called "legacy Office file (.doc/.ppt)")
    import rag.ingest.sniff as sniff_mod

    monkeypatch.setattr(sniff_mod, "_ole2_streams", lambda data: {"WORKBOOK", "\x05SummaryInformation"})
    assert sniff(fake_doc, "caps.xls") == MediaType.XLS.value
    monkeypatch.undo()
    truncated = _budget_xls()[:1500]
    with pytest.raises(ExtractionError, match=r"^cut\.xls: (damaged XLS|legacy Office file)"):
        extract_bytes(truncated, "cut.xls")


def test_real_xls_and_doc_files_of_public_test_suites(cases_dir):
    wild = cases_dir / "wild" / "files"
    enron = wild / "calamine" / "OOM_alloc.xls"  # a file made to exhaust a reader's memory: 9 sheets, 8 hidden
    if not enron.exists():
        pytest.skip("calamine's test workbooks are absent")
    doc = extract_bytes(enron.read_bytes(), enron.name)
    assert doc.media_type == MediaType.XLS.value
    assert "# Weekly Report" in doc.canonical and "Physical Volume of New Deals" in doc.canonical
    assert "hidden sheets left out: Data, EIM New Deals" in " ".join(doc.warnings)
    assert "Laurel Adams" not in doc.canonical  # a name on the hidden sheet "Data People"
    small = extract_bytes((wild / "calamine" / "issues.xls").read_bytes(), "issues.xls")
    assert "# issue2" in small.canonical and "| 2 | b |" in small.canonical
    word = wild / "pymupdf" / "test_open2.doc"
    with pytest.raises(ExtractionError, match="legacy Office file"):
        extract_bytes(word.read_bytes(), word.name)


def test_two_tables_side_by_side_keep_their_titles_out_of_the_column_names():
    """A USDA workbook (a new user's walk, 2026-12-07): a row of two merged titles over two tables side by side
    was read as the header, each title joined into every column name below it and then cut in the repeated
    header, so no chunk said which column was the export value."""
    import xlwt

    wb = xlwt.Workbook()
    ws = wb.add_sheet("Cabbage")
    ws.write_merge(0, 0, 0, 3, "Total production and exports (2005) of countries eligible to ship to the United States")
    ws.write_merge(0, 0, 5, 7, "Top world producers (2005)")
    for c, h in enumerate(["Country", "Production", "Total exports", "Export value"]):
        ws.write(1, c, h)
    for r, row in enumerate([("Japan", 2286.8, 1.54, 1960), ("Netherlands", 209.0, 156.08, 104060)], start=2):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    buf = io.BytesIO()
    wb.save(buf)
    doc = extract_bytes(buf.getvalue(), "cabbage.xls")
    assert "| Country | Production | Total exports | Export value |" in doc.canonical
    assert "Total production and exports (2005) of countries eligible" in doc.canonical  # kept, as a caption
    assert "eligible to ship to the United States / Country" not in doc.canonical

