"""PDF section headings set bold in the body's size (issue 27: a story anthology's titles were lost, so a question
naming the story could not find its ending), and decorative rules that are never headings."""

from __future__ import annotations

import pymupdf

from rag.ingest.chunk import chunk_document
from rag.ingest.pdf.extract import extract_pdf
from rag.ingest.pdf.layout import Line, paragraphs_of
from rag.ingest.pdf.pdf_text import is_bold_title, is_ornament, is_prose

PROSE = "Once upon a time there was a hen who had a large brood of chickens, and all of them were plump"


def _line(text, x0, y, x1, bold, size=10.5, block=1):
    return Line(text, x0, y, x1, y + 12, size, bold, block, 800)


def test_a_short_bold_line_over_a_regular_byline_is_a_paragraph_of_its_own():
    lines = [_line("The Half-Chick", 57, 83, 131, True), _line("by Anonymous, from Spanish Tradition.", 57, 96, 240, False),
             _line(PROSE, 57, 109, 555, False), _line(PROSE, 57, 122, 555, False)]
    paras = paragraphs_of(lines)
    assert [len(p) for p in paras] == [1, 3]
    assert paras[0][0].text == "The Half-Chick"


def test_a_bold_run_in_phrase_filling_its_line_stays_in_its_paragraph():
    lines = [_line("Important: the valve must be closed before the pump is started, always and", 57, 83, 555, True),
             _line(PROSE, 57, 96, 555, False), _line(PROSE, 57, 109, 555, False)]
    assert [len(p) for p in paragraphs_of(lines)] == [3]


def test_bold_title_rules():
    def para(text, bold=True, size=10.5):
        return [_line(text, 57, 83, 200, bold, size)]

    assert is_bold_title(para("The Half-Chick"), "The Half-Chick", 10.5)
    assert not is_bold_title(para("The Half-Chick", bold=False), "The Half-Chick", 10.5)
    for text in ("About this document 1", "Hala Faragalla 1,*, Anna Plotkin 2", "Copyright:", "figure one",
                 "xyxyxyxyxyx", "It ends. Then it goes on"):
        assert not is_bold_title(para(text), text, 10.5), text
    assert is_ornament("xyxyxyxyxyx") and is_ornament("gtgtgtgtg gtgtgtgtg") and not is_ornament("Hiawatha")
    assert is_prose(PROSE) and not is_prose("Top-20 Top-100 78.4 85.4 79.4 85.0 73.2 81.4")


def _story_pdf(title_bold: bool = True, bold_everywhere: bool = False) -> bytes:
    d = pymupdf.open()
    body_font = "hebo" if bold_everywhere else "helv"
    for title, word in (("The Copper Kettle", "kettle"), ("The Lantern Keeper", "lantern")):
        p = d.new_page(width=500, height=700)
        p.insert_text((40, 60), title, fontsize=10, fontname="hebo" if title_bold else "helv")
        for k in range(20):
            p.insert_text((40, 90 + 14 * k), f"The {word} was polished every morning and every night, line {k}, and so it went",
                          fontsize=10, fontname=body_font)
    return d.tobytes()


def test_bold_story_titles_become_sections_of_their_chunks():
    doc = extract_pdf(_story_pdf(), "stories.pdf", use_ocr=False)
    assert [h.title for h in doc.headings] == ["The Copper Kettle", "The Lantern Keeper"]
    last = [c for c in chunk_document(doc) if "lantern" in c.content][-1]
    assert "The Lantern Keeper" in last.text[: len(last.text) - len(last.content)]


def test_no_bold_titles_where_bold_is_the_body_or_titles_are_regular():
    assert extract_pdf(_story_pdf(title_bold=False), "plain.pdf", use_ocr=False).headings == ()
    assert extract_pdf(_story_pdf(bold_everywhere=True), "allbold.pdf", use_ocr=False).headings == ()


def test_anthology_story_titles_are_headings_and_its_ornaments_are_not(corpus_dir):
    name = "07-book-pd-kids-anthology.pdf"
    doc = extract_pdf((corpus_dir / "pdf-dev" / "docs" / name).read_bytes(), name, use_ocr=False)
    titles = [h.title for h in doc.headings]
    assert "The Half-Chick" in titles and "Hiawatha" in titles
    assert not any(is_ornament(t) for t in titles), titles
    steeple = next(c for c in chunk_document(doc) if "fastened to the top of the steeple" in c.content)
    assert "The Half-Chick" in steeple.text[: len(steeple.text) - len(steeple.content)]


def test_a_bold_table_header_row_is_no_heading(corpus_dir):
    name = "01-dpr-paper-two-column-13p.pdf"
    doc = extract_pdf((corpus_dir / "pdfs" / name).read_bytes(), name, use_ocr=False)
    titles = [h.title for h in doc.headings]
    assert "Sim Loss Retrieval Accuracy" not in titles and "Introduction" in " ".join(titles)


def _book_pdf(pages: list[tuple[str, str]], toc: list[list]) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for head, body in pages:
        page = doc.new_page()
        y = 72
        for line in head.split("\n"):
            page.insert_text((72, y), line, fontsize=18)
            y += 26
        for line in body.split("\n"):
            page.insert_text((72, y + 10), line, fontsize=10)
            y += 14
    doc.set_toc(toc)
    return doc.tobytes()


