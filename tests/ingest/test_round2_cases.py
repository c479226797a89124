"""The extraction cases of ``../shared/cases/ROUND2.md`` (issue 13): c23, c24, c27, c30, c34, on the real inputs."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from rag.answer.cite import citations_from_rows, evidence_page
from rag.errors import ExtractionError
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes, extract_path
from rag.types import Locator, TextRole


def _count(text: str) -> int:
    """A stand-in for the word-piece counter: about 1.5 word-pieces per word."""
    return 2 + 3 * len(text.split()) // 2


def test_c23_utf16le_bom_decoded_and_reported(cases_dir):
    doc = extract_path(cases_dir / "c23_utf16le_bom.txt")
    assert doc.media_type == "text/plain" and doc.encoding == "utf-16-le"
    assert "The backup tapes are rotated every Friday at 17:00" in doc.canonical
    assert "\ufeff" not in doc.canonical and "\r" not in doc.canonical
    assert any("UTF-16-LE" in w for w in doc.warnings)
    chunks = chunk_document(doc, count_tokens=_count)
    assert any("backup tapes are rotated" in c.content for c in chunks)


def test_binary_is_still_refused_with_a_reason():
    with pytest.raises(ExtractionError, match=r"blob\.bin: unsupported file type"):
        extract_bytes(b"\x01\x02\x00\x00\x9c" * 50, "blob.bin")


def test_c24_front_matter_is_metadata_and_comment_not_indexed(cases_dir):
    doc = extract_path(cases_dir / "c24_frontmatter_post.md")
    assert doc.title == "Forklift Safety Rules"
    meta = dict(doc.metadata)
    assert meta["owner"] == "warehouse-ops" and "speed limit" in meta["tags"]
    assert "warehouse-ops" not in doc.canonical and "---" not in doc.canonical
    assert "25 km/h" not in doc.canonical and "<!--" not in doc.canonical
    chunks = chunk_document(doc, count_tokens=_count)
    text = " ".join(c.content for c in chunks)
    assert "15 km/h on the yard" in text and "25 km/h" not in text and "revision" not in text
    for c in chunks:
        assert doc.canonical[c.start:c.end] == c.content


def test_html_comment_inside_code_fence_is_kept():
    md = "# T\n\n```html\n<!-- kept: code -->\n```\n\ntext <!-- gone --> here\n".encode()
    doc = extract_bytes(md, "t.md")
    assert "<!-- kept: code -->" in doc.canonical and "gone" not in doc.canonical
    assert "text  here" in doc.canonical


def test_c27_form_fields_read_as_label_value(cases_dir):
    doc = extract_path(cases_dir / "c27_form_fields.pdf")
    t = doc.canonical
    assert doc.title == "Crane inspection record"
    assert "Inspector: Morgan Ellery" in t
    assert "Crane serial number: KR-55812-B" in t
    assert "Load test passed: Yes (checked)" in t
    assert "Next inspection due: September 2027" in t
    assert t.index("Inspector:") < t.index("Crane serial") < t.index("Load test") < t.index("Next inspection")
    assert "Reviewer: the hook latch on crane KR-55812-B was replaced on 3 June." in t
    assert all("Morgan" not in h.title and "2027" not in h.title for h in doc.headings)
    assert "\u2713" not in t and "\n3\n" not in t  # the ZapfDingbats check glyph is not text
    assert doc.page_coverage == (1.0,)


@dataclass
class _Row:
    chunk_id: int
    document_id: str
    document_name: str
    document_label: str
    media_type: str
    content: str
    section: tuple
    start: int
    end: int
    page: int | None
    page_end: int | None
    locator: Locator | None = None  # a row stored before issue 17: the citation rebuilds it from the pages
    role: TextRole = TextRole.BODY


@dataclass
class _Hit:
    cosine_distance: float = 0.2
    fused_rank: int = 1


def test_c30_citation_opens_the_page_holding_the_code(cases_dir):
    path = cases_dir / "c30_page_break.pdf"
    doc = extract_path(path)
    chunk = next(c for c in chunk_document(doc, count_tokens=_count) if "access code 7316" in c.content)
    assert (chunk.page, chunk.page_end) == (1, 2)  # the chunk keeps its range
    row = _Row(1, doc.id, doc.name, "", doc.media_type, chunk.content, chunk.section, chunk.start, chunk.end,
               chunk.page, chunk.page_end)
    q = "What is the access code for the east stairwell door?"
    assert evidence_page(row, q, page_at=doc.page_at) == 2
    from ui.view.pdf import best_page

    page = evidence_page(row, q, locate=lambda text, a, b: best_page(path, text, a, b)[0])
    assert page == 2
    cite = citations_from_rows([_Hit()], [row], [page])[0]
    assert cite.fragment == "#page=2" and cite.page == 2
    assert cite.locator_label == "c30_page_break.pdf, p. 2 (pp. 1-2)"
    # a question about page 1's text opens page 1
    assert evidence_page(row, "Which building was sold in 2021?", page_at=doc.page_at) == 1


def test_c34_every_table_chunk_carries_the_header_row(cases_dir):
    doc = extract_path(cases_dir / "c34_site_table.md")
    chunks = chunk_document(doc, budget_chars=200, count_tokens=_count)
    table = [c for c in chunks if "|" in c.content]
    assert len(table) >= 2
    header = "| Site | Manager | Budget | Headcount |"
    for c in table:
        assert header in c.text, c.text
        assert all(line.count("|") == 5 for line in c.content.splitlines() if line.startswith("|"))
    west = [c for c in table if "Westcombe" in c.content]
    assert len(west) == 1 and "| Westcombe | Z. Pike | 270 | 55 |" in west[0].content
    assert header in west[0].text and doc.canonical[west[0].start:west[0].end] == west[0].content


def test_a_check_box_inside_a_line_is_named_by_that_line_not_by_the_one_left_of_it():
    """Form 1040's paid-preparer row (a new user's walk, 2026-12-07): "Date ... Check [x] if self-employed" read
    "Date: Yes (checked)", and an answer quoting it was shown as supported. An unlabelled field's internal path
    is shortened to its last part."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Date", fontsize=10)
    page.insert_text((200, 100), "Check          if self-employed", fontsize=10)
    box = pymupdf.Widget()
    box.field_type, box.field_name = pymupdf.PDF_WIDGET_TYPE_CHECKBOX, "topmostSubform[0].Page2[0].c2_1[0]"
    box.rect, box.field_value = pymupdf.Rect(232, 91, 241, 100), True
    page.add_widget(box)
    lone = pymupdf.Widget()
    lone.field_type, lone.field_name = pymupdf.PDF_WIDGET_TYPE_CHECKBOX, "topmostSubform[0].Page2[0].c2_2[0]"
    lone.rect, lone.field_value = pymupdf.Rect(72, 300, 81, 309), False
    page.add_widget(lone)
    text = extract_bytes(doc.tobytes(), "form.pdf").canonical
    assert "Check if self-employed: Yes (checked)" in text and "Date: Yes" not in text
    assert "c2_2: No (unchecked)" in text and "topmostSubform" not in text


