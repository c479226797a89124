"""Tests of rag.evaluation.data: the shared questions and out-of-domain files load; defects name the file and line."""

from __future__ import annotations

import pytest

from rag.evaluation import data


def test_dev_files_load(corpus_dir):
    qs = data.load_questions(corpus_dir / "dev_questions.jsonl")
    ood = data.load_ood(corpus_dir / "dev_ood.jsonl")
    assert len(qs) == 24 and len(data.expand_queries(qs)) == 48
    assert {o.kind for o in ood} == {"near", "far"} and len(ood) == 20


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"id": "q1", "query": "x", "kind": "near"}\n{not json\n', r"bad.jsonl:2: bad JSON"),
        ('{"id": "q1", "query": "", "kind": "near"}\n', r"bad.jsonl:1: missing or empty field 'query'"),
        ('{"id": "q1", "query": "x", "kind": "near"}\n{"id": "q1", "query": "y", "kind": "far"}\n', "duplicate id 'q1'"),
        ('{"id": "q1", "query": "x", "kind": "middling"}\n', "kind must be 'near' or 'far'"),
        ("\n\n", "bad.jsonl: no rows"),
    ],
)
def test_ood_loader_names_file_and_line(tmp_path, text, match):
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(data.EvalInputError, match=match):
        data.load_ood(p)


def test_missing_questions_file(tmp_path):
    with pytest.raises(data.EvalInputError, match="nope.jsonl: cannot read"):
        data.load_questions(tmp_path / "nope.jsonl")
