"""Server-side citations (design stages 8-9): locator labels, URL fragments, quotes, the prompt block."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rag.answer.cite import (
    citation_from_json,
    citation_json,
    citations,
    citations_from_rows,
    format_sources_for_prompt,
    fragment,
    locator_label,
)
from rag.answer.gate import apply_gate
from rag.store.store import ChunkRow
from rag.types import Hit, Locator, LocatorKind


def _row(**kw):
    base = dict(chunk_id=1, document_id="a" * 64, document_name="guide.md", document_label="guide.md",
                media_type="text/markdown", index=0, text="[guide > Install > Linux]\nRun make.", content="Run make.",
                section=("Install", "Linux"), start=120, end=129, page=None, page_end=None)
    base.update(kw)
    return ChunkRow(**base)


def _pdf_row(**kw):
    return _row(**{"document_name": "paper.pdf", "document_label": "paper.pdf", "media_type": "application/pdf",
                   "section": (), "page": 5, "page_end": 5, **kw})


def test_locator_label_and_fragment_text():
    r = _row()
    assert locator_label(r) == "guide.md > Install > Linux"
    assert fragment(r) == "#char=120,129"
    assert locator_label(_row(section=())) == "guide.md"


def test_locator_label_and_fragment_pdf():
    assert locator_label(_pdf_row()) == "paper.pdf, p. 5"
    assert fragment(_pdf_row()) == "#page=5"
    assert locator_label(_pdf_row(page_end=6)) == "paper.pdf, pp. 5-6"
    assert fragment(_pdf_row(page_end=6)) == "#page=5"


def test_same_name_told_apart_by_label():
    a = _row(document_label="guide.md (aaaaaaaa)")
    b = _row(document_id="b" * 64, document_label="guide.md (bbbbbbbb)")
    assert locator_label(a) != locator_label(b)


def test_citations_quote_content_never_text():
    hits = [Hit(1, 1, 1, 0.03, 0.31), Hit(2, 2, 3, 0.02, 0.42)]
    rows = [_row(), _pdf_row(chunk_id=2, content="Dense retrieval works.", text="[paper] Dense retrieval works.")]
    cites = citations_from_rows(hits, rows)
    assert [c.index for c in cites] == [1, 2]
    assert cites[0].quote == "Run make." and cites[1].quote == "Dense retrieval works."
    assert cites[1].fused_rank == 3 and cites[1].cosine_distance == pytest.approx(0.42)
    assert cites[1].locator_label == "paper.pdf, p. 5" and cites[1].fragment == "#page=5"
    with pytest.raises(ValueError):
        citations_from_rows(hits, rows[:1])


def test_two_sources_under_one_label_are_told_apart_by_their_opening_words():
    """A new user's walk (2026-12-06): two halves of one long paragraph of a web page were cited as
    "web-wikipedia-t-sne.html, ¶ 4" twice and read as a duplicate. Each gets its opening words; a label no other
    source shares, and PDF pages (several passages of one page are what "p. 9" leads a reader to expect), stay."""
    para = Locator(LocatorKind.SECTION, 4, 4)
    hits = [Hit(i, i, i, 0.03, 0.3) for i in (1, 2, 3, 4, 5)]
    rows = [_row(chunk_id=1, section=(), locator=para, document_name="t-sne.html", document_label="t-sne.html",
                 content="Specifically, it models each high-dimensional object by a point."),
            _row(chunk_id=2, section=(), locator=para, document_name="t-sne.html", document_label="t-sne.html",
                 content="- Nearby points model similar objects, distant points dissimilar ones."),
            _row(chunk_id=3),
            _pdf_row(chunk_id=4, content="First passage of page five."),
            _pdf_row(chunk_id=5, content="Second passage of page five.")]
    labels = [c.locator_label for c in citations_from_rows(hits, rows)]
    assert labels == ["t-sne.html, ¶ 4, from \u201cSpecifically, it models each high-dimensional\u201d",
                      "t-sne.html, ¶ 4, from \u201cNearby points model similar objects\u201d",
                      "guide.md > Install > Linux", "paper.pdf, p. 5", "paper.pdf, p. 5"]


def test_prompt_block_has_numbers_names_quotes_and_no_links():
    hits = [Hit(1, 1, 1, 0.03, 0.31), Hit(2, 2, 2, 0.02, 0.42)]
    cites = citations_from_rows(hits, [_row(), _pdf_row(chunk_id=2, content="Dense retrieval works.")])
    block = format_sources_for_prompt(cites)
    assert block == "[1] Linux\nRun make.\n\n[2] paper.pdf\nDense retrieval works."
    assert "#" not in block and "http" not in block and "a" * 64 not in block


def test_citation_json_keeps_the_pinned_keys_first_and_decodes_back():
    g = apply_gate("q", [Hit(1, 1, 1, 0.03, 0.31)], 0.675, 4)
    cites = citations_from_rows(list(g.sources), [_row()])
    j = citation_json(cites[0])
    assert list(j)[:7] == ["index", "document_id", "document_name", "locator_label", "fragment", "quote",
                           "cosine_distance"]
    assert citation_from_json(json.loads(json.dumps(j))) == cites[0]
    # the question's unit cosines choose the key passage; they are never part of the contract
    with_units = replace(cites[0], unit_cosines=((0, 4, 0.5),))
    assert "unit_cosines" not in citation_json(with_units) and citation_json(with_units) == j


def test_citations_from_a_refused_gate_is_empty():
    assert citations(apply_gate("q", [], 0.675, 4), store=None) == []


def test_evidence_span_picks_the_sentence_sharing_most_question_terms():
    from rag.answer.cite import evidence_span

    quote = "The lifts are inspected often. The east stairwell door opens with access code 7316. Staff book rooms."
    a, b = evidence_span(quote, "What is the access code for the east stairwell door?")
    assert quote[a:b] == "The east stairwell door opens with access code 7316."
    assert evidence_span(quote, "zebra crossing") == (0, len(quote))  # nothing shared: the whole quote


# --------------------------------------------------------------------------- issue 17: one locator per format

def _loc_row(locator, **kw):
    return _row(**{"locator": locator, **kw})


def _named(name, **kw):
    return {"document_name": name, "document_label": name, **kw}


_L = Locator
_K = LocatorKind


@pytest.mark.parametrize("loc,kw,label,frag", [
    (_L(_K.SLIDE, 3, 3, "Safety"), _named("deck.pptx", section=("Safety",)), "deck.pptx, slide 3 (Safety)",
     "#slide=3"),
    (_L(_K.SLIDE, 6, 6, "Slide 6"), _named("deck.pptx", section=("Slide 6",)), "deck.pptx, slide 6", "#slide=6"),
    (_L(_K.SLIDE, 3, 3, "Safety"), _named("deck.pptx", section=("Safety", "Speaker notes")),
     "deck.pptx, slide 3 (Safety), speaker notes", "#slide=3"),
    (_L(_K.ROWS, 2, 9, "Q1 sales", anchor="A:E"), _named("s.xlsx"), "s.xlsx, 'Q1 sales'!A2:E9",
     "#'Q1%20sales'!A2:E9"),
    (_L(_K.ROWS, 2, 9, "Q1", anchor="B:C"), _named("s.xlsx"), "s.xlsx, Q1!B2:C9", "#Q1!B2:C9"),
    (_L(_K.ROWS, 4, 4, "", anchor="A:C"), _named("d.csv"), "d.csv, row 4", "#row=4"),
    (_L(_K.ROWS, 4, 6, "", anchor="A:C"), _named("d.csv"), "d.csv, rows 4\u20136", "#row=4-6"),
    (_L(_K.PARAGRAPH, 2, 3, "Linux"), _named("r.docx"), "r.docx > Install > Linux, \u00b6 2\u20133", "#char=120,129"),
    (_L(_K.PARAGRAPH, 5, 5, "Calm", 2, "c2.xhtml"), _named("b.epub"), "b.epub > Calm, \u00b6 5",
     "#char=120,129"),  # by its title: "chapter 2" counted the cover (a new user's walk, 2026-12-07)
    (_L(_K.PARAGRAPH, 1, 1, "Chapter 4", 4, "c4.xhtml"), _named("b.epub"), "b.epub, chapter 4, \u00b6 1",
     "#char=120,129"),
    (_L(_K.PARAGRAPH, 4, 4, "Linux", rows=(5, 9)), _named("r.docx"),
     "r.docx > Install > Linux, \u00b6 4, rows 5\u20139", "#char=120,129"),
    (_L(_K.SECTION, 2, 2, "Linux", rows=(3, 3)), _named("p.html"), "p.html > Install > Linux, \u00b6 2, row 3",
     "#char=120,129"),
    (_L(_K.SECTION, scope="Linux", anchor="on-linux"), _named("p.html"), "p.html > Install > Linux",
     "#on-linux"),
    (_L(_K.REGION, 3, 7, scope_number=1, box=(10, 20, 110, 70)), _named("s.png"), "s.png, lines 3\u20137",
     "#xywh=10,20,100,50"),
    (_L(_K.REGION, 1, 4, scope_number=2, box=(0, 0, 5, 5)), _named("f.tiff"), "f.tiff, page 2, lines 1\u20134",
     "#page=2&xywh=0,0,5,5"),
])
def test_locator_label_and_fragment_per_format(loc, kw, label, frag):
    r = _loc_row(loc, **kw)
    assert locator_label(r) == label
    assert fragment(r) == frag


def test_citation_json_carries_the_locator_for_every_format():
    hits = [Hit(1, 1, 1, 0.03, 0.31), Hit(2, 2, 2, 0.02, 0.42), Hit(3, 3, 3, 0.01, 0.5)]
    rows = [_row(), _pdf_row(chunk_id=2, page_end=6),
            _loc_row(Locator(LocatorKind.SLIDE, 4, 4, "Plan"), chunk_id=3, **_named("d.pptx", section=("Plan",)))]
    got = [citation_json(c) for c in citations_from_rows(hits, rows)]
    assert got[0]["locator"]["kind"] == "chars" and got[0]["fragment"] == "#char=120,129"
    assert got[1]["locator"] == {"kind": "page", "first": 5, "last": 6, "scope": "", "scope_number": None,
                                 "anchor": "", "box": None, "rows": None}
    assert got[2]["locator"]["kind"] == "slide" and got[2]["locator"]["first"] == 4
    assert got[2]["locator_label"] == "d.pptx, slide 4 (Plan)" and got[2]["page"] is None
    assert Locator.from_json(got[2]["locator"]) == rows[2].locator
