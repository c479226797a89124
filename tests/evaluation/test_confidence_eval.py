"""Issue 39 offline: AUC, the combiner fitted leave-one-corpus-out, the reliability tables and the real corpus."""

from __future__ import annotations

import json
import random

import pytest

from rag.answer.check.confidence import FEATURES, NEUTRAL
from rag.answer.gate import apply_gate
from rag.answer.record import Answer
from rag.evaluation import confidence as ev
from rag.evaluation.answers import load_answer_keys
from rag.evaluation.bench.corpora import ANSWER_CORPORA, QUESTIONS_DIR, corpus
from rag.evaluation.data import load_ood, load_questions
from rag.types import AnswerVerdict


def _rows(n: int = 60, seed: int = 0) -> list[ev.Row]:
    """Three corpora whose answers are right exactly when ``key_score`` is high (plus noise in the others)."""
    rng = random.Random(seed)
    rows = []
    for c in ("course", "pdf-dev", "real"):
        for i in range(n):
            right = i % 2 == 0
            f = {k: NEUTRAL.get(k, 0.0) + rng.random() * 0.1 for k in FEATURES}
            f["key_score"] = (0.8 if right else 0.2) + rng.random() * 0.1
            rows.append(ev.Row(c, f"q{i}/{'doc' if i % 4 < 2 else 'user'}", "doc" if i % 4 < 2 else "user", right, f,
                               {"a": 5.0, "b": 90.0, "cde": 1.0}, (), False))
    return rows


def test_auc_counts_ties_half_and_needs_both_classes():
    assert ev.auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert ev.auc([0.1, 0.9], [True, False]) == 0.0
    assert ev.auc([0.5, 0.5], [True, False]) == 0.5
    assert ev.auc([0.5, 0.6], [True, True]) is None


def test_the_combiner_left_out_in_turn_separates_and_gives_verdicts():
    rows = _rows()
    judged = ev.loco(rows)
    assert len(judged) == len(rows) and {j.row.corpus for j in judged} == {"course", "pdf-dev", "real"}
    sup = [j for j in judged if j.verdict == AnswerVerdict.SUPPORTED]
    mna = [j for j in judged if j.verdict == AnswerVerdict.MAY_NOT_ANSWER]
    assert sup and all(j.row.right for j in sup)
    assert mna and not any(j.row.right for j in mna)


def test_the_tables_print_per_feature_verdict_and_cut():
    rows, out = _rows(), []
    ev.feature_table(rows, out.append)
    ks = next(line for line in out if line.startswith("| key_score |"))
    assert "| 1.00 |" in ks and "| c | 1 |" in ks  # cost: the median of group cde
    judged = ev.loco(rows)
    ev.reliability(judged, out.append)
    assert any(line.startswith("| course | doc | 30 |") for line in out)
    ev.curve(judged, out.append)
    assert any(line.startswith("| 0.90 |") for line in out)


def test_load_reads_the_saved_rows_and_their_vetoes(tmp_path):
    a = Answer(query="Is it?", gate=apply_gate("Is it?", [], 0.675, 4))
    row = dict(corpus="real", key="y01", wording="ood", shown_correct=False, features=dict(NEUTRAL),
               feature_ms={"cde": 0.5}, answer=a.to_json(full=True))
    p = tmp_path / "f.jsonl"
    p.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    [r] = ev.load(p)
    assert r.refused and r.vetoes == () and not r.answerable
    assert ev.judge([r], ev.fit(_rows()))[0].verdict == AnswerVerdict.REFUSED


def test_our_real_documents_questions_are_complete():
    qs = load_questions(QUESTIONS_DIR / "real.jsonl")
    keys = load_answer_keys(QUESTIONS_DIR / "real.jsonl")
    ood = load_ood(QUESTIONS_DIR / "real_ood.jsonl")
    assert len(qs) == 40 and set(keys) == {q.id for q in qs} and len(ood) == 10
    assert {o.kind for o in ood} == {"near"}
    assert len({q.doc.rsplit(".", 1)[1] for q in qs}) >= 4  # formats
    assert "real" in ANSWER_CORPORA


def test_the_real_corpus_lists_the_documents_its_questions_name(shared_dir):
    if not (shared_dir / "corpus" / "real").is_dir():
        pytest.skip("no ../shared/corpus/real")
    c = corpus("real", shared_dir)
    files = c.files()
    assert len(files) == 8 and all(f.is_file() for f in files)


def test_bench_answers_files_are_read_with_todays_verdict_and_the_record_features(tmp_path, monkeypatch):
    """``python -m rag.evaluation.confidence`` reads ``bench answers --json-out`` files: each answer judged again by
    today's rules, right when its shown text holds a key, its features from the record, the corpus from the title."""
    from rag.answer.cite import Citation
    from rag.answer.key_passage import KeyPassage, KeySentence
    from rag.evaluation.bench import answers as bench
    from rag.types import Hit

    monkeypatch.setattr(bench.embed, "get_embedder", lambda: None)
    quote = "Full-time staff get 28 days of annual leave. Part-time staff get it pro rata."
    cite = Citation(index=1, document_id="a" * 64, document_name="leave.md", locator_label="leave.md > Leave",
                    fragment="#char=0,77", quote=quote, cosine_distance=0.25, fused_rank=1, page=None, start=0, end=77,
                    media_type="text/markdown", chunk_id=3)
    q = "How many days of annual leave do full-time staff get?"
    kp = KeyPassage((KeySentence(1, quote[:44], 0, 44, "leave.md > Leave", 0.8),), 1.5, quote[:44])
    a = Answer(query=q, text="", citations=[cite], gate=apply_gate(q, [Hit(chunk_id=3, rank=1, fused_rank=1,
               rrf_score=1 / 61, cosine_distance=0.25)], 0.675, 4), model="m.gguf",
               raw_text="Full-time staff get 28 days of annual leave [1].", key_passage=kp)
    rows = [bench.Row("q01/doc", "doc", a.query, "28 days", (("28 days",),), a),
            bench.Row("q01/doc", "user", a.query, "28 days", (("31 days",),), a)]
    path = tmp_path / "course.json"
    path.write_text(json.dumps([{"title": "course, m.gguf", "rows": bench.rows_json(rows)}]), encoding="utf-8")
    got = ev.load_bench([path])
    assert [(r.corpus, r.key, r.wording) for r in got] == [("course", "q01/doc/doc", "doc"), ("course", "q01/doc/user", "user")]
    assert [r.right for r in got] == [True, False]
    assert got[0].rules_verdict == str(bench.rescored(json.loads(json.dumps(bench.rows_json(rows)))[0], None).judged.verdict)
    assert set(got[0].features) == set(FEATURES) and got[0].features["key_score"] > 0
