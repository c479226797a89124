"""OpenDocument read as a reader sees it (issue 37): outline numbers and list labels, footnotes with their number,
headers and footers once as furniture, soft line breaks, text in drawing shapes, indexes with their role; ODP build
steps folded, no invented slide titles, hidden slides left out, the visible title over stale metadata. Every file
is written here with odfdo."""

from __future__ import annotations

import io

from odfdo import Document, DrawPage, Element, Frame, Header, List, Note, Paragraph

from rag.ingest.extract import extract_bytes
from rag.ingest.locate import locator_at
from rag.ingest.office.odf_numbers import format_number
from rag.ingest.roles import find_roles
from rag.types import LocatorKind, TextRole


def _save(doc: Document) -> bytes:
    buf = io.BytesIO()
    doc.save(buf)
    return buf.getvalue()


def _style(doc: Document, xml: str, automatic: bool = True) -> None:
    doc.insert_style(Element.from_tag(xml), automatic=automatic)


def test_number_formats():
    assert [format_number(n, "1") for n in (1, 12)] == ["1", "12"]
    assert [format_number(n, "A") for n in (1, 2, 27)] == ["A", "B", "AA"]
    assert [format_number(n, "i") for n in (4, 9, 14)] == ["iv", "ix", "xiv"]
    assert format_number(1994, "I") == "MCMXCIV" and format_number(3, "") == ""


def test_outline_numbers_and_list_labels_as_a_reader_sees_them():
    doc = Document("text")  # odfdo's template numbers headings "1.", "1.1." like LibreOffice's chapter numbering
    _style(doc, '<text:list-style style:name="LAlpha">'
                '<text:list-level-style-number text:level="1" style:num-format="A" style:num-suffix=")"/>'
                '<text:list-level-style-number text:level="2" style:num-format="i" style:num-suffix="."/>'
                '</text:list-style>')
    body = doc.body
    body.append(Header(1, "Conformance"))
    body.append(Header(2, "Packages"))
    body.append(Header(3, "OpenDocument Package"))
    body.append(Header(3, "Extended Package"))
    body.append(Header(2, "Documents"))
    first = List(["Readers open the package", "Writers keep the manifest"])
    first.set_attribute("text:style-name", "LAlpha")
    first.get_elements("text:list-item")[0].append(List(["Sub point one", "Sub point two"]))
    body.append(first)
    body.append(Paragraph("An interruption between the two lists."))
    more = List(["Consumers ignore what they do not know"])
    more.set_attribute("text:style-name", "LAlpha")
    more.set_attribute("text:continue-numbering", "true")
    body.append(more)
    body.append(List(["A plain bullet"]))
    got = extract_bytes(_save(doc), "spec.odt")
    assert [h.title for h in got.headings] == ["1. Conformance", "1.1. Packages", "1.1.1. OpenDocument Package",
                                               "1.1.2. Extended Package", "1.2. Documents"]
    assert "A) Readers open the package\n  i. Sub point one\n  ii. Sub point two\nB) Writers keep" in got.canonical
    assert "C) Consumers ignore what they do not know" in got.canonical  # continued after the paragraph
    assert "- A plain bullet" in got.canonical


def test_footnotes_keep_their_number_next_to_the_paragraph_that_cites_them():
    doc = Document("text")
    para = Paragraph("The random pool is seeded by the user")
    para.append(Note(note_id="ftn1", citation="1", body="From a theoretical standpoint, the pool is a generator."))
    para.append(" and the timer.")
    item_list = List(["A list item with a note"])
    item_list.get_elements("descendant::text:p")[0].append(Note(note_class="endnote", note_id="edn1", citation="i",
                                                               body="An endnote inside a list item."))
    doc.body.append(para)
    doc.body.append(item_list)
    got = extract_bytes(_save(doc), "notes.odt")
    assert "The random pool is seeded by the user and the timer.\n\n1 From a theoretical standpoint" in got.canonical
    assert "i An endnote inside a list item." in got.canonical
    assert got.canonical.count("From a theoretical standpoint") == 1


