"""ui.view (the viewer's rendering) on real inputs: the DPR paper (two columns, ligatures, hyphenation) and a corpus chapter."""

from __future__ import annotations

import html
import io
import re

import pymupdf
import pytest

from ui.view.pdf import (
    best_page,
    locate_quote,
    render_pdf_page,
    static_url,
)
from ui.view.text import highlight_html, scrolling_document

# As the canonical text holds it: "ef-\nﬁcient" joined, the U+FB01 ligature expanded, lines re-flowed.
ABSTRACT = (
    "Open-domain question answering relies on efficient passage retrieval to select candidate contexts, "
    "where traditional sparse vector space models, such as TF-IDF or BM25, are the de facto method."
)


@pytest.fixture(scope="module")
def dpr(corpus_dir):
    return corpus_dir / "pdfs" / "01-dpr-paper-two-column-13p.pdf"


def test_literal_search_misses_canonical_quote_but_alignment_finds_it(dpr):
    with pymupdf.open(dpr) as doc:
        page = doc[0]
        assert page.search_for(ABSTRACT) == []  # why the alignment exists
        rects, coverage = locate_quote(page, ABSTRACT)
        assert coverage == 1.0
        lines = [page.get_textbox(r).strip() for r in rects]
    assert len(rects) == 5
    assert lines[0].startswith("Open-domain question answering")
    assert lines[-1].startswith("facto method")


def test_quote_is_not_found_on_another_page(dpr):
    with pymupdf.open(dpr) as doc:
        rects, coverage = locate_quote(doc[1], ABSTRACT)
    assert rects == [] and coverage == 0.0


def test_right_column_quote_on_page_3(dpr):
    with pymupdf.open(dpr) as doc:
        page = doc[2]
        text = page.get_text()
        # a sentence as it reads in the page, re-flowed onto one line
        quote = " ".join(
            "the similarity function needs to be decomposable so that the represen- tations".replace("- ", "").split()
        )
        rects, coverage = locate_quote(page, quote)
    assert "decomposable" in text
    assert coverage == 1.0 and rects


def test_render_highlights_quote_in_yellow(dpr):
    pv = render_pdf_page(dpr, 1, ABSTRACT, dpi=72)
    plain = render_pdf_page(dpr, 1, "", dpi=72)
    assert pv.page == 1 and pv.highlights == 5 and pv.coverage == 1.0
    assert pv.png.startswith(b"\x89PNG") and pv.png != plain.png
    pix = pymupdf.Pixmap(pv.png)
    with pymupdf.open(dpr) as doc:
        rect = locate_quote(doc[0], ABSTRACT)[0][0]
    # most pixels of the first highlighted line are yellow (72 dpi: points = pixels); none are without it
    def yellow_share(pixmap):
        pts = [(x, y) for x in range(int(rect.x0) + 1, int(rect.x1) - 1, 3) for y in range(int(rect.y0) + 1, int(rect.y1) - 1, 2)]
        rgb = [pixmap.pixel(x, y)[:3] for x, y in pts]
        return sum(r > 200 and g > 150 and b < 120 for r, g, b in rgb) / len(rgb)

    assert yellow_share(pix) > 0.5
    assert yellow_share(pymupdf.Pixmap(plain.png)) == 0.0


def test_render_from_bytes_and_bad_page(dpr):
    data = dpr.read_bytes()
    assert render_pdf_page(data, 13, dpi=40).page == 13
    with pytest.raises(ValueError, match="page 14 is outside 1..13"):
        render_pdf_page(data, 14)
    with pytest.raises(ValueError, match="page 0"):
        render_pdf_page(data, 0)


def test_highlight_html_marks_range_and_escapes(corpus_dir):
    text = (corpus_dir / "docs" / "06-semantic-search-faiss.md").read_text(encoding="utf-8")
    needle = "FAISS"
    start = text.index(needle)
    end = start + len(needle)
    out = highlight_html(text, start, end)
    assert f'<mark id="cited" style="background: #ffe066; padding: 0 1px;">{needle}</mark>' in out
    assert out.count("<mark") == 1
    # everything outside the tags is the escaped document, in order
    inner = out.split(">", 1)[1].rsplit("</div>", 1)[0]
    inner = inner.replace(inner[inner.index("<mark") : inner.index(">", inner.index("<mark")) + 1], "")
    assert html.unescape(inner.replace("</mark>", "")) == text


