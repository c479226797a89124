"""Slide decks read as slides (issue 28, item 1): the running headline and footline (author, date,
"page x / y", deck title, section navigation) are out of every chunk; a slide is a section titled by its
frame title with its bullets as a list, never a pipe table; overlay steps are read on the completed slide;
the title slide is a heading, never body text that answers a question."""

from __future__ import annotations

import pytest
from decks import AUTHOR, DATE, INSTITUTE, beamer_deck

from rag.ingest.chunk import chunk_document
from rag.ingest.pdf.extract import extract_pdf
from rag.types import TextRole


@pytest.fixture(scope="module")
def deck():
    doc = extract_pdf(beamer_deck(), "bsd-deck.pdf", use_ocr=False)
    return doc, chunk_document(doc, count_tokens=lambda t: len(t.split()))


def test_the_footline_and_headline_are_in_no_chunk_and_no_table(deck):
    doc, chunks = deck
    assert "/ 41" not in doc.canonical and "overview" not in doc.canonical and "History" not in doc.canonical
    later = [c for c in chunks if c.page > 1]
    assert not any(AUTHOR in c.content or INSTITUTE in c.content or DATE in c.content for c in later)
    assert doc.tables == 0  # the headline's and footline's bars of touching boxes are no table grid
    assert min(doc.page_coverage) >= 0.99  # dropped on purpose, so not counted as lost


def test_each_slide_is_a_section_with_its_bullets_as_a_list(deck):
    doc, chunks = deck
    titles = [h.title for h in doc.headings]
    assert {"NetBSD", "OpenBSD", "The BSD licences", "Lab session 24"} <= set(titles)
    assert AUTHOR not in titles  # the title slide's author is no section
    openbsd = next(c for c in chunks if "Theo de Raadt" in c.content)
    assert openbsd.section[-1] == "OpenBSD" and openbsd.role == TextRole.BODY
    lines = openbsd.content.split("\n")
    assert len(lines) == 3 and all(not ln[0].isalnum() for ln in lines)  # one item per line, marker kept
    assert not any(c.content.lstrip().startswith("|") for c in chunks)


def test_the_title_slide_is_a_heading_and_overlays_are_read_once(deck):
    doc, chunks = deck
    first = [c for c in chunks if c.page == 1]
    assert first and all(c.role == TextRole.HEADING for c in first)
    assert sum("Theo de Raadt founded OpenBSD" in c.content for c in chunks) == 1  # not once per overlay step
    assert any(w.startswith("slide deck: overlay step(s)") for w in doc.warnings)
    assert not any("hidden text" in w for w in doc.warnings)  # items not yet uncovered are no secret


def test_the_dev_deck(corpus_dir):
    path = corpus_dir / "pdf-dev" / "docs" / "04-slides-git-github.pdf"
    if not path.exists():
        pytest.skip("pdf-dev corpus not present")
    doc = extract_pdf(path.read_bytes(), path.name, use_ocr=False)
    chunks = chunk_document(doc, count_tokens=lambda t: len(t.split()))
    assert [c.role for c in chunks if c.page == 1] and all(c.role == TextRole.HEADING for c in chunks if c.page == 1)
    basic = [c for c in chunks if "Basic use" in c.section]
    assert basic and len(basic) < 4  # the overlay steps of slides 14-17 were four copies
