"""A document's sections (rag/ingest/sections.py): a heading with nothing under it is still in a chunk.

A new user's walk (2026-12-07): a form's four field headings ("4.1.1 general topic, its state of the art ...") were in
no chunk, while the document's coverage read 100 %; a divider slide's title was in none either."""

from __future__ import annotations

import pytest

from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes, extract_path
from rag.types import LocatorKind

FORM = b"""# Appendix

## 4.1 Description

The description should communicate the subject and the topics.

### 4.1.1 General topic and its state of the art

### 4.1.2 Key topics and focus

### 4.1.3 Program, as detailed as possible

The program is decisive in the evaluation.

### 4.1.4 Expected impact
"""


def _chunked(data: bytes, name: str):
    doc = extract_bytes(data, name)
    return doc, chunk_document(doc)


def test_headings_with_nothing_under_them_lead_the_next_section_and_the_last_joins_the_one_before():
    doc, chunks = _chunked(FORM, "form.md")
    text = " ".join(c.content for c in chunks)
    for words in ("General topic and its state of the art", "Key topics and focus", "Expected impact"):
        assert words in text, words  # every heading a reader sees is in a chunk
    lead = next(c for c in chunks if "Key topics and focus" in c.content)
    assert "The program is decisive" in lead.content  # they lead the next section's body
    assert all(doc.canonical[c.start:c.end] == c.content for c in chunks)


def test_a_heading_with_a_body_or_subsections_is_not_moved():
    doc, chunks = _chunked(b"# Guide\n\n## Install\n\n### Linux\n\nRun the installer.\n\n## Use\n\nOpen the app.\n", "g.md")
    assert [c.content for c in chunks] == ["Run the installer.", "Open the app."]  # titles stay in the paths
    assert chunks[0].section[-2:] == ("Install", "Linux")


def test_the_real_form_s_field_headings_are_in_a_chunk(corpus_dir):
    path = corpus_dir / "real" / "docx" / "form-monte-verita-conference-application-appendix.docx"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    chunks = chunk_document(extract_path(path))
    text = " ".join(c.content for c in chunks)
    for words in ("general topic, its state of the art and international importance", "Key topics and focus of the conference",
                  "Main objectives of the conference", "Expected scientific impact resulting from the conference"):
        assert words in text, words


def test_a_divider_slide_s_title_is_a_chunk_of_its_own_slide(corpus_dir):
    path = corpus_dir / "real" / "pptx" / "talk-aspnetcore2-security-identity.pptx"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    doc = extract_path(path)
    chunks = chunk_document(doc)
    divider = next(c for c in chunks if "Hosting your application securely" in c.content)
    slide = next(p for p in doc.parts if p.kind == LocatorKind.SLIDE and p.start <= divider.start < p.end)
    assert divider.end <= slide.end  # one slide: its locator is right
    assert divider.locator is not None and divider.locator.first == slide.number
