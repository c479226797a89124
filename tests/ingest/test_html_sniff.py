"""A saved web page that opens with its script, its charset declared after it (tika's big-preamble.html, a new
user's walk, 2026-12-07): it was read as plain text, its markup and JavaScript indexed as evidence, and once read as
HTML its Windows-1251 text was Windows-1252 mojibake judged "4 % coverage"."""

from __future__ import annotations

from rag.ingest.extract import extract_bytes
from rag.ingest.sniff import sniff
from rag.types import MediaType

SCRIPT = "<script language=\"javascript\">\nfunction addToList(from, to) { var x = from.selectedIndex; }\n</script>\n"
PAGE = (SCRIPT * 80 + "<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">"
        "<title>Континент</title></head><body><h1>Континент-Недвижимость</h1>"
        "<p>Агентство недвижимости основано в 1999 году и работает в Москве.</p></body></html>")


def test_a_page_that_opens_with_a_script_is_html_and_its_script_is_no_text():
    data = PAGE.encode("cp1251")
    assert len(SCRIPT * 80) > 4096  # the charset is declared past the first 4 KiB
    assert sniff(data, "preamble.html") == MediaType.HTML.value
    assert sniff(data, "page.bin") == MediaType.HTML.value  # the bytes decide (WHATWG's "<script" signature)
    doc = extract_bytes(data, "preamble.html")
    assert doc.media_type == MediaType.HTML.value
    assert "основано в 1999 году" in doc.canonical
    assert "addToList" not in doc.canonical and "<script" not in doc.canonical
    assert doc.coverage == 1.0 and not any("coverage" in w for w in doc.warnings)


def test_markdown_that_opens_with_a_tag_stays_markdown():
    data = b'<div align="center"><img src="logo.png"></div>\n\n# Project\n\nIt installs in one step.\n'
    assert sniff(data, "README.md") is None
    assert sniff(b"<abc> is no tag of HTML\n", "notes") is None


def test_a_table_cell_spanning_rows_or_columns_keeps_the_others_under_their_headers():
    """pandoc's html-reader.html (a new user's walk, 2026-12-07): under a cell spanning two rows, "5" was read in
    the first column; a hostile span builds no huge row. A long text spanning rows is written once."""
    page = (b"<html><body><table><tr><th>Key</th><th>First</th><th>Second</th></tr>"
            b"<tr><td rowspan=2>1 and 4</td><td>2</td><td>3</td></tr><tr><td>5</td><td>6</td></tr>"
            b"<tr><td colspan=2>wide</td><td>c</td></tr></table>"
            b"<table><tr><td colspan=100000 rowspan=99999>x</td></tr></table></body></html>")
    doc = extract_bytes(page, "spans.html")
    lines = [line for line in doc.canonical.splitlines() if line.startswith("|")]
    # a short text spanning rows is each row's (a row label), so every row reads alone
    assert lines[2:5] == ["| 1 and 4 | 2 | 3 |", "| 1 and 4 | 5 | 6 |", "| wide |  | c |"]
    assert len(lines[-1]) < 1000  # the hostile span is read 100 columns wide at most
    long = "a remark long enough that repeating it in every row it spans would only bloat the rows it covers"
    page = (f"<table><tr><th>Note</th><th>Item</th></tr><tr><td rowspan=2>{long}</td><td>one</td></tr>"
            "<tr><td>two</td></tr></table>").encode()
    text = extract_bytes(b"<html><body>" + page + b"</body></html>", "long.html").canonical
    assert text.count(long) == 1 and "|  | two |" in text
