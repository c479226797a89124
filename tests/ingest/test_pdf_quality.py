"""Issue 13 on the real PDFs of both corpora and on generated ones: coverage audit, reading order,
hyphens, tables, blank / scanned / unreadable pages, OCR."""

from __future__ import annotations

import re

import pymupdf
import pytest

from rag.ingest.extract import extract_bytes, extract_path
from rag.ingest.ocr import available as ocr_available
from rag.ingest.pdf import audit
from rag.ingest.pdf.extract import extract_pdf, pages_read_by_ocr
from rag.ingest.pdf.quality import unreadable, vowel_share

PDF_DEV = ["01-spec-hdc-protocol.pdf", "02-brochure-de-cc-nc-licences.pdf", "03-govt-us-financial-report-summary.pdf",
           "04-slides-git-github.pdf", "05-article-ki67-breast-cancer.pdf", "06-guide-llncs-latex-class.pdf",
           "07-book-pd-kids-anthology.pdf", "08-paper-twocol-ion-crystal.pdf"]
PDFS = ["01-dpr-paper-two-column-13p.pdf", "02-layoutparser-table-page.pdf", "03-nics-grid-table.pdf",
        "06-malformed-issue-932.pdf"]


def _dev(corpus_dir, name: str):
    return extract_pdf((corpus_dir / "pdf-dev" / "docs" / name).read_bytes(), name, use_ocr=False)


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text)


# --------------------------------------------------------------------------- coverage audit


@pytest.mark.slow
@pytest.mark.parametrize("where,name", [("pdf-dev/docs", n) for n in PDF_DEV] + [("pdfs", n) for n in PDFS])
def test_every_corpus_pdf_keeps_995_permille_of_pymupdf_words(corpus_dir, where, name):
    doc = extract_pdf((corpus_dir / where / name).read_bytes(), name, use_ocr=False)
    assert len(doc.page_coverage) == doc.page_count
    assert min(doc.page_coverage) >= 0.995, [(i + 1, c) for i, c in enumerate(doc.page_coverage) if c < 0.995]
    assert not any("text coverage under" in w for w in doc.warnings)


def test_audit_counts_joined_hyphens_and_flags_lost_text():
    ref = ["Rising sea levels and cli-\nmate change.", "Second page text here."]
    assert [c.share for c in audit.page_coverage(ref, ["Rising sea levels and climate change.",
                                                       "Second page text here."])] == [1.0, 1.0]
    cov = audit.page_coverage(ref, ["Rising sea levels", "Second page text here."])
    assert cov[0].share == pytest.approx(3 / 7) and set(cov[0].missing) == {"and", "cli", "mate", "change"}
    assert audit.low_pages(cov) == [cov[0]]
    # words dropped on purpose (a running header) leave the reference
    cov = audit.page_coverage(["ACME HANDBOOK\nBody text."], ["Body text."], [["ACME HANDBOOK"]])
    assert cov[0].share == 1.0 and cov[0].reference == 2


def test_a_page_losing_text_is_named_in_the_warnings(monkeypatch, cases_dir):
    from rag.ingest.pdf import extract as pdf_mod

    real = pdf_mod.page_paragraphs

    def lossy(lines, lexicon, body, *rest):
        paras = real(lines, lexicon, body, *rest)
        return paras[:-1] if len(paras) > 1 else paras  # a rule that silently drops a page's last paragraph

    monkeypatch.setattr(pdf_mod, "page_paragraphs", lossy)
    doc = extract_pdf((cases_dir / "c30_page_break.pdf").read_bytes(), "c30.pdf")
    assert min(doc.page_coverage) < 0.99
    assert any(w.startswith("text coverage under 99 % of PyMuPDF's words on page(s) 1 (") for w in doc.warnings)


# --------------------------------------------------------------------------- reading order


def test_three_column_legend_box_reads_in_order(corpus_dir):
    doc = _dev(corpus_dir, "02-brochure-de-cc-nc-licences.pdf")
    page2 = doc.canonical[doc.pages[1].start:doc.pages[1].end]
    assert "Dieser Lizenztyp gestattet keine Bearbeitungen. Kommerzielle Nutzungen sind dagegen erlaubt." in page2
    assert "Attribution; Namensnennung\n\nNeben dem Hinweis auf den Autor" in page2