def test_several_check_boxes_in_one_line_are_each_named_by_their_option():
    """A reviewer's probe (2026-12-07): three boxes in "Filing status: [ ] Single [x] Married [ ] Head of household"
    all read "Filing status: Single Married Head of household", so which one is checked could not be told."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Filing status:      Single      Married      Head of household", fontsize=10)
    starts = {w[4]: w[0] for w in page.get_text("words")}
    for word, on, name in (("Single", False, "s1"), ("Married", True, "s2"), ("Head", False, "s3")):
        box = pymupdf.Widget()
        box.field_type, box.field_name = pymupdf.PDF_WIDGET_TYPE_CHECKBOX, name
        box.rect, box.field_value = pymupdf.Rect(starts[word] - 11, 91, starts[word] - 3, 99), on
        page.add_widget(box)
    text = extract_bytes(doc.tobytes(), "status.pdf").canonical
    assert "– Married: Yes (checked)" in text and "– Single: No (unchecked)" in text
    assert "– Head of household: No (unchecked)" in text


def test_a_check_box_before_its_option_is_named_by_the_option_after_it():
    """DD Form 293 (a new user's walk, 2026-12-07), ticked NAVY and RESERVE, read "ARMY: Yes (checked)" and
    "REGULAR: Yes (checked)": each box, standing before its option as on most US government forms, took the option
    before it. A box after its label ("Urgent [x]", the words after it far off) keeps that label."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    for x, text in ((72, "1. BRANCH"), (160, "ARMY"), (230, "NAVY"), (300, "AIR FORCE")):
        page.insert_text((x, 100), text, fontsize=9)
    page.insert_text((72, 200), "Urgent", fontsize=9)
    page.insert_text((200, 200), "Reviewed by", fontsize=9)
    for x, text in ((72, "Married"), (122, "Single"), (170, "Divorced")):  # labels before boxes, evenly spaced
        page.insert_text((x, 250), text, fontsize=9)
    for x, y, on, tip in ((148, 92, False, ""), (218, 92, True, ""), (288, 92, False, 'Select for "AIR FORCE."'),
                          (106, 192, True, ""), (108, 242, False, ""), (152, 242, True, ""), (210, 242, False, "")):
        box = pymupdf.Widget()
        box.field_type, box.field_name = pymupdf.PDF_WIDGET_TYPE_CHECKBOX, f"b{x}{y}"
        box.rect, box.field_value = pymupdf.Rect(x, y, x + 9, y + 9), on
        if tip:
            box.field_label = tip
        page.add_widget(box)
    text = extract_bytes(doc.tobytes(), "dd293.pdf").canonical
    assert "1. BRANCH – NAVY: Yes (checked)" in text and "1. BRANCH – ARMY: No (unchecked)" in text
    assert "1. BRANCH – AIR FORCE: No (unchecked)" in text and "ARMY: Yes" not in text
    assert "Urgent: Yes (checked)" in text
    assert "Single: Yes (checked)" in text and "Married: No (unchecked)" in text  # a reviewer's probe, 2026-12-07


def test_a_choice_field_shows_its_option_s_text_not_its_export_value():
    """itext's choiceFieldsWithUnnecessaryIEntries.pdf (a walk, 2026-12-07): the box shows "Default", its options are
    pairs ``[(0)(Default)] [(1)(First)]`` and its value the export value "0": it read "Second: 0"."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "Shipping method", fontsize=10)
    box = pymupdf.Widget()
    box.field_type, box.field_name = pymupdf.PDF_WIDGET_TYPE_COMBOBOX, "ship"
    box.rect = pymupdf.Rect(160, 90, 300, 104)
    box.choice_values = [["0", "Courier overnight"], ["1", "Standard post"]]
    box.field_value = "1"
    page.add_widget(box)
    data = doc.tobytes()
    assert pymupdf.open(stream=data)[0].first_widget.field_value == "1"  # the export value, as the walk's file
    text = extract_bytes(data, "order.pdf").canonical
    assert "Shipping method: Standard post" in text and "method: 1" not in text


def test_a_field_whose_label_is_printed_under_it_is_named_by_that_label():
    """pdf-lib's sample_form.pdf (a walk, 2026-12-07) prints each field's label beneath it; the line left of a field
    was the label under the field before it, so the suffix "Jr" read "First: Jr" and the birth date "MALE: ..."."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((30, 102), "FIRST", fontsize=8)  # under the first-name field, level with the suffix field
    page.insert_text((190, 125), "SUFFIX", fontsize=8)
    for name, tip, rect, value in (("Name_First", "FIRST", (30, 80, 273, 94), "Foo"),
                                   ("Name_Suffix", "SUFFIX", (187, 99, 225, 118), "Jr")):
        box = pymupdf.Widget()
        box.field_type, box.field_name, box.field_label = pymupdf.PDF_WIDGET_TYPE_TEXT, name, tip
        box.rect, box.field_value = pymupdf.Rect(*rect), value
        page.add_widget(box)
    text = extract_bytes(doc.tobytes(), "names.pdf").canonical
    assert "SUFFIX: Jr" in text and "FIRST: Foo" in text and "FIRST: Jr" not in text
