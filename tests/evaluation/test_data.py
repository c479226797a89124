"""Tests of rag.evaluation.data: the shared questions and out-of-domain files load; defects name the file and line."""

from __future__ import annotations

import json
from pathlib import Path

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


# --------------------------------------------------------------------------- the two wordings (issue 19)

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny"


def test_both_schemas_give_both_wordings_with_the_files_own_phrasing_names():
    course = data.expand_queries(data.load_questions(TINY / "questions.jsonl"))
    pdf = data.expand_queries(data.load_questions(TINY / "questions_doc_user.jsonl"))
    assert [(q.key, q.wording) for q in course[:2]] == [("q1/course", "doc"), ("q1/ticket", "user")]
    assert [(q.key, q.wording) for q in pdf[:2]] == [("d1/doc", "doc"), ("d1/user", "user")]
    assert pdf[1].text == "bank vault wont open in the morning although the code is right"
    assert pdf[0].needle == pdf[1].needle  # both wordings look for the same needle
    split = data.by_wording(pdf)
    assert list(split) == ["doc", "user"] and [len(v) for v in split.values()] == [3, 3]
    assert all(q.wording == "user" for q in split[data.Wording.USER])


def test_ood_with_extra_fields_loads():
    assert [(o.id, o.kind) for o in data.load_ood(TINY / "ood_why.jsonl")] == [("x1", "far"), ("x2", "near")]


@pytest.mark.parametrize(
    "row, match",
    [
        ({"id": "d1", "doc": "a.pdf", "needle": "n", "query_doc": "x"},
         r"q.jsonl:1: missing or empty fields: needs query_course \+ query_ticket or query_doc \+ query_user"),
        ({"id": "d1", "doc": "a.pdf", "needle": "n", "query_course": "x", "query_user": "y"}, "needs query_course"),
        ({"id": "d1", "doc": "a.pdf", "query_doc": "x", "query_user": "y"}, "missing or empty field 'needle'"),
    ],
)
def test_questions_need_one_complete_schema(tmp_path, row, match):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps(row) + "\n")
    with pytest.raises(data.EvalInputError, match=match):
        data.load_questions(p)


def test_pdf_dev_files_load(corpus_dir):
    pdf_dev = corpus_dir / "pdf-dev"
    if not (pdf_dev / "questions.jsonl").is_file():
        pytest.skip(f"no pdf-dev corpus at {pdf_dev}")
    queries = data.expand_queries(data.load_questions(pdf_dev / "questions.jsonl"))
    ood = data.load_ood(pdf_dev / "ood.jsonl")
    assert len(queries) == 60 and [len(v) for v in data.by_wording(queries).values()] == [30, 30]
    assert queries[1].key == "d01/user" and len(ood) == 15 and {o.kind for o in ood} == {"near", "far"}
