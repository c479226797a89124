"""Text drawn twice at nearly one place is read once (rag.ingest.pdf.overprint): a drop shadow under a title, a
"bold" printed twice. A Scholastic/NIDA newsletter read "The Science The Science" (a new user's walk, 2026-12-07)."""

from __future__ import annotations

import pymupdf

from rag.ingest.pdf.extract import extract_pdf


def _newsletter() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    for dx, colour in ((2.5, (0.6, 0.6, 0.6)), (0.0, (0.1, 0.2, 0.6))):  # the shadow first, then the title over it
        page.insert_text((72 + dx, 120 + dx), "The Science", fontsize=60, color=colour)
    for dx in (0.0, 0.3):  # a line printed twice, a little to the side: a made-up bold
        page.insert_text((72 + dx, 200), "Addiction can be far-reaching.", fontsize=14)
    for y in (260, 280):  # the same words at two places of a table: both stay
        page.insert_text((72, y), "Yes", fontsize=11)
        page.insert_text((200, y), f"Row {y}", fontsize=11)
    return doc.tobytes()


def test_a_shadow_and_a_printed_bold_are_read_once_and_the_audit_knows():
    doc = extract_pdf(_newsletter(), "newsletter.pdf")
    text = " ".join(doc.canonical.split())
    assert text.count("The Science") == 1 and text.count("far-reaching") == 1
    assert text.count("Yes") == 2 and "Row 260" in text and "Row 280" in text
    assert doc.page_coverage == (1.0,)  # the second drawing is removed on purpose, not lost