def test_headers_and_footers_once_with_the_furniture_role_and_page_numbers_left_out():
    doc = Document("text")
    page = doc.styles.get_elements("//style:master-page")[0]
    page.append(Element.from_tag('<style:header><text:p>Password Tech User Manual<text:tab/>'
                                 '<text:page-number>5</text:page-number></text:p></style:header>'))
    page.append(Element.from_tag('<style:footer><text:p>Page <text:page-number>5</text:page-number> of '
                                 '<text:page-count>9</text:page-count></text:p></style:footer>'))
    doc.body.append(Paragraph("PASSWORD TECH"))  # a cover line, then the first chapter
    doc.body.append(Header(1, "Introduction"))
    doc.body.append(Paragraph("Password Tech generates passwords."))
    got = extract_bytes(_save(doc), "manual.odt")
    assert got.canonical.startswith("Password Tech User Manual\n\n")
    assert got.canonical.count("Password Tech User Manual") == 1 and "Page" not in got.canonical  # "Page of"
    (span,) = [r for r in find_roles(got) if r.role == TextRole.FURNITURE]
    assert got.canonical[span.start:span.end] == "Password Tech User Manual"
    assert got.title == "Password Tech User Manual"  # the running header: no Title paragraph, no metadata, and
    # the first heading comes after the cover
    short = Document("text")  # two words around a page number are words a reader reads (odfpy's headerfooter.odt)
    short.styles.get_elements("//style:master-page")[0].append(Element.from_tag(
        '<style:footer><text:p>Footer<text:tab/><text:page-count>1</text:page-count><text:tab/>Bottom</text:p>'
        '</style:footer>'))
    short.body.append(Paragraph("Lorem ipsum."))
    assert "Footer Bottom" in extract_bytes(_save(short), "short.odt").canonical


def test_a_cross_reference_shows_the_text_it_refers_to():
    doc = Document("text")
    para = Paragraph("These elements contain anim.Animate: ")
    para.append(Element.from_tag('<text:bookmark-ref text:reference-format="text" text:ref-name="anim.Iterate">'
                                 "anim.Iterate</text:bookmark-ref>"))
    para.append(", draw.Page.")
    doc.body.append(para)
    # before: "These elements contain anim.Animate: , draw.Page." (799 paragraphs of odfpy's API manual)
    assert "contain anim.Animate: anim.Iterate, draw.Page." in extract_bytes(_save(doc), "api.odt").canonical


def test_soft_line_breaks_shapes_and_indexes():
    doc = Document("text")
    para = Paragraph("when:")
    para.append(Element.from_tag("<text:line-break/>"))
    para.append("The request is approved")
    doc.body.append(para)
    anchor = Paragraph("A figure follows.")
    anchor.append(Element.from_tag(
        '<draw:custom-shape text:anchor-type="paragraph"><text:p>Il n\'y a pas de niveau 0</text:p>'
        '</draw:custom-shape>'))
    doc.body.append(anchor)
    doc.body.append(Element.from_tag(
        '<text:table-of-content><text:index-body><text:p>Introduction<text:tab/>5</text:p>'
        '<text:p>Usage<text:tab/>9</text:p></text:index-body></text:table-of-content>'))
    got = extract_bytes(_save(doc), "breaks.odt")
    assert "when:\nThe request is approved" in got.canonical
    assert "A figure follows.\n\nIl n'y a pas de niveau 0" in got.canonical
    toc = [r for r in got.roles if r.role == TextRole.TOC]
    assert [got.canonical[r.start:r.end] for r in toc] == ["Introduction 5\n\nUsage 9"]


def test_visible_title_wins_over_stale_metadata():
    doc = Document("text")
    doc.get_part("meta").set_title("Standard 1.3 (template)")
    title = Paragraph("Open Standard 1.4")
    title.set_attribute("text:style-name", "Title")
    doc.body.append(title)
    doc.body.append(Paragraph("What changed since 1.3."))
    assert extract_bytes(_save(doc), "std.odt").title == "Open Standard 1.4"


def _deck(slides: list[tuple[str | None, list[str]]], hidden: tuple[int, ...] = ()) -> Document:
    doc = Document("presentation")
    for template in doc.body.get_draw_pages():
        doc.body.delete(template)
    if hidden:
        _style(doc, '<style:style style:name="dpHidden" style:family="drawing-page">'
                    '<style:drawing-page-properties presentation:visibility="hidden"/></style:style>')
    for n, (title, lines) in enumerate(slides, start=1):
        page = DrawPage(f"p{n}", name=f"Slide {n}")
        if n in hidden:
            page.set_attribute("draw:style-name", "dpHidden")
        if title is not None:
            page.append(Frame.text_frame(title, size=("20cm", "2cm"), position=("1cm", "1cm"),
                                         presentation_class="title"))
        for k, line in enumerate(lines):
            page.append(Frame.text_frame(line, size=("20cm", "1cm"), position=("1cm", f"{4 + k}cm")))
        doc.body.append(page)
    return doc


