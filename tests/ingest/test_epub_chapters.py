"""An EPUB whose one content document holds several chapters, the table of contents pointing into it by fragment
(pandoc's ``wasteland.epub``: every passage, Part II and the notes too, was cited as "chapter 1: I. THE BURIAL OF
THE DEAD", a new user's walk, 2026-12-07): each anchored part is a chapter of its own, and so is what lies
around them."""

from __future__ import annotations

import io

from rag.ingest.chunk import chunk_document
from rag.ingest.web.epub import extract_epub
from rag.types import LocatorKind


def _one_file_book() -> bytes:
    return _book(
        "<html><body><section id='front'><h1>A Long Poem</h1><p>For the lighthouse keeper.</p></section>"
        "<section id='main'><section id='p1'><h2>I. THE HARBOUR</h2><p>The boats lie still at the quay.</p></section>"
        "<section id='p2'><h2>II. THE STORM</h2><p>My nerves are bad tonight, said the sea.</p></section></section>"
        "<section id='notes'><h2>NOTES</h2><p>Line 3 echoes an older ballad.</p></section></body></html>",
        [("p1", "I. THE HARBOUR"), ("p2", "II. THE STORM")], name="poem", title="A Long Poem")


def _chapter_of(doc, phrase: str) -> tuple[str, int]:
    at = doc.canonical.index(phrase)
    part = next(p for p in doc.parts if p.kind == LocatorKind.PARAGRAPH and p.start <= at < p.end)
    return part.scope, part.scope_number


def test_each_part_the_contents_points_at_is_a_chapter_of_its_own():
    doc = extract_epub(_one_file_book(), "poem.epub")
    assert [h.title for h in doc.headings if h.level == 1] == ["A Long Poem", "I. THE HARBOUR", "II. THE STORM",
                                                               "NOTES"]
    assert _chapter_of(doc, "For the lighthouse keeper") == ("A Long Poem", 1)
    assert _chapter_of(doc, "The boats lie still") == ("I. THE HARBOUR", 2)
    assert _chapter_of(doc, "My nerves are bad") == ("II. THE STORM", 3)
    assert _chapter_of(doc, "echoes an older ballad") == ("NOTES", 4)
    storm = next(c for c in chunk_document(doc) if "My nerves" in c.content)
    assert "II. THE STORM" in storm.section and "I. THE HARBOUR" not in storm.section


def _book(content: str, toc: list[tuple[str, str]], name: str = "tales", title: str = "Tales") -> bytes:
    """An EPUB of one content document ``name``.xhtml holding ``content``, its contents pointing at ``toc``'s
    ``(fragment, title)`` entries."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier(name)
    book.set_title(title)
    book.set_language("en")
    body = epub.EpubHtml(title=title, file_name=f"{name}.xhtml", lang="en")
    body.content = content
    book.add_item(body)
    book.toc = tuple(epub.Link(f"{name}.xhtml#{f}", entry, f) for f, entry in toc)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", body]
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    return buf.getvalue()


def test_nested_sections_the_contents_points_at_are_each_a_chapter():
    """IDPF's childrens-literature sample (a new user's walk, 2026-12-07): 15 stories, each a <section id> inside
    the part's <section id>, were all cited as the part."""
    content = ("<html><body><section id='part'><h1>SECTION IV FAIRY STORIES</h1><p>These tales are modern.</p>"
               "<section id='s1'><h2>193 THE EMPEROR'S NEW CLOTHES</h2><p>Many years ago there was an Emperor.</p>"
               "</section><section id='s2'><h2>194 THE NIGHTINGALE</h2><p>In China the Emperor is a Chinaman.</p>"
               "</section></section></body></html>")
    doc = extract_epub(_book(content, [("part", "SECTION IV"), ("s1", "193 THE EMPEROR'S NEW CLOTHES"),
                                       ("s2", "194 THE NIGHTINGALE")]), "tales.epub")
    assert _chapter_of(doc, "These tales are modern") == ("SECTION IV", 1)
    assert _chapter_of(doc, "Many years ago") == ("193 THE EMPEROR'S NEW CLOTHES", 2)
    assert _chapter_of(doc, "In China") == ("194 THE NIGHTINGALE", 3)


