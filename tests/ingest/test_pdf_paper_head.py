"""A paper's first page as a PDF sets it (a new user's walk, 2026-12-07, tika's testJournalParser.pdf): a title
wrapped over two blocks, a byline one point above the body, section headings in small capitals. The title's last
line became the document's first heading and the byline every chunk's section; "I. INTRODUCTION" was no heading."""

from __future__ import annotations

import pymupdf

from rag.ingest.chunk import chunk_document
from rag.ingest.pdf.extract import extract_pdf
from rag.ingest.pdf.pdf_text import is_byline

BODY = ("Microscale robotic systems have many applications in areas such as medicine and assembly. "
        "Each robot is driven by one global control signal, so many robots must be told apart by design. ")


def _paper() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((60, 40), "Scalability of Controlling Heterogenous", fontsize=20)
    page.insert_text((60, 64), "Stress-Engineered MEMS Microrobots through", fontsize=20)
    page.insert_text((60, 88), "Common Control Signal using Electrostatic", fontsize=20)
    page.insert_text((240, 122), "Hysteresis", fontsize=20)  # the title's last line, a block of its own
    page.insert_text((200, 150), "Vahid Foroutan1*, Ratul Majumdar1", fontsize=11)
    page.insert_text((120, 166), "1Department of Electrical Engineering, University of Illinois, Chicago, USA",
                     fontsize=7)
    y = 200
    for number, big, small in (("I.", "I", "NTRODUCTION"), ("II.", "S", "TRESS-ENGINEERED ROBOT")):
        page.insert_text((60, y), number, fontsize=10)
        x = 60 + pymupdf.get_text_length(number + " ", fontsize=10)
        page.insert_text((x, y), big, fontsize=10)
        x += pymupdf.get_text_length(big, fontsize=10)
        page.insert_text((x, y), small, fontsize=8)  # small capitals: the letters after the first are smaller
        y += 16
        for sentence in (BODY * 2).split(". ")[:-1]:
            page.insert_text((60, y), sentence.strip() + ".", fontsize=10)
            y += 13
        y += 12
    data = doc.tobytes()
    doc.close()
    return data


def test_a_papers_title_byline_and_small_capital_headings():
    doc = extract_pdf(_paper(), "paper.pdf", use_ocr=False)
    heads = [h.title for h in doc.headings]
    assert heads == ["I. INTRODUCTION", "II. STRESS-ENGINEERED ROBOT"]
    assert "Vahid Foroutan1*, Ratul Majumdar1" in doc.canonical  # the byline is the page's text, not a heading
    assert "Electrostatic Hysteresis" in doc.canonical  # the title read whole
    for chunk in chunk_document(doc):
        assert not any("Foroutan" in s or s == "Hysteresis" for s in chunk.section)


def test_a_byline_is_told_from_a_heading():
    assert is_byline("Vahid Foroutan1*, Ratul Majumdar1") and is_byline("Ann Lee\u2020, Bo Chen")
    assert not is_byline("Python3 and Java") and not is_byline("Chapter 12") and not is_byline("Results, 2023")
