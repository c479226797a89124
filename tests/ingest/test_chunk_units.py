"""Issue 27 in stage 2 (rag/ingest/chunk.py): even splits of a long paragraph (item 4) and the units that get
vectors of their own (item 1)."""

from __future__ import annotations

from rag.ingest.chunk import balanced_pack, chunk_document, chunk_units, pack, split_span, unit_text
from rag.ingest.extract import extract_bytes


def _sentences(*lengths: int) -> tuple[str, list[tuple[int, int]]]:
    """A paragraph of sentences of the given lengths (characters, final period and space included)."""
    parts, spans, pos = [], [], 0
    for i, n in enumerate(lengths):
        s = (f"S{i} " + "word " * n)[: n - 1].rstrip() + "."
        parts.append(s)
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    return " ".join(parts), spans


def test_balanced_pack_keeps_greedys_count_and_evens_the_pieces():
    _, spans = _sentences(200, 200, 80, 70)  # greedy at 512: 200+200+80 | 70 (the tail sentence alone)
    greedy = pack(spans, 512)
    even = balanced_pack(spans, 512)
    assert len(greedy) == len(even) == 2
    assert greedy[-1][1] - greedy[-1][0] < 100  # the orphan
    sizes = [e - s for s, e in even]
    assert max(sizes) <= 512 and min(sizes) > 100
    assert even[0][0] == spans[0][0] and even[-1][1] == spans[-1][1]


def test_balanced_pack_one_piece_and_oversized_unit_unchanged():
    _, spans = _sentences(100, 100)
    assert balanced_pack(spans, 512) == pack(spans, 512) == [(spans[0][0], spans[1][1])]
    assert balanced_pack([(0, 600), (601, 650)], 512) == [(0, 600), (601, 650)]
    assert balanced_pack([], 512) == []


def test_a_550_character_paragraph_is_cut_in_two_even_halves():
    text, _ = _sentences(120, 120, 120, 120, 70)  # 550 characters, as the held-out question's paragraph
    pieces = split_span(text, 0, len(text), 512)
    assert len(pieces) == 2
    assert all(e - s >= 200 for s, e in pieces)
    assert "".join(text[s:e] for s, e in pieces).replace(" ", "") == text.replace(" ", "")


def test_chunk_units_are_canonical_spans_of_three_words_or_more():
    md = ("# Guide\n\n## Parking\n\nPermits are renewed every January at the front desk. Yes. "
          "A permit costs 40 euros per year.\n\n## Bikes\n\nShowers are in building B.\n")
    doc = extract_bytes(md.encode(), "guide.md")
    chunks = chunk_document(doc, "E")
    park = next(c for c in chunks if "Permits" in c.content)
    spans = chunk_units(park)
    assert [doc.canonical[s:e] for s, e in spans] == [
        "Permits are renewed every January at the front desk.", "A permit costs 40 euros per year."]
    s, e = spans[1]
    assert unit_text(park, s, e) == "[Guide > Parking]\nA permit costs 40 euros per year."
    bikes = next(c for c in chunks if "Showers" in c.content)
    assert chunk_units(bikes) == []  # one unit: the chunk's own vector is its unit's


def test_a_split_paragraphs_later_chunk_carries_its_lead_in_text_not_in_content():
    lead = "Lichens grow slowly on the north side of old stone walls in the valley."
    rest = " ".join(f"Sentence {i} says more about the walls and the moss and the rain." for i in range(12))
    md = f"# Walls\n\n## Lichens\n\n{lead} {rest}\n\n## Other\n\nA short note.\n".encode()
    doc = extract_bytes(md, "walls.md")
    chunks = chunk_document(doc, "E")
    walls = [c for c in chunks if "walls" in c.content]
    assert len(walls) >= 2
    assert lead not in walls[0].text.replace(walls[0].content, "")  # the first piece holds the lead itself
    for c in walls[1:]:
        assert lead not in c.content and c.text == f"[Walls > Lichens]\n{lead} \u2026\n{c.content}"
        assert doc.canonical[c.start:c.end] == c.content
    note = next(c for c in chunks if c.content == "A short note.")
    assert note.text == "[Walls > Other]\nA short note."


def test_lines_that_never_answer_get_no_vector_of_their_own():
    """Issue 36 item 3 / issue 41 item 2: a slide's footer glued to its last bullet and a contents line inside a body
    chunk are left out of the units (rag.ingest.unit_roles); the bullet keeps its own unit, without the footer."""
    from rag.types import Chunk, TextRole

    content = ("A branch is a movable pointer to a commit in the history.\n"
               "Merging joins two branches into one new commit.\n"
               "Jane Roe   Git and GitHub   October 2023   7 / 40\n"
               "Installation ........................ 12")
    chunk = Chunk(doc_id="d", index=0, text=content, content=content, section=(), start=100, end=100 + len(content))
    got = [content[a - 100:b - 100] for a, b in chunk_units(chunk)]
    assert got == ["A branch is a movable pointer to a commit in the history.",
                   "Merging joins two branches into one new commit."]
    # a chunk ingest tagged as something else keeps its units as before (its own role, searched below body text)
    toc = Chunk(doc_id="d", index=1, text=content, content=content, section=(), start=0, end=len(content),
                role=TextRole.TOC)
    assert any("7 / 40" in content[a:b] for a, b in chunk_units(toc))
