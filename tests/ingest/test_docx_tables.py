"""DOCX tables on their grid (rag.ingest.office.wordml.table_grid) and tables that lay out a page
(rag.ingest.office.wordml.lays_out), and reviewer comments named in a warning: a new user's walk over
docx2python's test files, 2026-12-07."""

from __future__ import annotations

import io

import docx
import ooxml_samples as S
import pytest

from rag.ingest.extract import extract_bytes


def _bytes(d) -> bytes:
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_vertically_merged_labels_stay_with_every_row_and_spans_keep_columns():
    d = docx.Document()
    t = d.add_table(rows=5, cols=3)
    for i, text in enumerate(["Week", "Day", "Topic"]):
        t.cell(0, i).text = text
    t.cell(1, 0).merge(t.cell(2, 0)).text = "Week 4"  # a week spanning its Tuesday and Thursday rows
    t.cell(1, 1).text, t.cell(1, 2).text = "Tuesday", "Test 1"
    t.cell(2, 1).text, t.cell(2, 2).text = "Thursday", "Piecewise functions"
    t.cell(3, 0).merge(t.cell(3, 1)).text = "Holiday week"  # spans Week and Day
    t.cell(3, 2).text = "No class"
    t.cell(4, 0).text, t.cell(4, 1).text, t.cell(4, 2).text = "Week 5", "Tuesday", "Math lab"
    text = extract_bytes(_bytes(d), "schedule.docx").canonical
    assert "| Week 4 | Thursday | Piecewise functions |" in text  # was "|  | Thursday | ..."
    assert "| Week 4 | Tuesday | Test 1 |" in text
    assert "| Holiday week |  | No class |" in text  # "No class" stays under Topic
    assert text.count("Holiday week") == 1


def test_a_long_merged_text_is_written_once():
    d = docx.Document()
    t = d.add_table(rows=3, cols=2)
    t.cell(0, 0).text, t.cell(0, 1).text = "Note", "Item"
    long = "This remark applies to every item listed in the rows beside it and goes on for a while longer."
    t.cell(1, 0).merge(t.cell(2, 0)).text = long
    t.cell(1, 1).text, t.cell(2, 1).text = "first", "second"
    text = extract_bytes(_bytes(d), "notes.docx").canonical
    assert text.count(long) == 1 and "|  | second |" in text


def test_a_table_nested_in_a_frame_is_a_table_of_its_own():
    d = docx.Document()
    d.add_paragraph("Procedure DOP-1013")
    frame = d.add_table(rows=1, cols=1)
    cell = frame.cell(0, 0)
    cell.text = "Part A"
    steps = cell.add_table(rows=3, cols=2)
    steps.cell(0, 0).text, steps.cell(0, 1).text = "Step", "Work activity"
    steps.cell(1, 0).text, steps.cell(1, 1).text = "1", "Check the elevator size."
    steps.cell(2, 0).text, steps.cell(2, 1).text = "2", "Pull the joint and set the slips."
    text = extract_bytes(_bytes(d), "procedure.docx").canonical
    assert "| 2 | Pull the joint and set the slips. |" in text  # was one cell: "Step Work activity 1 Check ..."
    assert text.index("Part A") < text.index("| Step | Work activity |")


def test_a_small_box_in_a_cell_stays_in_its_cell():
    d = docx.Document()
    t = d.add_table(rows=1, cols=2)
    t.cell(0, 0).text = "Outer"
    t.cell(0, 1).add_table(rows=1, cols=1).cell(0, 0).text = "room 214"
    text = extract_bytes(_bytes(d), "form.docx").canonical
    assert "| Outer | room 214 |" in text


def test_python_docx_merged_cell_sample_reads_on_its_grid(shared_dir):
    path = shared_dir / "cases" / "wild" / "files" / "python-docx" / "tbl-cell-access.docx"
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = extract_bytes(path.read_bytes(), path.name).canonical
    assert "| 7 | 5 | 9 |" in text and "| 4 |  | 6 |" in text


def test_reviewer_comments_are_named_in_a_warning_not_read():
    d = docx.Document()
    p = d.add_paragraph("The budget is 5,000 EUR.")
    d.add_comment(p.runs, text="Check this figure against the spreadsheet", author="Kim")
    d.add_comment(p.runs, text="Confirmed with finance", author="Lee")
    doc = extract_bytes(_bytes(d), "budget.docx")
    assert "Check this figure" not in doc.canonical
    assert any("2 reviewer comment(s)" in w for w in doc.warnings)
    plain = docx.Document()
    plain.add_paragraph("No comments here.")
    assert not any("comment" in w for w in extract_bytes(_bytes(plain), "plain.docx").warnings)


def test_a_data_table_with_a_small_table_in_a_cell_stays_a_table():
    """A reviewer's probe (2026-12-07): a product table whose Specs cell holds a 2 x 2 table became loose
    paragraphs ("Chair", "$40", "Oak", ...)."""
    d = docx.Document()
    t = d.add_table(rows=4, cols=3)
    for r, cells in enumerate([("Product", "Price", "Specs"), ("Chair", "$40", "Oak"), ("Table", "$90", ""),
                               ("Lamp", "$15", "Brass")]):
        for c, text in enumerate(cells):
            t.cell(r, c).text = text
    specs = t.cell(2, 2).add_table(rows=2, cols=2)
    specs.cell(0, 0).text, specs.cell(0, 1).text = "Width", "10 cm"
    specs.cell(1, 0).text, specs.cell(1, 1).text = "Height", "20 cm"
    text = extract_bytes(_bytes(d), "products.docx").canonical
    assert "| Chair | $40 | Oak |" in text and "| Table | $90 | Width 10 cm Height 20 cm |" in text


def test_struck_through_text_is_marked_as_a_reader_sees_it():
    """mammoth's strikethrough.docx (a new user's walk, 2026-12-07): "Today's special: Salmon" struck through, then
    "Sold out", answered "Today's special: Salmon", shown as supported. Struck runs are written between ~~ marks."""
    body = ('<w:p><w:r><w:t xml:space="preserve">Today\'s special: </w:t></w:r>'
            '<w:r><w:rPr><w:strike/></w:rPr><w:t xml:space="preserve">Sal</w:t></w:r>'
            '<w:r><w:rPr><w:dstrike w:val="true"/></w:rPr><w:t xml:space="preserve">mon </w:t></w:r>'
            '<w:r><w:t>Sold out</w:t></w:r></w:p>'
            '<w:p><w:r><w:rPr><w:strike w:val="0"/></w:rPr><w:t>Soup of the day ~~ tomato</w:t></w:r></w:p>'
            '<w:p><w:r><w:t xml:space="preserve">Use ~~ to mark deletions; price </w:t></w:r>'
            '<w:r><w:rPr><w:strike/></w:rPr><w:t>$20</w:t></w:r><w:r><w:t xml:space="preserve"> now $15.</w:t></w:r></w:p>')
    text = extract_bytes(S.save(S.docx_with_body(body)), "menu.docx").canonical
    assert "Today's special: ~~Salmon~~ Sold out" in text
    assert "Soup of the day ~~ tomato" in text  # not struck (w:val="0"), its own "~~" untouched
    assert "Use ~~ to mark deletions; price ~~$20~~ now $15." in text  # a review, 2026-12-07: they were swapped
