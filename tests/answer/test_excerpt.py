"""Query-focused excerpts (rag.answer.excerpt) on real chapter text: verbatim pieces, the budget, the needle kept."""

from __future__ import annotations

import re

import pytest

from rag.answer import excerpt
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.text import units
from rag.tokens import count_tokens


def _norm(t: str) -> str:
    return re.sub(r"\s+", " ", t).strip()


@pytest.fixture(scope="module")
def chunks(corpus_dir):
    path = corpus_dir / "docs" / "01-transformer-architectures.md"
    doc = extract_bytes(path.read_bytes(), path.name)
    return chunk_document(doc, "E")


def test_pieces_are_verbatim_ordered_and_cover_the_text(chunks):
    for c in chunks:
        spans = units(c.content)
        assert spans and all(a < b for a, b in spans)
        assert all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))
        outside = "".join(c.content[b:a] for (_, b), (a, _) in zip([(0, 0), *spans], [*spans, (len(c.content), 0)]))
        assert not outside.strip()  # every non-space character is in some piece


def test_a_hard_wrapped_sentence_is_one_piece():
    text = "Longformer and reformer are models that try to be more efficient and\nuse a sparse version. Next one."
    assert [text[a:b] for a, b in units(text)] == [
        "Longformer and reformer are models that try to be more efficient and\nuse a sparse version.", "Next one."]


def test_needle_kept_within_budget_and_pieces_verbatim(chunks):
    needle = "Longformer and reformer are models that try to be more efficient and\nuse a sparse version of the attention matrix"
    hold = next(c for c in chunks if _norm(needle) in _norm(c.content))
    others = [c for c in chunks if c is not hold and count_tokens(c.content) > 60][:3]
    contents = [hold.content] + [c.content for c in others]
    q = "Which models use a sparse version of the attention matrix to be more efficient on long texts?"
    ex = excerpt.prompt_excerpts(q, contents, 120, count_tokens)
    assert len(ex) == 4 and _norm(needle) in _norm(ex[0].text)
    # pieces are counted one by one (+1 for the join); a source with no piece that fits gets a 30-token stub
    assert sum(count_tokens(e.text) for e in ex) <= 120 + 120 // 4 + 4 * 2
    for e, c in zip(ex, contents):
        assert e.text == excerpt.GAP.join(c[a:b] for a, b in e.spans)  # verbatim pieces of the chunk
        assert not e.whole and e.text


def test_zero_budget_or_short_sources_stay_whole(chunks):
    contents = [c.content for c in chunks[:4]]
    assert [e.text for e in excerpt.prompt_excerpts("attention", contents, 0, count_tokens)] == contents
    assert all(e.whole for e in excerpt.prompt_excerpts("attention", contents, 10**6, count_tokens))


def test_a_unit_ending_in_a_colon_brings_the_formula_it_introduces():
    """Seen on the DPR PDF: the model read 'using the dot product of their vectors:' without the formula."""
    text = ("Retrieval has a long history in question answering systems of many kinds. "
            "We define the similarity between the question and the passage using the dot product of their vectors:\n\n"
            "sim(q, p) = EQ(q) EP(p). (1)\n\n"
            "Cats and dogs are popular pets in many households around the world today.")
    other = "Unrelated text about gardening and the watering of tomato plants in the summer months of the year."
    q = "Which similarity between question and passage vectors does DPR define?"
    ex = excerpt.prompt_excerpts(q, [text, other], 50, count_tokens)
    assert "dot product of their vectors:\n\nsim(q, p) = EQ(q) EP(p). (1)" in ex[0].text
    assert "Cats" not in ex[0].text


def test_a_document_s_own_note_marks_are_not_read_by_the_model(shared_dir):
    """Wikipedia's "research,[2] music analysis,[3]" reached the prompt, and the 0.5B wrote such marks into its
    answers (saved dev answers, 2026-12-06): "[3]" reads as a citation of source 3. The model's view leaves them
    out; the quote the reader sees keeps them, and code such as ``choices[0]`` is never touched."""
    path = shared_dir / "corpus" / "real" / "html" / "web-wikipedia-t-sne.html"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    doc = extract_bytes(path.read_bytes(), path.name)
    chunk = next(c for c in chunk_document(doc, "E") if "computer security research" in c.text)
    assert re.search(r"research,\[\d+\]", chunk.text)  # the reader's quote keeps the page's marks
    view, skipped = excerpt.answer_view(chunk.text)
    read = excerpt.readable(chunk.text, 0, None, skipped)
    assert "computer security research, music analysis," in read and not re.search(r"\[\d+\]", read)
    assert len(view) == len(chunk.text)  # offsets unchanged
    code = "Read it with `print(r.choices[0])` or print(r.choices[0]); see also a[1][2]."
    assert excerpt.readable(code, 0, None, excerpt.answer_view(code)[1]) == code
    # after a space a mark may be the sentence's content (an adversarial review, 2026-12-06): it stays
    for kept in ("The function returns [1, 2, 3].", "Probabilities lie in the interval [0, 1].", "print(xs,[1])",
                 "``print(a,[1])``", "data = {'a':[1], 'b':[2]}", "outperformed visual counting [32]."):
        assert excerpt.readable(kept, 0, None, excerpt.answer_view(kept)[1]) == kept