def test_a_contents_entry_pointing_at_a_heading_takes_the_text_under_it():
    """IDPF's accessible_epub_3 (O'Reilly's markup): the contents point at <h2 id>; each heading was a chapter
    without its text, and the text another one, "chapter 11: Chapter 11"."""
    content = ("<html><body><div><h1 id='c2'>Chapter 2. Building a Better EPUB</h1><p>Accessibility starts early.</p>"
               "<h2 id='found'>A Solid Foundation</h2><p>Structure and semantics come first.</p>"
               "<h2 id='integ'>Data Integrity</h2><p>Keep the markup <a id='x1'/>valid.</p></div></body></html>")
    doc = extract_epub(_book(content, [("c2", "Chapter 2. Building a Better EPUB"), ("found", "A Solid Foundation"),
                                       ("integ", "Data Integrity")]), "access.epub")
    assert _chapter_of(doc, "Accessibility starts early") == ("Chapter 2. Building a Better EPUB", 1)
    assert _chapter_of(doc, "Structure and semantics") == ("A Solid Foundation", 2)
    assert _chapter_of(doc, "Keep the markup") == ("Data Integrity", 3)
    assert not any(h.title.startswith("Chapter 4") or h.title == "Chapter 3" for h in doc.headings)


def test_an_inline_anchor_the_contents_point_at_starts_a_chapter_that_runs_on():
    """A reviewer's probe (2026-12-07): ``<p><a id="c1"/>CHAPTER ONE ...</p><p>...</p>``: the chapter held its first
    paragraph only, the rest an untitled "Chapter 2"."""
    content = ("<html><body><p><a id='c1'/>CHAPTER ONE. It was a dark night.</p><p>The storm raged on.</p>"
               "<p><a id='c2'/>CHAPTER TWO. Morning came.</p><p>The sun rose.</p></body></html>")
    doc = extract_epub(_book(content, [("c1", "Chapter One"), ("c2", "Chapter Two")]), "night.epub")
    assert _chapter_of(doc, "The storm raged") == ("Chapter One", 1)
    assert _chapter_of(doc, "The sun rose") == ("Chapter Two", 2)
    assert [h.title for h in doc.headings if h.level == 1] == ["Chapter One", "Chapter Two"]


def _spine_book(docs: list[tuple[str, str, bool]], toc: list[tuple[str, str]]) -> bytes:
    """An EPUB of content documents ``(name, xhtml, linear)`` in spine order, its contents ``(name, title)``."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("split")
    book.set_title("Winter Sports")
    book.set_language("en")
    items = []
    for name, content, _ in docs:
        item = epub.EpubHtml(title=name, file_name=f"{name}.xhtml", lang="en")
        item.content = content
        book.add_item(item)
        items.append(item)
    book.toc = tuple(epub.Link(f"{n}.xhtml", t, n) for n, t in toc)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav"] + [(item, "yes" if linear else "no") for item, (_, _, linear) in zip(items, docs)]
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    return buf.getvalue()


def test_a_file_with_no_contents_entry_and_no_heading_goes_on_with_the_chapter_before():
    """kreuzberg's winter_sports.epub (a Project Gutenberg book split into files at arbitrary places): "This will be
    marked:" was followed by "# Chapter 17", a chapter the book does not have, and the marks were cited under it."""
    doc = extract_epub(_spine_book([
        ("c1", "<html><body><h1>Second-class Test</h1><p>This will be marked:</p></body></html>", True),
        ("c2", "<html><body><p>(a) For the contents of the programme, up to 6 marks.</p></body></html>", True),
        ("c3", "<html><body><h2>Third-class Test</h2><p>Skate a figure eight.</p></body></html>", True),
    ], [("c1", "Second-class Test")]), "winter.epub")
    assert [h.title for h in doc.headings if h.level == 1] == ["Second-class Test", "Third-class Test"]
    assert "Chapter" not in doc.canonical
    assert _chapter_of(doc, "up to 6 marks") == ("Second-class Test", 1)
    assert _chapter_of(doc, "figure eight") == ("Third-class Test", 2)


def test_non_linear_documents_are_read_after_the_spine_and_svg_text_as_paragraphs():
    """W3C's spine test: a page a link opens (``linear="no"``) was left out without a word; IDPF's sous-le-vent (a
    fixed-layout novel drawn as SVG text) was refused as "no text in this EPUB"."""
    svg = ("<html><body><svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 600 800'><text x='10' y='20'>"
           "<tspan>Il en avait souvent rêvé,</tspan> <tspan>au moins depuis la communale.</tspan></text>"
           "<text x='10' y='40'>Le vent soufflait.</text></svg></body></html>")
    doc = extract_epub(_spine_book([
        ("page1", svg, True),
        ("answers", "<html><body><h1>Answers</h1><p>Exercise 1: the answer is 42.</p></body></html>", False),
    ], [("page1", "Sous le vent")]), "novel.epub")
    assert "Il en avait souvent rêvé, au moins depuis la communale." in doc.canonical
    assert "Le vent soufflait." in doc.canonical
    assert doc.canonical.index("Le vent") < doc.canonical.index("the answer is 42")
    assert _chapter_of(doc, "the answer is 42") == ("Answers", 2)