@pytest.mark.parametrize("qid", ["d06", "d07", "d09", "d29", "d30"])
def test_two_column_needles_read_in_order(corpus_dir, qid):
    import json

    q = next(json.loads(x) for x in (corpus_dir / "pdf-dev" / "questions.jsonl").read_text().splitlines()
             if x.strip() and json.loads(x)["id"] == qid)
    doc = _dev(corpus_dir, q["doc"])
    text = _collapse(doc.canonical)
    assert _collapse(q["needle"]) in text
    assert doc.page_at(doc.canonical.index(q["needle"].split()[0] + " " + q["needle"].split()[1])) is not None


def test_block_holding_two_columns_is_split():
    from rag.ingest.pdf.layout import Line, blocks_of

    left = [Line(f"left column sentence number {i} goes on here", 40, 70 + 14 * i, 280, 80 + 14 * i, 10, False, 1, 800)
            for i in range(4)]
    right = [Line(f"right column sentence number {i} goes on here", 300, 70 + 14 * i, 540, 80 + 14 * i, 10, False, 1, 800)
             for i in range(4)]
    blocks = blocks_of(left + right)
    assert [[ln.text[:4] for ln in b.lines] for b in blocks] == [["left"] * 4, ["righ"] * 4]
    cells = [Line(t, x, 70, x + 30, 80, 10, False, 2, 800) for t, x in (("id", 40), ("name", 300))] * 2
    assert len(blocks_of(cells)) == 1  # short table cells: never split into columns


# --------------------------------------------------------------------------- hyphens


def test_words_split_over_columns_pages_and_callouts_are_joined(corpus_dir):
    doc = _dev(corpus_dir, "02-brochure-de-cc-nc-licences.pdf")
    t = doc.canonical
    for word in ("Möglichkeit", "Wikipedia", "unterschiedlichen", "offene"):
        assert word in t, word
    assert "Wiki-\n" not in t and "Mög-\n" not in t
    joins = dict(j.split(" -> ") for j in doc.hyphen_joins)
    assert joins["Wiki-pedia"] == "Wikipedia"


def test_real_hyphens_kept_in_corpus(corpus_dir):
    doc = extract_path(corpus_dir / "pdfs" / "01-dpr-paper-two-column-13p.pdf")
    assert "Open-Domain" in doc.canonical and "open-domain" in doc.canonical
    assert not any(j.endswith(("opendomain", "Opendomain")) for j in doc.hyphen_joins)


# --------------------------------------------------------------------------- tables


def test_pdf_table_rows_become_markdown_with_header(corpus_dir):
    doc = _dev(corpus_dir, "01-spec-hdc-protocol.pdf")
    assert doc.tables >= 20
    t = doc.canonical
    assert "| id | name | C | Python |\n|---|---|---|---|" in t
    assert "| 0x28 | DOUBLE | double | float |" in t
    # the multi-line cell stays in its row, after the single-line cells (it came first before)
    assert "| 10 | DEBUG | Most detailed information" in t


def test_prose_over_a_drawn_grid_and_a_framed_flyer_are_no_tables():
    """A Scholastic/NIDA newsletter (a new user's walk, 2026-12-07) draws a squared band behind two columns of text:
    it was read as a table of 67 columns, the columns interleaved row by row; a flyer's frame made a 1x3 table of its
    one text."""
    doc = pymupdf.open()
    page = doc.new_page()
    shape = page.new_shape()
    for k in range(26):  # a grid of 12-pt squares over the top half: decoration
        shape.draw_line((50 + 12 * k, 60), (50 + 12 * k, 300))
    for k in range(21):
        shape.draw_line((50, 60 + 12 * k), (350, 60 + 12 * k))
    shape.finish(color=(0.7, 0.7, 0.7), width=0.5)
    shape.commit()
    left = ["Addiction is a disease that", "affects both the brain and", "behavior. Scientists have",
            "identified many biological", "factors that are associated."]
    right = ["Drug abuse might affect an", "existing mental disorder in", "ways that are not yet fully",
             "understood by researchers", "working in the field today."]
    for x, column in ((54, left), (204, right)):  # two columns of prose over the grid
        for i, line in enumerate(column):
            page.insert_text((x, 80 + 24 * i), line, fontsize=10)
    got = extract_pdf(doc.tobytes(), "newsletter.pdf")
    text = " ".join(got.canonical.split())
    assert "Addiction is a disease that affects both the brain and behavior." in text
    assert "Drug abuse might affect an existing mental disorder in ways that are not yet fully understood" in text
    assert "|" not in got.canonical  # real ruled tables stay tables: test_pdf_table_rows_become_markdown_with_header


