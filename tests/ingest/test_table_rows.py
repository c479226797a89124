"""Rows in the locator of a chunk inside a long table (rag.ingest.locate.table_rows; rag.answer.cite labels).

A table is one paragraph to the paragraph-counted locators (DOCX, EPUB, HTML, Markdown): before, every chunk of a
400-row DOCX table read "¶ 34", and four sources of one answer over OWASP ASVS's requirement tables read alike."""

from __future__ import annotations

import pytest

from rag.answer.cite import locator_label
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes, extract_path
from rag.ingest.locate import table_rows
from rag.store.store import ChunkRow
from rag.types import LocatorKind


def test_rows_are_counted_as_a_reader_counts_them():
    text = "Intro.\n\n| # | Rule |\n| --- | --- |\n| 1 | a |\n| 2 | b |\n| 3 | c |\n\nAfter."
    assert table_rows(text, text.index("| 2"), text.index("| 3") + 9) == (3, 4)  # header row 1, rule not a row
    assert table_rows(text, text.index("| #"), text.index("| 1 |") + 5) == (1, 2)
    assert table_rows(text, 0, 5) is None  # not in a table
    assert table_rows(text, text.index("| 2"), len(text)) is None  # runs out of the table
    plain = "| a | b |\n| c | d |"  # no rule line: every line a row
    assert table_rows(plain, plain.index("| c"), len(plain)) == (2, 2)


def _label(doc, c):
    return locator_label(ChunkRow(chunk_id=1, document_id=doc.id, document_name=doc.name, document_label=doc.name,
                                  media_type=str(doc.media_type), index=c.index, text=c.text, content=c.content,
                                  section=c.section, start=c.start, end=c.end, page=None, page_end=None,
                                  locator=c.locator))


def test_chunks_of_a_long_markdown_table_name_their_rows():
    rows = "\n".join(f"| R{i} | the requirement number {i} says to verify item {i} carefully |" for i in range(1, 61))
    md = f"# Rules\n\nThe table below lists them.\n\n| Id | Requirement |\n| --- | --- |\n{rows}\n\nDone.\n"
    doc = extract_bytes(md.encode(), "rules.md")
    chunks = [c for c in chunk_document(doc, count_tokens=lambda s: len(s.split())) if "| R" in c.content]
    assert len(chunks) > 3
    labels = [_label(doc, c) for c in chunks]
    assert len(set(labels)) == len(labels), labels
    inside = [c for c in chunks if c.locator.rows is not None]  # chunks that run into the text around keep ¶ only
    assert len(inside) >= len(chunks) - 2
    for c in inside:
        first, last = c.locator.rows
        lines = c.content.splitlines()
        # the first and last rows named are the rows the quote holds (R1 is row 2 under the header row)
        assert lines[0].startswith(f"| R{first - 1} |") and lines[-1].startswith(f"| R{last - 1} |"), (c.locator, lines)
        assert _label(doc, c).endswith(f"rows {first}\u2013{last}") or _label(doc, c).endswith(f"row {first}")


def test_a_real_docx_requirement_table_cites_rows(shared_dir):
    path = shared_dir / "corpus" / "real" / "docx" / "standard-owasp-asvs-5.0.0.docx"
    if not path.exists():
        pytest.skip(f"{path} not found")
    doc = extract_path(path)
    chunks = chunk_document(doc, count_tokens=lambda s: len(s.split()))
    in_tables = [c for c in chunks if c.locator and c.locator.kind == LocatorKind.PARAGRAPH and c.locator.rows]
    assert len(in_tables) > 100
    c = next(c for c in in_tables if "| 6.2.4 |" in c.content)
    label = _label(doc, c)
    assert "V6.2 Password Security" in label and ", row" in label
    # the row named is the row of the table that holds 6.2.4: count the lines of its table in the canonical text
    top = doc.canonical.rfind("\n\n", 0, c.start) + 2
    table = doc.canonical[top:doc.canonical.find("\n\n", c.start)].splitlines()
    row = next(i for i, line in enumerate(table) if line.startswith("| 6.2.4 |"))  # line 0 the header, 1 the rule
    assert row in range(c.locator.rows[0], c.locator.rows[1] + 1)
