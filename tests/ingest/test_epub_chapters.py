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
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("poem")
    book.set_title("A Long Poem")
    book.set_language("en")
    body = epub.EpubHtml(title="A Long Poem", file_name="poem.xhtml", lang="en")
    body.content = (
        "<html><body><section id='front'><h1>A Long Poem</h1><p>For the lighthouse keeper.</p></section>"
        "<section id='main'><section id='p1'><h2>I. THE HARBOUR</h2><p>The boats lie still at the quay.</p></section>"
        "<section id='p2'><h2>II. THE STORM</h2><p>My nerves are bad tonight, said the sea.</p></section></section>"
        "<section id='notes'><h2>NOTES</h2><p>Line 3 echoes an older ballad.</p></section></body></html>")
    book.add_item(body)
    book.toc = (epub.Link("poem.xhtml#p1", "I. THE HARBOUR", "p1"), epub.Link("poem.xhtml#p2", "II. THE STORM", "p2"))
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", body]
    buf = io.BytesIO()
    epub.write_epub(buf, book)
    return buf.getvalue()


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