def test_pdf_table_chunks_repeat_the_header(corpus_dir):
    from rag.ingest.chunk import chunk_document

    doc = _dev(corpus_dir, "01-spec-hdc-protocol.pdf")
    chunks = chunk_document(doc, budget_chars=512, count_tokens=lambda s: 2 + len(s.split()) * 2)
    rows = [c for c in chunks if c.content.startswith("| ") and not c.content.startswith("| id")]
    assert rows
    for c in rows:
        head = c.text.split("\n")
        assert head[1].startswith("| ") and head[2].startswith("|---"), c.text[:200]
        for line in c.content.splitlines():  # no row cut in half, unless the row alone is over the budget
            row = doc.canonical[doc.canonical.rfind("\n", 0, c.start + c.content.index(line)) + 1:].split("\n", 1)[0]
            assert not line.startswith("|") or line.endswith("|") or len(row) > 512, line


# --------------------------------------------------------------------------- page kinds


def _pdf_bytes(build) -> bytes:
    d = pymupdf.open()
    build(d)
    return d.tobytes()


def test_blank_page_is_blank_not_scanned(corpus_dir):
    doc = _dev(corpus_dir, "01-spec-hdc-protocol.pdf")
    assert doc.blank_pages == (33,) and doc.image_only_pages == ()
    assert not any("scanned" in w for w in doc.warnings)


def test_shifted_glyph_text_layer_is_flagged():
    def shift(s: str) -> str:
        return "".join(chr((ord(c) - 97 + 3) % 26 + 97) if "a" <= c <= "z" else c for c in s)

    prose = ("The inspection of the crane found that the hook latch was replaced and the rope was checked "
             "for wear along its whole length before the load test was carried out on the yard.")

    def build(d):
        for text in (prose, shift(prose)):
            p = d.new_page(width=400, height=300)
            p.insert_textbox(pymupdf.Rect(20, 20, 380, 280), text * 2, fontsize=10)

    doc = extract_pdf(_pdf_bytes(build), "shifted.pdf", use_ocr=False)
    assert doc.flagged_pages == (2,)
    assert any("unreadable text layer on page(s) 2" in w for w in doc.warnings)
    assert vowel_share(prose) > 0.3 > 0.2 > vowel_share(shift(prose))
    assert not unreadable(prose)


