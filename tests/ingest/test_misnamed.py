"""Issue 42, item 5: a file whose bytes disagree with its name says what it really is; RTF is refused, with why."""

from __future__ import annotations

import pytest

from rag.errors import ExtractionError
from rag.ingest.extract import extract_bytes, misnamed_notice
from rag.types import MediaType

TEXT = b"Quarterly report. Sales grew by ten percent in the north and held steady in the south.\n"


def test_text_named_docx_is_read_as_text_with_a_notice():
    doc = extract_bytes(TEXT, "report.docx")
    assert doc.media_type == MediaType.TEXT
    assert doc.warnings[0] == "report.docx is plain text, not a Word document: read as text"


@pytest.mark.parametrize("name", ["notes.txt", "notes.md", "notes", "notes.log"])
def test_text_named_as_text_or_nothing_known_gets_no_notice(name):
    assert not any(" is plain text" in w for w in extract_bytes(TEXT, name).warnings)


def test_html_named_txt_and_csv_named_xlsx_say_what_they_are():
    html = b"<!doctype html><html><head><title>T</title></head><body><h1>Hours</h1><p>Open at nine.</p></body></html>"
    assert misnamed_notice("page.txt", MediaType.HTML) == "page.txt is an HTML page, not a text file: read as an HTML page"
    assert any(w.startswith("page.txt is an HTML page") for w in extract_bytes(html, "page.txt").warnings)
    assert misnamed_notice("page.html", MediaType.HTML) is None
    assert misnamed_notice("sheet.xlsx", MediaType.CSV) == "sheet.xlsx is a CSV table, not an Excel workbook: read as a CSV table"


@pytest.mark.parametrize("head", [b"{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}} Hello world}",
                                  b"\xef\xbb\xbf  \r\n{\\rtf1 Hello}"])
@pytest.mark.parametrize("name", ["memo.rtf", "memo.txt", "memo.docx"])
def test_rtf_is_refused_with_the_reason_whatever_its_name(head, name):
    with pytest.raises(ExtractionError) as e:
        extract_bytes(head, name)
    assert "RTF (Rich Text Format) is not read here" in e.value.reason
    assert "save it as DOCX, ODT or PDF" in e.value.reason


def test_text_mentioning_rtf_is_not_rtf():
    doc = extract_bytes(b"The word {\\rtf appears in this sentence about RTF files.\n", "about.txt")
    assert "RTF" in doc.canonical
