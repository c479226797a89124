"""Spaces the PDF's text layer holds where the page shows no gap (rag.ingest.pdf.spaces): some producers write a
space inside a ligature's box, and MuPDF reads "fi elds" for the "fields" a reader sees (a new user's walk,
2026-12-07: an Appligent white paper set in MinionPro, 30+ words cut). Pages are written here with the same
glyph positions; real word spaces stay."""

from __future__ import annotations

import pymupdf
import pytest

from rag.ingest.pdf.extract import extract_pdf


def _page(ops: list[str]) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "x", fontname="helv", fontsize=12)  # puts Helvetica in the page's resources
    body = "\n".join(f"BT /helv 12 Tf 72 {700 - 20 * i} Td {op} ET" for i, op in enumerate(ops))
    doc.update_stream(page.get_contents()[0], body.encode())
    return doc.tobytes()


def test_a_space_drawn_inside_a_ligature_is_not_a_word_break():
    pdf = _page([
        "[(The fi) 400 ( ) -122 (elds are \\(fi) 400 ( ) -122 (lled\\) here, if it is e) (ffi) 700 (  ) -144 (cient.)] TJ",
        "[(It is signi) (.) 278 (ficant, and so is this.)] TJ",
    ])
    plain = pymupdf.open(stream=pdf, filetype="pdf")[0].get_text()
    assert "The fi elds are (fi lled) here, if it is effi  cient." in plain and "signi.ficant" in plain  # the cuts
    doc = extract_pdf(pdf, "ligatures.pdf")
    text = " ".join(doc.canonical.split())
    assert "The fields are (filled) here, if it is efficient." in text
    assert "It is significant, and so is this." in text
    assert doc.page_coverage == (1.0,)


def test_ordinary_word_spaces_and_periods_stay():
    # tight tracking overlaps every space with the letter before it, but never puts it inside that letter (a review,
    # 2026-12-07: a first rule read "Breaking news today" set at -120 tracking as "Breakingnewstoday")
    tight = " 120 ".join(f"({c})" for c in "Breaking news today")
    pdf = _page(["(Wait for it. If it fails, call us at 5 p.m. on Monday.) Tj", "[(wide) -300 ( ) (gap)] TJ",
                 f"[{tight}] TJ"])
    text = " ".join(extract_pdf(pdf, "plain.pdf").canonical.split())
    assert "Wait for it. If it fails, call us at 5 p.m. on Monday." in text and "wide gap" in text
    assert "Breaking news today" in text


def test_the_audit_finds_a_word_the_text_layer_cut_in_three():
    from rag.ingest.pdf.audit import page_coverage

    (cov,) = page_coverage(["The XForms standard only speci.f ies the data."], ["The XForms standard only "
                                                                                  "specifies the data."])
    assert (cov.found, cov.reference) == (9, 9)  # "speci", "f" and "ies" are found as "specifies"


def test_right_to_left_words_keep_their_spaces(cases_dir):
    # Arabic glyphs are placed right to left: a space's box lies before the letter it follows, which is no ligature
    path = cases_dir / "wild" / "files" / "pdfjs" / "ArabicCIDTrueType.pdf"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    assert "انواع اخلطوط العربية" in extract_pdf(path.read_bytes(), path.name).canonical


def test_the_audit_does_not_take_three_glued_words_for_one():
    from rag.ingest.pdf.audit import page_coverage

    (cov,) = page_coverage(["Breaking news today in the town"], ["Breakingnewstoday in the town"])
    assert (cov.found, cov.reference) == (3, 6)


def test_replacement_text_keeps_its_spaces():
    # the iPhone User Guide (itext's test PDFs, a walk, 2026-12-07) draws its buttons as icons with /ActualText "the
    # Pause button"; MuPDF places the replacement's letters at one point, and "Tap the Pause button to pause the
    # message" was read "Tap thePausebuttontopausethemessage"
    pdf = _page(["(Tap ) Tj /Span <</ActualText (the Pause button)>> BDC (||) Tj EMC ( to pause the message.) Tj"])
    text = " ".join(extract_pdf(pdf, "guide.pdf").canonical.split())
    assert "the Pause button" in text and "thePausebutton" not in text