@pytest.mark.slow
def test_scanned_pages_read_by_ocr_and_marked(cases_dir, corpus_dir):
    if not ocr_available():
        pytest.skip("OCR engine not installed (pip install rapidocr-onnxruntime)")
    seen = []
    doc = extract_pdf((cases_dir / "c07_scanned_mixed.pdf").read_bytes(), "mixed.pdf",
                      progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert doc.ocr_pages == (2,) and doc.image_only_pages == (2,)
    assert "due date 14 March" in doc.canonical and doc.page_at(doc.canonical.index("due date")) == 2
    assert pages_read_by_ocr(doc.warnings) == (2,)
    # page x of y for the one OCR page: planned, starting (the budget gives it an OCR page's time), done
    assert [e for e in seen if e[0] == "ocr"] == [("ocr", 0, 1), ("ocr", 0, 1), ("ocr", 1, 1)]
    assert [e for e in seen if e[0] == "extract"][-1] == ("extract", 2, 2)  # and for the text pages
    only = extract_path(cases_dir / "c07_scanned_only.pdf")
    assert "the lease ends on 30 June" in only.canonical
    scan = extract_path(corpus_dir / "pdfs" / "04-scanned-image-only.pdf")
    assert "Docling bundles PDF document conversion to JSON and Markdown" in _collapse(scan.canonical)


def test_ocr_progress_reaches_the_caller_of_extract_bytes(cases_dir):
    if not ocr_available():
        pytest.skip("OCR engine not installed")
    seen = []
    extract_bytes((cases_dir / "c07_scanned_only.pdf").read_bytes(), "scan.pdf",
                  progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert [s for s in seen if s[0] == "ocr"][-1] == ("ocr", 1, 1)
    assert seen[-1] == ("extract", 1, 1)  # every page read moves the bar (issue 28)


# --------------------------------------------------------------------------- generated layouts


def test_alternating_running_headers_dropped_and_audited():
    def build(d):
        for i in range(6):
            p = d.new_page(width=400, height=500)
            p.insert_text((40, 30), "Chapter One: The Harbour" if i % 2 == 0 else "A Book of Ships", fontsize=9)
            p.insert_text((40, 200), f"Body text of page {i + 1} tells how the harbour master logs ship {i} arrivals.",
                          fontsize=10)
            p.insert_text((190, 480), str(i + 1), fontsize=9)

    doc = extract_pdf(_pdf_bytes(build), "book.pdf")
    assert "Chapter One" not in doc.canonical and "A Book of Ships" not in doc.canonical
    assert doc.canonical.count("Body text of page") == 6
    assert min(doc.page_coverage) == 1.0  # dropped on purpose, so the audit leaves them out


def test_sideways_text_on_an_upright_page_is_kept():
    def build(d):
        p = d.new_page(width=400, height=500)
        for k in range(5):
            p.insert_text((40, 60 + 16 * k), f"Upright line {k} of the inspection report body.", fontsize=10)
        p.insert_text((380, 400), "Sideways margin stamp reads upwards", fontsize=8, rotate=90)

    doc = extract_pdf(_pdf_bytes(build), "stamp.pdf")
    assert "Sideways margin stamp reads upwards" in doc.canonical
    assert doc.page_coverage == (1.0,)


def test_placeholder_metadata_title_is_never_the_title():
    def build(d):
        p = d.new_page(width=400, height=500)
        p.insert_text((40, 60), "Boiler Room Procedures", fontsize=18)
        for k in range(6):
            p.insert_text((40, 100 + 14 * k), f"Step {k}: the valve is checked and the log is signed.", fontsize=10)
        d.set_metadata({"title": "none"})

    assert extract_pdf(_pdf_bytes(build), "boiler.pdf").title == "Boiler Room Procedures"


def test_margin_note_between_the_halves_of_a_word(corpus_dir):
    doc = _dev(corpus_dir, "06-guide-llncs-latex-class.pdf")
    assert "For formatting the bibliography according to Springer" in doc.canonical
    assert "splncs04.bst" in doc.canonical and "forsplncs04" not in doc.canonical


def test_a_tex_font_s_spacing_accents_are_composed_with_their_letters():
    """A new user's walk (2026-12-07): the Raft paper's text layer reads "Mazi`eres" and "M\u00b4ery" (an OT1 TeX font
    draws the accent as a glyph of its own), so quotes were not what a reader sees: "Mazi\u00e8res", "M\u00e9ry"."""
    from rag.ingest.pdf.audit import words
    from rag.ingest.pdf.pdf_text import spacing_accents

    assert spacing_accents("David Mazi`eres and D. M\u00b4ery; G\u00a8odel") == "David Mazi\u00e8res and D. M\u00e9ry; G\u00f6del"
    for code in ("run `echo hi` now", "x^2 and a^b", "~user", "`x"):
        assert spacing_accents(code) == code  # a backtick opening code, ASCII ^ and ~, no letter: as they are
    assert words("Mazi`eres M\u00b4ery") == words("Mazi\u00e8res M\u00e9ry") == ["mazieres", "mery"]  # the audit


def test_the_raft_paper_reads_its_accented_names(corpus_dir):
    path = corpus_dir / "real" / "pdf" / "paper-twocol-raft-consensus.pdf"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    got = extract_path(path)
    assert "Mazi\u00e8res" in got.canonical and "M\u00e9ry" in got.canonical and "`" not in got.canonical
    assert not [w for w in got.warnings if "page" in w.lower() and "%" in w]  # no page reads as losing words


def test_computer_modern_ff_ligature_read_as_ff():
    from rag.ingest.pdf.layout import raw_lines

    def line(font: str, text: str) -> dict:
        return {"dir": (1.0, 0.0), "bbox": (0, 0, 100, 10),
                "spans": [{"font": font, "text": text, "size": 10.0, "flags": 0}]}

    page = {"blocks": [{"lines": [line("ABCDEF+CMR10", "e\u21b5orts o\u21b5-the-shelf"),  # an arXiv paper's TeX font
                                  line("ArialMT", "Press \u21b5 to confirm")]}]}  # the return key stays
    assert [t for _, t, *_ in raw_lines(page)] == ["efforts off-the-shelf", "Press \u21b5 to confirm"]


def test_a_code_listing_keeps_its_lines_and_a_typewritten_page_stays_prose():
    """A router's configuration guide and a JavaScript listing (a new user's walk, 2026-12-07) were joined into one
    run-on line each. Lines in a monospaced font, two or more in a paragraph, are kept as set; a page typed in
    Courier throughout is prose, its lines joined."""
    import pymupdf

    from rag.ingest.extract import extract_bytes

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "The function below adds two numbers and prints the sum of three and five.",
                     fontsize=10)
    for k, (indent, line) in enumerate([(0, "function add(a, b) {"), (4, "return a + b;"), (0, "}"),
                                        (0, "console.log(add(3, 5));")]):
        page.insert_text((72 + indent * 6, 110 + 12 * k), line, fontsize=10, fontname="cour")
    page.insert_text((72, 180), "The listing prints eight, as expected from the sum of its two arguments.",
                     fontsize=10)
    text = extract_bytes(doc.tobytes(), "listing.pdf").canonical
    assert "function add(a, b) {\n    return a + b;\n}\nconsole.log(add(3, 5));" in text
    typed = pymupdf.open()
    page = typed.new_page()
    for k in range(12):
        page.insert_text((72, 80 + 12 * k), f"This memorandum line {k} was typed on a typewriter long ago", fontsize=10,
                         fontname="cour")
    text = extract_bytes(typed.tobytes(), "memo.pdf").canonical
    assert "long ago This memorandum line 1" in text
    quoted = pymupdf.open()  # a letter quoted in Courier under a Helvetica introduction (a review, 2026-12-07)
    page = quoted.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 300), "The following letter was received by the archive and is "
                        "reproduced here in full as it was typed by the sender. " * 4, fontsize=11)
    for k, line in enumerate(["Dear Sir, I am writing to you about the old mill on the river",
                              "which my family owned for many years before the war. We would",
                              "like to know whether the archive holds any infor-",
                              "mation about its sale and the people who worked there."]):
        page.insert_text((72, 320 + 14 * k), line, fontsize=11, fontname="cour")
    assert "the archive holds any information about its sale" in extract_bytes(quoted.tobytes(), "l.pdf").canonical


def test_a_right_to_left_line_split_by_a_latin_word_is_read_right_to_left():
    """docling's right_to_left_01.pdf (a new user's walk, 2026-12-07): MuPDF splits an Arabic line at its Latin
    words; joined left to right, "R وPython" moved to the line's end and glued to the next word."""
    from rag.ingest.pdf.layout import Line, merge_fragments

    right = Line("تعتبر البرمجة بلغة R وPython", 397, 100, 522, 115, 12.0, False, 1, 800)
    left = Line("من الأدوات القوية", 109, 100, 396, 115, 12.0, False, 1, 800)
    (line,) = merge_fragments([left, right])
    assert line.text == "تعتبر البرمجة بلغة R وPython من الأدوات القوية"
    a = Line("The quick", 72, 100, 120, 112, 12.0, False, 1, 800)
    b = Line("brown fox", 124, 100, 180, 112, 12.0, False, 1, 800)
    assert merge_fragments([b, a])[0].text == "The quick brown fox"
