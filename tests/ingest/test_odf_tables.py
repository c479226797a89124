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