def test_odp_build_steps_are_folded_into_their_fullest_slide():
    steps = ["SELECT name", "FROM users", "WHERE id = 7"]
    deck = _deck([("Quarterly results", ["Revenue grew"])]
                 + [("The query", steps[:k]) for k in (1, 2, 3)] + [("Thanks", ["Questions?"])])
    got = extract_bytes(_save(deck), "talk.odp")
    assert got.canonical.count("SELECT name") == 1 and got.canonical.count("# The query") == 1
    at = got.canonical.index("# The query")
    loc = locator_at(got, at, got.canonical.index("WHERE id = 7") + 5)
    assert loc.kind == LocatorKind.SLIDE and (loc.first, loc.last) == (2, 4)
    last = got.canonical.index("Questions?")
    assert locator_at(got, last, last + 5).first == 5  # slides keep their numbers


def test_odp_no_invented_titles_hidden_slides_left_out_and_the_title_slide_named():
    deck = _deck([("Power-Agile Computing", ["HotOS 2011"]), (None, ["✓"]), ("Secret plan", ["draft"]),
                  ("Results", ["Faster"])], hidden=(3,))
    deck.get_part("meta").set_title("Slide 1")
    got = extract_bytes(_save(deck), "deck.odp")
    assert [h.title for h in got.headings] == ["Power-Agile Computing", "Slide 2", "Results"]
    assert "✓" in got.canonical and "Secret plan" not in got.canonical and "draft" not in got.canonical
    assert any("hidden slides left out: 3" in w for w in got.warnings)
    assert got.title == "Power-Agile Computing"
    last = got.canonical.index("Faster")
    assert locator_at(got, last, last + 6).first == 4


def test_the_text_an_image_holds_is_read_where_it_stands():
    """A new user's walk (2026-12-07): a talk's slide whose only words, "Shazam!", are the text of its image frame
    was in no chunk (coverage 95.5 %): LibreOffice draws that text on the image."""
    deck = _deck([("Results", ["Revenue grew"]), (None, [])])
    page = deck.body.get_draw_pages()[1]
    frame = Element.from_tag('<draw:frame svg:width="5cm" svg:height="5cm" svg:x="1cm" svg:y="1cm">'
                             '<draw:image xlink:href="Pictures/x.png"><text:p>Shazam!</text:p></draw:image></draw:frame>')
    page.append(frame)
    got = extract_bytes(_save(deck), "talk.odp")
    at = got.canonical.index("Shazam!")
    assert locator_at(got, at, at + 7).first == 2  # on its own slide


def test_odp_numbered_lists_keep_their_numbers():
    """odfpy's ol.odp (a new user's walk, 2026-12-07): "1. Eins 2. Tsvey" on the slide read "- Eins", "- Tsvey"."""
    deck = _deck([("Steps", [])])
    _style(deck, '<text:list-style style:name="LNum"><text:list-level-style-number text:level="1" '
                 'style:num-format="1" style:num-suffix="."/></text:list-style>')
    steps = List(["Unplug the unit", "Open the cover", "Replace the fuse"])
    steps.set_attribute("text:style-name", "LNum")
    box = Frame.text_frame("", size=("20cm", "6cm"), position=("1cm", "4cm"))
    text_box = box.get_elements("draw:text-box")[0]
    for child in list(text_box.children):
        text_box.delete(child)
    text_box.append(steps)
    deck.body.get_draw_pages()[0].append(box)
    got = extract_bytes(_save(deck), "steps.odp").canonical
    assert "1. Unplug the unit\n2. Open the cover\n3. Replace the fuse" in got


def test_an_impress_table_is_read_as_its_rows_on_its_slide():
    """PHPPresentation's Issue_00141.odp (a new user's walk, 2026-12-07): the slide's 3x3 table was lost, only its
    title read (coverage 47 %). Impress stores a table as a ``table:table`` in a frame of class "table"."""
    deck = _deck([("Intro", ["Hello"]), ("Fees", [])])
    rows = "".join("<table:table-row>" + "".join(f"<table:table-cell><text:p>{c}</text:p></table:table-cell>"
                                                 for c in r) + "</table:table-row>"
                   for r in (("Plan", "Monthly fee"), ("Basic", "4 EUR"), ("Family", "9 EUR")))
    frame = Element.from_tag('<draw:frame svg:width="20cm" svg:height="4cm" svg:x="1cm" svg:y="4cm" '
                             f'presentation:class="table"><table:table>{rows}</table:table>'
                             '<draw:image xlink:href="Pictures/TablePreview1.svm"/></draw:frame>')
    deck.body.get_draw_pages()[1].append(frame)
    got = extract_bytes(_save(deck), "fees.odp")
    assert "| Plan | Monthly fee |\n| --- | --- |\n| Basic | 4 EUR |\n| Family | 9 EUR |" in got.canonical
    at = got.canonical.index("Family")
    assert locator_at(got, at, at + 6).first == 2 and got.coverage == 1.0
