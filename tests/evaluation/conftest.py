"""The tiny corpus of the evaluation tests: three Markdown documents, four questions, two out-of-domain queries.

Three documents on unrelated topics (``fixtures/tiny/docs``). Each needle is a
sentence of its own paragraph; the queries are the needle's own words, so a
correct retriever ranks the holding chunk first. In ``bees.md`` one needle sits
across character 512 of a single long paragraph: blind 512-character cutting
(A) destroys it, while the boundary strategies (C, E) keep it whole. A fourth
question's needle is in no document (destroyed by all).
"""

from __future__ import annotations

from pathlib import Path

import pytest

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny"


@pytest.fixture(scope="module")
def tiny():
    """``(folder, documents, questions, ood)``: the tiny corpus extracted and its files loaded."""
    from rag.evaluation.data import load_ood, load_questions
    from rag.ingest.extract import extract_path

    docs = [extract_path(TINY / "docs" / n) for n in ("bees.md", "locks.md", "volcanoes.md")]
    return TINY, docs, load_questions(TINY / "questions.jsonl"), load_ood(TINY / "ood.jsonl")
