"""Symbol-font characters as a reader sees them (rag/ingest/office/symbol_fonts.py): a Word checklist's tick
(``w:sym`` in Wingdings, or "ü" in a run set in Wingdings) is ✓, Symbol's Latin letters are Greek; another font's
private-use code stays out."""

from __future__ import annotations

import ooxml_samples as S

from rag.ingest.extract import extract_bytes
from rag.ingest.office.symbol_fonts import symbol_char, symbol_text


def test_the_tables():
    assert symbol_char("Wingdings", 0xF0FC) == "✓" and symbol_char("wingdings", 0xFC) == "✓"
    assert symbol_char("Wingdings", 0xF0FE) == "☑" and symbol_char("Wingdings 2", 0xF050) == "✓"
    assert symbol_text("Symbol", "a = 2p r") == "α = 2π ρ"  # digits, spaces and "=" are themselves
    assert symbol_char("Symbol", 0xF0B3) == "≥" and symbol_char("Wingdings", 0xF0B7) == ""  # a clock face: nothing
    assert symbol_char("Calibri", 0xF0FC) == "" and symbol_char(None, 0x2713) == "✓"
    assert symbol_text("Arial", "ü") == "ü"
    # real Unicode written in a symbol-font run stays itself (a review, 2026-12-07)
    assert symbol_text("Symbol", "±0.5 µm, θ ≤ 30°") == "±0.5 µμ, θ ≤ 30°" and symbol_text("Wingdings", "✓") == "✓"


def test_ticks_and_greek_in_a_word_checklist():
    body = ('<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Control</w:t></w:r></w:p></w:tc>'
            '<w:tc><w:p><w:r><w:t>Level 1</w:t></w:r></w:p></w:tc></w:tr>'
            '<w:tr><w:tc><w:p><w:r><w:t>Passwords are hashed</w:t></w:r></w:p></w:tc>'
            '<w:tc><w:p><w:r><w:sym w:font="Wingdings" w:char="F0FC"/></w:r></w:p></w:tc></w:tr>'
            '<w:tr><w:tc><w:p><w:r><w:t>Sessions expire</w:t></w:r></w:p></w:tc>'
            '<w:tc><w:p><w:r><w:rPr><w:rFonts w:ascii="Wingdings" w:hAnsi="Wingdings"/></w:rPr><w:t>\u00fb</w:t></w:r>'
            '</w:p></w:tc></w:tr></w:tbl>'
            '<w:p><w:r><w:t xml:space="preserve">The error is below 5 </w:t></w:r>'
            '<w:r><w:rPr><w:rFonts w:ascii="Symbol" w:hAnsi="Symbol"/></w:rPr><w:t>m</w:t></w:r>'
            '<w:r><w:t xml:space="preserve">m at </w:t></w:r>'
            '<w:r><w:sym w:font="Symbol" w:char="F0B1"/></w:r><w:r><w:t xml:space="preserve">2 degrees.</w:t></w:r>'
            '<w:r><w:sym w:font="Calibri Light" w:char="F0FC"/></w:r></w:p>')
    text = extract_bytes(S.save(S.docx_with_body(body)), "checklist.docx").canonical
    assert "| Passwords are hashed | ✓ |" in text  # before: an empty cell
    assert "| Sessions expire | ✗ |" in text  # before: "û"
    assert "The error is below 5 μm at ±2 degrees." in text  # before: "5 mm at 2 degrees"