def test_highlight_html_escapes_hostile_text():
    text = 'before <script>alert("x")</script> & <img src=x onerror=1> after'
    s = text.index("<script>")
    out = highlight_html(text, s, s + len("<script>alert(\"x\")</script>"))
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;" in out and "&amp;" in out


def test_highlight_html_context_and_bounds():
    text = "a" * 100 + "CITED" + "b" * 100
    out = highlight_html(text, 100, 105, context_chars=10)
    assert ">CITED</mark>" in out and "…" + "a" * 10 + "<mark" in out and "b" * 10 + "…" in out
    assert "a" * 11 not in out
    with pytest.raises(ValueError, match="outside the text"):
        highlight_html(text, 150, 300)
    doc = scrolling_document(out, title="<b>x</b>.md")
    assert "scrollIntoView" in doc and "&lt;b&gt;x&lt;/b&gt;.md" in doc


def test_static_url_links_only_a_served_copy():
    served = "0" * 32 + "/" + "f" * 32 + ".pdf"  # <key>/<token>.pdf (rag.served)
    assert static_url(served, 3) == f"/app/static/{served}#page=3" and static_url(served) == f"/app/static/{served}"
    for bad in ("ab" * 32 + ".pdf", "x/../y", "../" + served, "0" * 32 + "/../../etc/passwd", ""):
        with pytest.raises(ValueError, match="not a served copy"):
            static_url(bad)


def test_best_page_follows_the_words_across_a_page_break(dpr):
    # the end of page 2's footnote, then the first lines of page 3: most of the words are on page 3
    quote = (
        "Exceptions include (Seo et al., 2019) and (Roberts et al., 2020), which retrieves and generates the answers, "
        "respectively. At run-time, DPR applies a different encoder EQ(·) that maps the input question to a "
        "d-dimensional vector, and retrieves k passages of which vectors are the closest to the question vector. "
        "We define the similarity between the question and the passage using the dot product of their vectors:"
    )
    page, share = best_page(dpr, quote, 2, 3)
    assert page == 3 and 0.5 < share < 1.0
    assert best_page(dpr, ABSTRACT, 1, 2) == (1, 1.0)


def test_focused_render_is_cropped_around_the_quote(dpr):
    full = render_pdf_page(dpr, 1, ABSTRACT, dpi=72)
    focused = render_pdf_page(dpr, 1, ABSTRACT, dpi=72, focus_margin=40)
    a, b = pymupdf.Pixmap(full.png), pymupdf.Pixmap(focused.png)
    assert b.width == a.width and b.height < a.height / 3
    assert focused.highlights == full.highlights == 5


def test_quote_on_a_scanned_page_is_highlighted_from_ocr_words(cases_dir):
    from rag.ingest.ocr import available

    if not available():
        pytest.skip("OCR engine not installed")
    pv = render_pdf_page(cases_dir / "c07_scanned_mixed.pdf", 2, "Page 2 is only a picture: due date 14 March.")
    assert pv.highlights == 1 and pv.coverage > 0.9


# --------------------------------------------------------------------------- issue 17: the in-app viewer's views


def test_pdf_view_slices_pages_around_the_cited_one_and_outlines_the_quote(dpr):
    from ui.view.pdf import pdf_view

    v = pdf_view(dpr, 1, ABSTRACT)
    assert (v.first_page, v.page_count, v.page, v.coverage) == (1, 4, 1, 1.0)
    assert len(v.annotations) == 5 and {a["page"] for a in v.annotations} == {1}
    with pymupdf.open(stream=v.pdf, filetype="pdf") as sliced, pymupdf.open(dpr) as doc:
        assert sliced.page_count == 4 and sliced[0].get_text() == doc[0].get_text()
        first = locate_quote(doc[0], ABSTRACT)[0][0]
    a = v.annotations[0]
    assert a["x"] == pytest.approx(first.x0 - 1) and a["y"] == pytest.approx(first.y0 - 1)  # PDF points, top-left
    v = pdf_view(dpr, 9, "")
    assert (v.first_page, v.page_count, v.page, v.annotations) == (6, 7, 4, [])
    with pytest.raises(ValueError, match="page 99 is outside 1..13"):
        pdf_view(dpr, 99, "")


