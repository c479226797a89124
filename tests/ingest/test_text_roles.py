"""Reference lists, tables of contents and navigation lines are recognised and tagged (issue 28, item 1): each
chunk has one role, stored with it, carried onto its citation, and ranked below body text."""

from __future__ import annotations

import hashlib

import pytest

from rag.index.fusion import body_first
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.ingest.locate import role_at
from rag.ingest.roles import find_roles, is_navigation, is_reference_entry, is_toc
from rag.types import Document, Hit, RoleSpan, TextRole

PAPER = """# Sparse attention for long documents

## Introduction

Sparse attention lets a transformer read long documents at a linear cost in their length. We compare three
patterns of attention on four long-document benchmarks and report accuracy and speed.

## Results

The block-sparse pattern kept 98 percent of the dense model's accuracy while running 3.1 times faster.

## References

[1] A. Vaswani, N. Shazeer, N. Parmar et al. Attention is all you need. In NeurIPS, 2017.

[2] I. Beltagy, M. E. Peters, A. Cohan. Longformer: the long-document transformer. arXiv, 2020.

[3] M. Zaheer, G. Guruganesh, A. Dubey et al. Big Bird: transformers for longer sequences. NeurIPS, 2020.
"""

MANUAL = """# Widget manual

Next: Installing, Previous: Overview, Up: Top   [Contents][Index]

Installing........................................ 3
Configuring the widget............................ 7
Troubleshooting................................... 12

The widget is installed with one command, and it keeps its settings in a file in the home folder.
"""


def _doc(text: str, name: str = "paper.md") -> Document:
    return extract_bytes(text.encode(), name)


def test_the_rules_on_single_blocks():
    assert is_reference_entry("[2] I. Beltagy, M. E. Peters, A. Cohan. Longformer. arXiv, 2020.")
    assert not is_reference_entry("1. Install the 2020 release and restart")
    assert is_toc("Installing........ 3\nConfiguring the widget ......... 7")
    assert not is_toc("The widget costs 3\nand weighs 7")
    assert is_navigation("Next: Installing, Previous: Overview, Up: Top   [Contents][Index]")
    assert is_navigation("« Prev | Home | Next »")
    assert is_navigation("Home » Products » Widgets » Install")
    assert not is_navigation("The next step is to go home.")


def test_a_reference_section_is_tagged_and_its_chunks_carry_the_role():
    doc = _doc(PAPER)
    roles = find_roles(doc)
    assert [r.role for r in roles] == [TextRole.REFERENCES]
    assert doc.canonical[roles[0].start:roles[0].end].strip().startswith("[1] A. Vaswani")
    chunks = chunk_document(doc, count_tokens=lambda t: len(t.split()))
    by_role = {c.role: c.content for c in chunks}
    assert "Big Bird" in by_role[TextRole.REFERENCES] and "Big Bird" not in by_role[TextRole.BODY]
    assert any("98 percent" in c.content and c.role == TextRole.BODY for c in chunks)
    assert all(doc.canonical[c.start:c.end] == c.content for c in chunks)


def test_reference_entries_without_a_heading_are_tagged_too():
    text = PAPER.replace("## References\n\n", "")
    chunks = chunk_document(_doc(text), count_tokens=lambda t: len(t.split()))
    refs = [c for c in chunks if c.role == TextRole.REFERENCES]
    assert refs and "Vaswani" in refs[0].content and "Longformer" in refs[-1].content


def test_contents_and_navigation_lines_are_cut_off_from_body_text():
    chunks = chunk_document(_doc(MANUAL, "manual.md"), count_tokens=lambda t: len(t.split()))
    roles = {c.role: c.content for c in chunks}
    assert roles[TextRole.NAVIGATION].startswith("Next: Installing")
    assert "Troubleshooting" in roles[TextRole.TOC]
    assert roles[TextRole.BODY].startswith("The widget is installed")


def test_a_chunk_of_punctuation_alone_is_never_made():
    rows = "\n".join(["| | | |"] * 40)
    doc = _doc(f"# Form\n\nName: Alice Example\n\n{rows}\n\nSigned on 3 March.\n\n## Tabs\n\n</hfoption>\n\n</hfoptions>\n",
               "form.md")
    chunks = chunk_document(doc, budget_chars=40, count_tokens=lambda t: len(t.split()))
    assert chunks and all(any(ch.isalnum() for ch in c.content) for c in chunks)
    assert not any("hfoption" in c.content for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_role_at_takes_the_span_holding_most_of_the_range():
    doc = Document(id="x", name="x", media_type="text/plain", canonical="a" * 100, title="x", size_bytes=100,
                   extractor="t", extractor_version="1", roles=(RoleSpan(TextRole.TOC, 10, 60),))
    assert role_at(doc, 10, 60) == TextRole.TOC
    assert role_at(doc, 0, 30) == TextRole.TOC  # 20 of 30 characters in the span: the majority
    assert role_at(doc, 0, 20) == TextRole.BODY  # 10 of 20: not a majority
    assert role_at(doc, 0, 100) == TextRole.BODY


def test_body_hits_rank_before_other_roles():
    hits = [Hit(chunk_id=i, rank=i, fused_rank=i, rrf_score=1 / (60 + i), cosine_distance=0.3) for i in (1, 2, 3)]
    got = body_first(hits, {1})
    assert [h.chunk_id for h in got] == [2, 3, 1] and [h.rank for h in got] == [1, 2, 3]
    assert [h.fused_rank for h in got] == [2, 3, 1]
    assert body_first(hits, set()) == hits


@pytest.fixture()
def store(tmp_path, hash_embedder):
    from rag.settings import get_settings
    from rag.store.store import Store

    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=hash_embedder)
    yield s
    s.close()


def test_roles_are_stored_read_back_cited_and_ranked_below_body(store):
    from rag.answer.cite import citations_from_rows

    store.ingest_bytes(PAPER.encode(), "paper.md")
    hits = store.search("Vaswani Shazeer attention 2017 NeurIPS Big Bird Zaheer sparse attention", k=10)
    rows = store.chunks([h.chunk_id for h in hits])
    roles = [r.role for r in rows]
    assert TextRole.REFERENCES in roles and TextRole.BODY in roles
    first_ref = roles.index(TextRole.REFERENCES)
    assert all(r == TextRole.BODY for r in roles[:first_ref]) and all(r != TextRole.BODY for r in roles[first_ref:])
    cites = citations_from_rows(hits, rows)
    assert [c.role for c in cites] == roles
    assert hashlib.sha256(PAPER.encode()).hexdigest() == rows[0].document_id
