"""Text layers in other scripts and garbled layers (issue 28 item 2): the letter statistics that call a page
unreadable describe Latin text only; OCR never replaces a layer in a script it reads worse; unmapped
glyphs are counted; a page too large to render for OCR says so."""

from __future__ import annotations

import pymupdf
import pytest

from rag.errors import ExtractionError
from rag.ingest.pdf.audit import page_coverage, words
from rag.ingest.pdf.extract import extract_pdf
from rag.ingest.pdf.quality import garbled_chars, main_script, ocr_reads_worse, unreadable

CHINESE = ("重庆万州经济技术开发集团有限公司二零二一年度第二期债务融资工具定向募集说明书本页为签字页本页无正文 " * 3).strip()
GREEK = " ".join(["Η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο και τρέχει στο δάσος"] * 3)
SHIFTED = " ".join(["Wkh txlfn eurzq ira mxpsv ryhu wkh odcb grj dqg uxqv lqwr wkh iruhvw"] * 3)


def test_other_scripts_are_never_called_unreadable_by_the_latin_statistics():
    assert main_script(CHINESE) == "CJK" and main_script(GREEK) == "GREEK"
    assert not unreadable(CHINESE) and not unreadable(GREEK)
    assert unreadable(SHIFTED)  # a Caesar-shifted English layer still is
    assert unreadable("\ufffd\ufffd\ufffd " * 20)


def test_ocr_that_reads_the_layers_script_worse_never_replaces_it():
    assert ocr_reads_worse(CHINESE, "2021 3 31 ABC")
    assert not ocr_reads_worse(CHINESE, CHINESE[:-5])
    assert not ocr_reads_worse(SHIFTED, " ".join(["The quick brown fox jumps over the lazy dog and runs into the forest"] * 3))


def test_unmapped_glyphs_are_counted():
    assert garbled_chars("Total \ufffd\ufffd 42 \ue000") == 3
    assert garbled_chars("Total 42") == 0


def test_the_audit_compares_unspaced_scripts_character_by_character():
    # vertical text: PyMuPDF's plain text has one character per line; the canonical text reads the words
    assert words("日本語") == ["日", "本", "語"]
    cov = page_coverage(["あ\nい\nう\nえ\nお\n日\n本\n語"], ["あいう えお\n\n日本語"])
    assert cov[0].share == 1.0


def test_a_page_too_large_to_render_for_ocr_is_named_as_such():
    doc = pymupdf.open()
    page = doc.new_page(width=14400, height=14400)
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(200)
    page.insert_image(page.rect, pixmap=pix)
    with pytest.raises(ExtractionError, match=r"page 1 is 14,400 x 14,400 pt .* too large to read by OCR"):
        extract_pdf(doc.tobytes(), "poster.pdf")
