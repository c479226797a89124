"""The numbers a chart's data labels show are read (rag.ingest.office.ooxml.chart_value_lines): a new user's
walk (2026-12-07) asked a deck "What was the presidential approval rating?" and found only "Approve; Disapprove;
Neutral", the pie's 37 % / 59 % / 4 % unread."""

from __future__ import annotations

import io

import pytest
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from rag.ingest.extract import extract_bytes
from rag.ingest.office.ooxml import chart_number


def _deck(kind, values, *, show_value=False, show_percent=False, number_format=None) -> bytes:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Survey"
    data = CategoryChartData()
    data.categories = ["Approve", "Disapprove", "Neutral"]
    data.add_series("Rating", values)
    chart = slide.shapes.add_chart(kind, Inches(1), Inches(1.5), Inches(6), Inches(4), data).chart
    plot = chart.plots[0]
    if show_value or show_percent:
        plot.has_data_labels = True
        labels = plot.data_labels
        labels.show_value, labels.show_percentage = show_value, show_percent
        if number_format:
            labels.number_format, labels.number_format_is_linked = number_format, False
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def test_a_pie_s_percentage_labels_are_read():
    doc = extract_bytes(_deck(XL_CHART_TYPE.PIE, (37, 59, 4), show_percent=True), "survey.pptx")
    assert "Rating: Approve 37%; Disapprove 59%; Neutral 4%" in doc.canonical


def test_value_labels_keep_their_number_format():
    doc = extract_bytes(_deck(XL_CHART_TYPE.COLUMN_CLUSTERED, (1250.5, 300, 12), show_value=True,
                              number_format="#,##0.0"), "bars.pptx")
    assert "Rating: Approve 1,250.5; Disapprove 300.0; Neutral 12.0" in doc.canonical


def test_percentage_labels_on_a_bar_chart_are_not_shown_so_not_read():
    doc = extract_bytes(_deck(XL_CHART_TYPE.COLUMN_CLUSTERED, (37, 59, 4), show_percent=True), "bars.pptx")
    assert "37%" not in doc.canonical and "Rating: " not in doc.canonical


def test_values_without_labels_are_not_shown_so_not_read():
    doc = extract_bytes(_deck(XL_CHART_TYPE.COLUMN_CLUSTERED, (1250.5, 300, 12)), "plain.pptx")
    assert "1250" not in doc.canonical and "Categories: Approve; Disapprove; Neutral" in doc.canonical


@pytest.mark.parametrize("text,code,share,want", [
    ("0.14000000000000001", "", None, "0.14"), ("0.37", "0%", None, "37%"), ("0.375", "0.0%", None, "37.5%"),
    ("47000000", "General", None, "47000000"), ("37", "", 100.0, "37%"), ("n/a", "0%", None, "n/a"),
    ("1234.5", "$#,##0.00", None, "$1,234.50"), ("3", "0." + "0" * 5000, None, "3.0000000000"),
    # formats this cannot render as the chart does are not read: a date, a fraction, scaling commas
    ("45000", "mmm d, yyyy", None, None), ("0.5", "# ?/?", None, None), ("1500000", '#,##0,,"M"', None, None),
])
def test_chart_numbers_read_as_their_labels_show_them(text, code, share, want):
    assert chart_number(text, code, share) == want


def test_two_level_categories_keep_their_upper_level():
    """python-pptx's cht-category-access.pptx (a new user's walk, 2026-12-07): states under countries read "CA; NY;
    GB", the countries lost."""
    data = CategoryChartData()
    for country, places in (("US", ("CA", "NY")), ("UK", ("GB", "Scotland"))):
        top = data.add_category(country)
        for place in places:
            top.add_sub_category(place)
    data.add_series("Stores", (4, 7, 2, 1))
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6), Inches(4), data)
    buf = io.BytesIO()
    prs.save(buf)
    text = extract_bytes(buf.getvalue(), "stores.pptx").canonical
    assert "Categories: US / CA; US / NY; UK / GB; UK / Scotland" in text


def test_a_3d_chart_python_pptx_cannot_read_is_read_from_its_xml():
    # ShapeCrawler's "084 charts.pptx" (a walk, 2026-12-07): python-pptx raises "unsupported plot type bar3DChart",
    # and the chart was read as its title alone, "What percentage did Client A use?" refused
    data = _deck(XL_CHART_TYPE.COLUMN_CLUSTERED, (4.3, 2.5, 3.5), show_value=True, number_format="0.0")
    out = io.BytesIO()
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            body = zin.read(info)
            if info.filename.startswith("ppt/charts/chart"):
                body = body.replace(b"c:barChart>", b"c:bar3DChart>")
            zout.writestr(info, body)
    doc = extract_bytes(out.getvalue(), "bars3d.pptx")
    assert "Categories: Approve; Disapprove; Neutral" in doc.canonical
    assert "Rating: Approve 4.3; Disapprove 2.5; Neutral 3.5" in doc.canonical


def test_date_categories_cached_as_serial_numbers_read_as_dates():
    # XlsxWriter's chart_date01.xlsx (a walk, 2026-12-07): "Categories: 41275; 41276 ..." where the axis shows dates
    from rag.ingest.office.ooxml import chart_lines, safe_xml

    c = "http://schemas.openxmlformats.org/drawingml/2006/chart"
    cat = ("<c:cat><c:numRef><c:f>Sheet1!$A$1:$A$2</c:f><c:numCache><c:formatCode>yyyy-mm-dd</c:formatCode>"
           "<c:ptCount val='2'/><c:pt idx='0'><c:v>41275</c:v></c:pt><c:pt idx='1'><c:v>41276</c:v></c:pt>"
           "</c:numCache></c:numRef></c:cat>")
    plain = cat.replace("yyyy-mm-dd", "General")
    for cats, want in ((cat, "Categories: 2013-01-01; 2013-01-02"), (plain, "Categories: 41275; 41276")):
        xml = (f"<c:chartSpace xmlns:c='{c}'><c:chart><c:plotArea><c:lineChart><c:ser><c:idx val='0'/>{cats}"
               "</c:ser></c:lineChart></c:plotArea></c:chart></c:chartSpace>")
        assert want in chart_lines(safe_xml(xml.encode())), want


def test_a_deck_s_date_categories_read_as_dates():
    # ShapeCrawler's 021.pptx (a walk, 2026-12-07): a date axis read "41361; 41360" (python-pptx gives the serials)
    import datetime as dt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Visits"
    data = CategoryChartData()
    data.categories = [dt.date(2013, 1, 1), dt.date(2013, 1, 2)]
    data.add_series("Visits", (5, 7))
    slide.shapes.add_chart(XL_CHART_TYPE.LINE, Inches(1), Inches(1.5), Inches(6), Inches(4), data)
    buf = io.BytesIO()
    deck.save(buf)
    assert "Categories: 2013-01-01; 2013-01-02" in extract_bytes(buf.getvalue(), "visits.pptx").canonical
