"""Issue 37: an EPUB's title is the one a reader sees, not a template's or contents page's metadata title."""
from pathlib import Path

import pytest

from rag.ingest.web.epub import extract_epub

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "real" / "epub"


def _title(name: str) -> str:
    path = REAL / name
    if not path.exists():
        pytest.skip("shared corpus/real not here")
    return extract_epub(path.read_bytes(), name).title


def test_template_metadata_title_gives_way_to_the_visible_heading():
    # dc:title is "MAIN TITLE" (the toolkit's template); the book's own title heading follows "Chapter 1"
    assert _title("ebook-nl-howto-digitale-kunstkritiek.epub") == "'How to' voor Digitale Kunstkritiek"


@pytest.mark.parametrize("name", ["ebook-learn2love-programming-with-love2d.epub",
                                  "spec-zh-rfc7519-json-web-token.epub"])
def test_contents_page_title_is_not_the_book_title(name):
    # dc:title "Table of Contents"; the next heading is a chapter's ("Introduction"), so the file name wins
    assert _title(name) == name.removesuffix(".epub")


def test_a_terse_metadata_title_is_kept():
    # dc:title "Japanese Guide Ru" is not in the Russian text, but it names the book (no title page)
    assert _title("ebook-ru-tae-kim-japanese-grammar-guide.epub") == "Japanese Guide Ru"


def test_visible_metadata_title_is_kept():
    assert _title("manual-fidus-writer-user-manual.epub") == "The Fidus Writer User Manual"
