"""``python -m rag bench answers`` on any question file: both schemas, per wording, scored against the keys."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rag.cli.main import main

DOC = """# Parking

Visitors park in lot B, next to the main entrance. Parking in lot B is free for the first two hours.

## Bicycles

Bicycles are parked in the covered racks behind building C.
"""


def test_key_passage_only_run_on_a_question_file_of_the_pdf_schema(tmp_path, fake_embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "parking.md").write_text(DOC, encoding="utf-8")
    rows = [
        {"id": "p1", "doc": "parking.md", "needle": "Bicycles are parked in the covered racks behind building C.",
         "query_doc": "Where are bicycles parked?", "query_user": "where can I leave my bike",
         "answer_keys": [["covered racks"], ["building C"]]},
        {"id": "p2", "doc": "parking.md", "needle": "Parking in lot B is free for the first two hours.",
         "query_doc": "How long is parking in lot B free?", "query_user": "do I pay for the car park",
         "answer_keys": [["two hours", "2 hours"]]},
    ]
    q = tmp_path / "questions.jsonl"
    q.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run.json"
    r = CliRunner().invoke(main, ["bench", "answers", "--questions", str(q), "--docs", str(docs),
                                  "--store", str(tmp_path / "store"), "--no-generate", "--json-out", str(out)])
    assert r.exit_code == 0, r.output
    assert "| metric" in r.output and "doc wording" in r.output and "user wording" in r.output
    line = next(x for x in r.output.splitlines() if x.startswith("| key passage alone correct"))
    assert line.split("|")[2].strip().startswith("2/2")  # both documents'-wording questions answered by it
    saved = json.loads(out.read_text())
    assert [x["key"] for x in saved[0]["rows"]] == ["p1/doc", "p1/user", "p2/doc", "p2/user"]
    assert all("key_passage" in x for x in saved[0]["rows"] if not x["refused"])


def test_verdicts_and_confident_wrong_answers_are_reported_and_two_runs_compared(tmp_path, fake_embedder, fake_generator,
                                                                                 monkeypatch):
    """Issue 24: per wording, the answers per verdict with their share of right ones, the confident wrong answers
    (shown as supported, not right by the keys) counted and listed; --rescore A --compare B pairs two runs."""
    from rag.cli import bench_answers

    monkeypatch.setattr(bench_answers, "get_default_generator", lambda s=None: fake_generator)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "parking.md").write_text(DOC, encoding="utf-8")
    rows = [{"id": "p2", "doc": "parking.md", "needle": "Parking in lot B is free for the first two hours.",
             # not a quantity question: "How long ...?" answered without a number is only partly supported (issue 24)
             "query_doc": "What does parking in lot B cost?", "query_user": "do I pay for the lot B car park?",
             "answer_keys": [["two hours", "2 hours"]]}]
    q = tmp_path / "questions.jsonl"
    q.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fake_generator.reply = lambda question, sources: "Lot B is free for the first hours [1]."  # wrong, and checked
    out = tmp_path / "run.json"
    args = ["bench", "answers", "--questions", str(q), "--docs", str(docs), "--store", str(tmp_path / "store"),
            "--model", "fake.gguf"]
    r = CliRunner().invoke(main, [*args, "--json-out", str(out)])
    assert r.exit_code == 0, r.output
    sup = next(x for x in r.output.splitlines() if x.startswith("| verdict supported: answers (right, 95 % interval)"))
    assert sup.split("|")[2].strip() == "1: 0/1 (0%, 0%-79%)"  # the reliability, with its Wilson interval
    line = next(x for x in r.output.splitlines() if x.startswith("| confident wrong (supported, not right)"))
    assert line.split("|")[2].strip().startswith("1/1")
    assert "confident wrong answers (shown as supported, not right by the keys)" in r.output
    assert "- p2/doc (doc): 'Lot B is free for the first hours [1].'  keys: two hours/2 hours" in r.output
    import rag.answer.check.confidence as conf

    with monkeypatch.context() as m:
        m.setattr(conf, "shipped_combiner", lambda: conf.Combiner(("key_score",), (1.0,), (0.0,), (1.0,), 0.0))
        r = CliRunner().invoke(main, args)
    assert "coverage and precision of the answers' confidence" in r.output  # issue 39: the combiner's curve
    assert any(x.startswith("| 0.50 | 2/2 (100%) | 0/2 (0%, 0%-66%)") for x in r.output.splitlines())
    fake_generator.reply = lambda question, sources: "Parking in lot B is free for the first two hours [1]."
    right = tmp_path / "right.json"
    assert CliRunner().invoke(main, [*args, "--json-out", str(right)]).exit_code == 0
    r = CliRunner().invoke(main, [*args, "--rescore", str(out), "--compare", str(right)])
    assert r.exit_code == 0, r.output
    pair = next(x for x in r.output.splitlines() if x.startswith("| all doc |"))
    assert pair.split("|")[3].strip() == "0 / 1" and pair.split("|")[4].strip() == "+1 / -0"