def test_outline_titles_match_their_headings_across_quotes_number_words_and_part_lines():
    """freeculture.pdf and mupdf_explored.pdf (a new user's walk, 2026-12-07): the outline's '"PIRACY"' and
    'Chapter 1: Creators' against the pages' curly quotes and "CHAPTER ONE", its "I The MuPDF C API" against
    "Part I" above "The MuPDF C API", and an entry "Naming" taking its chapter's "Naming Conventions"."""
    from rag.ingest.extract import extract_bytes

    body = "Text of the page runs here in the body size.\nIt goes on for another line of plain words."
    pages = [("\u201cPIRACY\u201d", body), ("CHAPTER ONE: Creators", body), ("Part I\nThe MuPDF C API", body),
             ("Naming Conventions", body + "\nNaming\nNames follow the prefix rule in every module.")]
    toc = [[1, '"PIRACY"', 1], [2, "Chapter 1: Creators", 2], [1, "I The MuPDF C API", 3],
           [2, "Naming Conventions", 4], [3, "Naming", 4]]
    doc = extract_bytes(_book_pdf(pages, toc), "book.pdf")
    got = [(h.title, doc.page_at(h.start)) for h in doc.headings]
    assert ('"PIRACY"', 1) in got and ("Chapter 1: Creators", 2) in got and ("I The MuPDF C API", 3) in got
    assert ("Naming Conventions", 4) in got


def test_a_running_head_that_changes_with_the_chapter_is_furniture():
    """mupdf_explored.pdf (a new user's walk, 2026-12-07): 125 heads such as "CHAPTER 8. THE DOCUMENT INTERFACE 30",
    set below the usual header zone, stayed in the text and ran into quoted passages. A chapter's own big title,
    and a small top line repeated far apart, stay."""
    import pymupdf

    from rag.ingest.extract import extract_bytes

    doc = pymupdf.open()
    body = ["The context holds the allocator and the locks of one thread of work.",
            "Every call takes the context as its first argument, by convention."]
    for n in range(1, 13):
        page = doc.new_page()
        chapter = 1 if n <= 6 else 2
        if n in (1, 7):
            page.insert_text((72, 120), f"Chapter {chapter}", fontsize=20)
            page.insert_text((72, 150), "Introduction" if chapter == 1 else "The Context", fontsize=20)
        else:
            page.insert_text((72, 100), f"CHAPTER {chapter}. {'INTRODUCTION' if chapter == 1 else 'THE CONTEXT'}",
                             fontsize=10)
            page.insert_text((500, 100), str(n), fontsize=10)
        y = 200
        for line in body * 3:
            page.insert_text((72, y), line + f" Page {n}.", fontsize=10)
            y += 14
    text = extract_bytes(doc.tobytes(), "book.pdf").canonical
    assert "CHAPTER 1. INTRODUCTION" not in text and "CHAPTER 2. THE CONTEXT" not in text
    assert "Chapter 2" in text and "The Context" in text and text.count("by convention.") == 36


def test_titles_and_table_headers_at_the_top_of_pages_are_no_running_heads():
    """A reviewer's probe (2026-12-07): "Chapter 1" ... "Chapter 4" in the body size, and a table's header row
    repeated at the top of four pages, were dropped as running heads; no page number stands beside them."""
    import pymupdf

    from rag.ingest.extract import extract_bytes

    doc = pymupdf.open()
    for n in range(8):
        page = doc.new_page()
        if n % 2 == 0:
            page.insert_text((72, 110), f"Chapter {n // 2 + 1}", fontsize=11)
        else:
            for x, head in ((72, "Account Name"), (250, "Region"), (400, "Balance")):
                page.insert_text((x, 110), head, fontsize=11)
        for k in range(20):
            page.insert_text((72, 150 + 20 * k), f"The committee reviewed line {k} of page {n} in detail.", fontsize=11)
    text = extract_bytes(doc.tobytes(), "report.pdf").canonical
    assert all(f"Chapter {c}" in text for c in range(1, 5)) and text.count("Account Name") == 4


def test_a_title_repeated_over_every_page_is_read_once_where_it_first_stands():
    """camelot's vertical_header.pdf (a new user's walk, 2026-12-07): "PRIMARY ELECTION, AUGUST 7, 2018", large over
    each page of a county's results, was dropped as a running head and stood nowhere in the text. A small running
    head is still furniture."""
    import pymupdf

    from rag.ingest.extract import extract_bytes

    doc = pymupdf.open()
    for n in range(5):
        page = doc.new_page()
        page.insert_text((150, 50), "PRIMARY ELECTION, AUGUST 7, 2018", fontsize=18)
        page.insert_text((72, 75), "Alcona County clerk", fontsize=8)
        for k in range(20):
            page.insert_text((72, 150 + 20 * k), f"Precinct {k} of district {n} reported its votes on time.",
                             fontsize=11)
    got = extract_bytes(doc.tobytes(), "results.pdf")
    assert got.canonical.count("PRIMARY ELECTION, AUGUST 7, 2018") == 1
    assert got.canonical.index("PRIMARY ELECTION") < got.canonical.index("Precinct 0 of district 0")
    assert "Alcona County clerk" not in got.canonical
