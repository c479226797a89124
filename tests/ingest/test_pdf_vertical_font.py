"""A vertical-writing font set in rows, read along its rows (rag.ingest.pdf.layout.raw_lines)."""

from __future__ import annotations


def _glyph(ch: str, x: float, y: float) -> dict:
    return {"dir": (0.0, 1.0), "wmode": 1, "bbox": (x, y, x + 14, y + 14),
            "spans": [{"text": ch, "size": 14.0, "flags": 0, "font": "MS-Mincho", "bbox": (x, y, x + 14, y + 14)}]}


def test_a_vertical_font_set_in_rows_is_read_along_its_rows():
    """pdfbox's PDFBOX-3127 VFont file: a notice set horizontally in a vertical-writing font, one glyph per line
    (direction down the page); it was read column-wise and backwards, "G N I R A E H C I L B U P F O E C I T O N".
    Glyphs one above another (real vertical text) stay as they were."""
    from rag.ingest.pdf.layout import raw_lines

    row = [_glyph(ch, 100 + 10 * k, 90) for k, ch in enumerate("NOTICE OF HEARING")]
    lines = raw_lines({"blocks": [{"lines": row}]})
    assert [(d, t) for d, t, *_ in lines] == [((1, 0), "NOTICE OF HEARING")]
    column = [_glyph(ch, 300, 90 + 14 * k) for k, ch in enumerate("縦書きの文章です。")]
    lines = raw_lines({"blocks": [{"lines": column}]})
    assert [t for _, t, *_ in lines] == list("縦書きの文章です。") and all(d == (0, 1) for d, *_ in lines)


def test_columns_of_vertical_text_in_one_block_stay_columns():
    """A review's probe (2026-12-07): a Japanese page drawn glyph by glyph, its columns 16-20 pt apart in one MuPDF
    block; the first version joined the glyphs sharing a top across the columns ("なや春りうは...")."""
    from rag.ingest.pdf.layout import raw_lines

    columns = ["春はあけぼの", "やうやう白く", "なりゆく山ぎは"]
    glyphs = [_glyph(ch, 350 - 16 * c, 90 + 20 * k) for c, col in enumerate(columns) for k, ch in enumerate(col)]
    lines = raw_lines({"blocks": [{"lines": glyphs}]})
    assert "".join(t for _, t, *_ in lines) == "".join(columns) and all(d == (0, 1) for d, *_ in lines)


def test_a_page_whose_glyphs_were_joined_into_rows_is_not_audited_word_by_word():
    """PyMuPDF's words on such a page are its single glyphs: the audit warned "text coverage 20.6 %" of a notice read
    whole (seen on the Documents page, 2026-12-07)."""
    from rag.ingest.pdf.layout import joined_vertical_rows

    row = [_glyph(ch, 100 + 10 * k, 90) for k, ch in enumerate("NOTICE OF HEARING")]
    assert joined_vertical_rows({"blocks": [{"lines": row}]})
    column = [_glyph(ch, 300, 90 + 14 * k) for k, ch in enumerate("縦書きの文章です。")]
    assert not joined_vertical_rows({"blocks": [{"lines": column}]})
