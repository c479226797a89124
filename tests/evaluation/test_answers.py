"""Answer keys (rag.evaluation.answers, issue 14): both files' forms, and the correctness rule."""

from __future__ import annotations

import json

import pytest

from rag.evaluation.answers import contains_answer, keys_file_for, load_answer_keys
from rag.evaluation.data import EvalInputError


def test_one_alternative_of_every_group_case_insensitive_markers_ignored():
    key = [["Longformer"], ["Reformer", "reformers"]]
    assert contains_answer("LONGFORMER and reformer [2].", key)
    assert not contains_answer("Longformer only [1].", key)
    assert not contains_answer("The answer is in [3].", [["3", "three"]])  # a marker is no answer
    assert contains_answer("It waits three epochs [1].", [["3", "three"], ["epoch"]])
    assert not contains_answer(None, key) and not contains_answer("", key) and not contains_answer("x", [])


def test_keys_from_the_rows_or_from_the_file_beside_them(tmp_path, corpus_dir):
    dev = load_answer_keys(corpus_dir / "dev_questions.jsonl")  # dev_answer_keys.jsonl beside it
    assert keys_file_for(corpus_dir / "dev_questions.jsonl").name == "dev_answer_keys.jsonl"
    assert len(dev) == 24 and dev["q01"] == (("Longformer",), ("Reformer",))
    pdf = load_answer_keys(corpus_dir / "pdf-dev" / "questions.jsonl")  # answer_keys inside the rows
    assert len(pdf) == 30 and dev.keys().isdisjoint(pdf)
    bad = tmp_path / "q.jsonl"
    bad.write_text(json.dumps({"id": "x", "answer_keys": [["ok"], []]}) + "\n")
    with pytest.raises(EvalInputError, match=r"q.jsonl:1: answer_keys must be"):
        load_answer_keys(bad)
