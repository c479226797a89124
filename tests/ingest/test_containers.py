"""Every text container (issue 28, item 3): text boxes and nested tables in DOCX, group shapes and charts in PPTX,
Strict OOXML; and the true reason when a file really holds no text (item 5)."""

from __future__ import annotations

import io
import zipfile

import docx
import openpyxl
import pptx
import pytest
from docx.oxml import parse_xml
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from rag.errors import ExtractionError
from rag.ingest.extract import extract_bytes
from rag.ingest.office.ooxml import STRICT_TO_TRANSITIONAL, is_strict


def _docx(doc) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def test_docx_text_boxes_and_nested_tables_are_read():
    doc = docx.Document()
    p = doc.add_paragraph("The form follows.")
    box = parse_xml(
        '<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
        'xmlns:v="urn:schemas-microsoft-com:vml"><w:pict><v:shape><v:textbox><w:txbxContent>'
        "<w:p><w:r><w:t>Boxed note: the deadline is 14 June.</w:t></w:r></w:p>"
        "</w:txbxContent></v:textbox></v:shape></w:pict></w:r>")
    p._p.append(box)
    table = doc.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Outer"
    inner = table.cell(0, 1).add_table(rows=1, cols=1)
    inner.cell(0, 0).text = "Nested cell holds the room number 214"
    got = extract_bytes(_docx(doc), "form.docx")
    assert "Boxed note: the deadline is 14 June." in got.canonical
    assert "room number 214" in got.canonical
    assert got.canonical.index("The form follows.") < got.canonical.index("Boxed note")


def test_a_docx_of_empty_tables_says_so():
    doc = docx.Document()
    doc.add_table(rows=2, cols=2)
    with pytest.raises(ExtractionError, match=r"its body holds 1 table\(s\) whose cells are all empty"):
        extract_bytes(_docx(doc), "empty.docx")


def _pptx(deck) -> bytes:
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def test_pptx_group_shapes_and_chart_labels_are_read():
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "Grouped: exit B is closed"
    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("Visitors 2024", (120, 95))
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(3), Inches(6), Inches(3), data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Visitors by gate"
    got = extract_bytes(_pptx(deck), "gates.pptx")
    assert "Grouped: exit B is closed" in got.canonical
    assert "Chart: Visitors by gate" in got.canonical and "North; South" in got.canonical
    assert "Visitors 2024" in got.canonical


def test_a_pptx_of_empty_shapes_says_what_it_holds():
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_shape(1, Inches(1), Inches(1), Inches(1), Inches(1))
    with pytest.raises(ExtractionError, match=r"1 shape\(s\), 0 of them pictures, and none holds text"):
        extract_bytes(_pptx(deck), "shapes.pptx")


def _strict(data: bytes) -> bytes:
    """A Transitional package renamed into Strict OOXML (the inverse of rag.ingest.office.ooxml.transitional)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            for strict, trans in STRICT_TO_TRANSITIONAL:
                body = body.replace(trans, strict)
            dst.writestr(info, body)
    return out.getvalue()


def test_a_strict_ooxml_workbook_is_read():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Stock"
    ws.append(["Part", "Count"])
    ws.append(["M4 bolt", 1250])
    buf = io.BytesIO()
    wb.save(buf)
    strict = _strict(buf.getvalue())
    assert is_strict(strict)
    got = extract_bytes(strict, "stock.xlsx")
    assert "| M4 bolt | 1250 |" in got.canonical


def test_the_handed_strict_workbook(cases_dir):
    path = cases_dir / "wild" / "calamine_strict_iso_paths.xlsx"
    if not path.exists():
        pytest.skip("../shared/cases/wild not present")
    got = extract_bytes(path.read_bytes(), path.name)
    assert "Thickness" in got.canonical