def test_render_blocks_marks_the_range_across_blocks_and_escapes():
    from ui.view.text import render_blocks

    text = "# Title <b>\n\nFirst para <x>.\n\n| a | b |\n| --- | --- |\n| 1 \\| 2 | 3 |\n| 4 | 5 |\n\nLast."
    start = text.index("para")
    end = text.index("| 4") - 1
    out = render_blocks(text, start, end)
    assert out.startswith("<h1>Title &lt;b&gt;</h1><p>First <mark class=\"cited\" id=\"cited\">para &lt;x&gt;.</mark></p>")
    assert '<tr class="cited"><td><mark class="cited">1 | 2</mark></td><td><mark class="cited">3</mark></td></tr>' in out
    assert "<tr><td>4</td><td>5</td></tr>" in out and out.endswith("<p>Last.</p>")
    assert out.count('id="cited"') == 1
    with pytest.raises(ValueError):
        render_blocks(text, 5, 999)


def test_slide_and_sheet_views():
    from rag.ingest.extract import extract_bytes
    from rag.types import LocatorKind
    from ui.view.text import parts_of_kind, sheet_html, slide_html

    rows = "\n".join(f"{i},item {i}" for i in range(1, 80))
    doc = extract_bytes(("id,name\n" + rows).encode(), "items.csv")
    start = doc.canonical.index("| 40 |")
    sheet = parts_of_kind(doc.parts, LocatorKind.ROWS, start)
    out = sheet_html(doc.canonical, sheet, start, start + 5, context_rows=3)
    numbers = [int(n) for n in re.findall(r'<td class="rownum">(\d+)</td>', out)]
    assert numbers == [1, 38, 39, 40, 41, 42, 43, 44]  # header, 3 rows either side of row 41 (id 40)
    assert '<tr class="cited"' in out and "\u22ee" in out
    import samples

    deck = extract_bytes(samples.pptx_bytes(), "d.pptx")
    start = deck.canonical.index("collision")
    out = slide_html(deck.canonical, deck.parts[1], start, start + 9, 3)
    assert "Slide 2 of 3" in out and '<div class="rag-notes"><h2>Speaker notes</h2><p>Tell the story of the 2023 ' \
        '<mark class="cited" id="cited">collision</mark>' in out


def test_image_region_is_outlined():
    from PIL import Image

    from ui.view.text import image_region_png

    png = image_region_png(Image.new("RGB", (400, 200), "white"), (100, 50, 300, 150))
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.size == (400, 200)
    assert img.getpixel((10, 10)) == (255, 255, 255)  # outside: untouched
    r, g, b = img.getpixel((200, 100))  # inside: tinted yellow
    assert r > 240 and g > 230 and b < 230
    r, g, b = img.getpixel((100, 100))  # on the outline: orange
    assert r > 200 and g < 180 and b < 60


def test_pdf_view_rewrites_a_repaired_pdf_that_cannot_be_sliced(cases_dir):
    """c09_truncated.pdf opens (MuPDF repairs it) but ``select`` raises: the Source page showed a traceback, and
    the stored bytes alone render blank in PDF.js. The view is a fresh PDF of the pages, text and quote kept."""
    from ui.view.pdf import pdf_view

    path = cases_dir / "c09_truncated.pdf"
    quote = "Contract clause 1: payment due in 30 days."
    for pdf in (path, path.read_bytes()):
        v = pdf_view(pdf, 1, quote)
        assert (v.first_page, v.page) == (1, 1) and v.coverage == 1.0 and v.annotations
        with pymupdf.open(stream=v.pdf, filetype="pdf") as out:
            assert out.page_count == v.page_count and quote in out[0].get_text()


def test_the_viewer_s_pages_are_cropped_to_their_text_and_the_outline_follows():
    """Issue 42: fitted to a phone's width, a page opened at 51 % and the outlined quote could not be read; the
    pages are now cut to their text's width, and the quote's outline moves with the crop."""
    from ui.view.pdf import CROP_MARGIN, pdf_view

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(150, 100, 420, 300), "The ferry leaves the harbour at nine every morning.",
                        fontsize=11)
    data = doc.tobytes()
    view = pdf_view(data, 1, "The ferry leaves the harbour at nine every morning.")
    cut = pymupdf.open(stream=view.pdf)[0]
    assert cut.rect.width < 0.7 * 595  # narrower: the same text shows larger at the viewer's width
    words = cut.get_text("words")
    assert min(w[0] for w in words) == pytest.approx(CROP_MARGIN, abs=1.0)  # the text's left edge, plus the margin
    (note,) = view.annotations
    assert note["x"] == pytest.approx(words[0][0] - 1, abs=1.0)  # the outline sits on the words in the cut page
