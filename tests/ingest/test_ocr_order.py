"""The reading order of OCR'd lines (rag.ingest.ocr.reading_order): rows top to bottom, left to right; text set in
columns read column by column, band by band between the lines spanning them. OCRmyPDF's linn.pdf (a new user's walk,
2026-12-07), a scanned page with a one-column list over two columns of prose, was read straight across. Lines are
made here (the OCR engine is not run)."""

from __future__ import annotations

from rag.ingest.ocr import OcrLine, gutter, reading_order


def _line(text: str, x0: float, y0: float, x1: float) -> OcrLine:
    return OcrLine(text, x0, y0, x1, y0 + 10, 0.9)


def test_two_columns_under_a_one_column_list_are_read_column_by_column():
    lines = [_line("The LinnSequencer", 210, 30, 400)]
    lines += [_line(f"- feature {i} of the sequencer, described at some length", 82, 60 + 14 * i, 330 + 20 * i)
              for i in range(6)]  # one column: some lines reach over the gutter below
    lines += [_line("Recording a Sequence", 83, 160, 181)]
    for i in range(12):
        lines.append(_line(f"left {i:02} of the recording section's prose", 82, 175 + 10 * i, 296))
        lines.append(_line(f"right {i:02} of the editing section's prose", 310, 172 + 10 * i, 520))
    lines.append(_line("Additional features, over both columns again, at the page's foot", 82, 320, 522))
    got = [ln.text for ln in reading_order(lines)]
    assert got[0] == "The LinnSequencer" and got[1].startswith("- feature 0")
    left = [t for t in got if t.startswith("left")]
    right = [t for t in got if t.startswith("right")]
    assert got.index(left[-1]) < got.index(right[0])  # the whole left column first
    assert left == sorted(left) and right == sorted(right) and got[-1].startswith("Additional features")
    assert gutter(lines) is not None


def test_a_table_or_a_form_is_read_row_by_row():
    lines = [_line(f"Item {i}", 50, 50 + 20 * i, 120) for i in range(10)]
    lines += [_line(f"{3 * i}.00", 480, 50 + 20 * i, 550) for i in range(10)]
    got = [ln.text for ln in reading_order(lines)]
    assert got[:4] == ["Item 0", "0.00", "Item 1", "3.00"] and gutter(lines) is None
    prose = [_line(f"A single column line number {i} of ordinary prose text.", 72, 50 + 12 * i, 500 - 7 * (i % 5))
             for i in range(30)]
    assert gutter(prose) is None and [ln.text for ln in reading_order(prose)] == [ln.text for ln in prose]


def test_a_question_and_answer_table_without_rules_is_read_row_by_row():
    """A review (2026-12-07): a lease's questions beside their answers, long cells on both sides, read all questions
    then all answers. Both sides break at the same heights: a table's rows."""
    rows = [("What is the notice period for ending the lease early?", "Three months in writing to the landlord."),
            ("Who pays for repairs to the heating system in winter?", "The landlord, within fourteen days."),
            ("May the tenant keep a dog or a cat in the flat at all?", "Only with the landlord's written leave."),
            ("When is the rent due each month under this lease?", "On the first working day of each month."),
            ("Is the deposit protected by a government scheme?", "Yes, within thirty days of its payment."),
            ("Can the tenant sublet one of the rooms to others?", "No, subletting is not allowed at any time.")]
    lines = [ln for i, (q, a) in enumerate(rows)
             for ln in (_line(q, 40, i * 30, 40 + 5.2 * len(q)), _line(a, 340, i * 30, 340 + 5.2 * len(a)))]
    got = [ln.text for ln in reading_order(lines)]
    assert got[:2] == [rows[0][0], rows[0][1]] and gutter(lines) is None
