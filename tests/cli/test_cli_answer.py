"""``python -m rag ask`` and the sources table, through click's runner: the JSON contract and the layout on a store
of the fake embedder (no model); the distances shown, on the real one (slow)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag.cli.main import main

DOC = "12-evaluation.md"


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory, corpus_dir, fake_embedder_module):
    from rag.settings import get_settings
    from rag.store.store import Store

    d = tmp_path_factory.mktemp("cli-answer-store")
    with Store(d, settings=get_settings()) as s:
        assert s.ingest_path(corpus_dir / "docs" / DOC).status == "ready"
    return d


@pytest.fixture(scope="module")
def real_store_dir(tmp_path_factory, corpus_dir, embedder):
    from rag.settings import get_settings
    from rag.store.store import Store

    d = tmp_path_factory.mktemp("cli-answer-real")
    with Store(d, settings=get_settings(), embedder=embedder) as s:
        assert s.ingest_path(corpus_dir / "docs" / DOC).status == "ready"
    return d


@pytest.fixture()
def runner(monkeypatch):
    monkeypatch.setenv("RAG_MAX_ANSWER_TOKENS", "32")
    monkeypatch.setenv("RAG_N_CTX", "2048")
    return CliRunner()


def _question(corpus_dir) -> str:
    for line in (corpus_dir / "dev_questions.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["doc"] == DOC:
            return row["query_course"]
    raise AssertionError(f"no dev question on {DOC}")


def test_refusal_line_and_json(runner, store_dir):
    r = runner.invoke(main, ["ask", "--store", str(store_dir), "how do I renew my passport"])
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    assert 'NO ANSWER: nothing under cosine distance 0.675 for "how do I renew my passport"' in lines
    assert any(line.startswith("why: nearest distance 0.") for line in lines)  # the gate's evidence, on stderr
    r = runner.invoke(main, ["ask", "--store", str(store_dir), "--json", "--threshold", "0.3", "how do I renew my passport"])
    d = json.loads(r.output)
    assert d["refused"] and d["answer"] is None and d["threshold"] == 0.3 and d["citations"] == []
    assert d["advice"]["searched"].startswith("Searched") and d["searched"]["total"] >= 1  # issue 39, Deliver 3
    assert 1 <= len(d["advice"]["closest"]) <= 3 and "cosine distance" in d["advice"]["closest"][0]
    assert "Use the words the document itself would use (names, terms, numbers)." in d["advice"]["try"]
    assert "  " + d["advice"]["searched"] in lines  # the human output prints the same advice under its verdict


def test_no_generate_json_contract(runner, store_dir, corpus_dir):
    r = runner.invoke(main, ["ask", "--store", str(store_dir), "--no-generate", "--json", "--max-sources", "2", _question(corpus_dir)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert list(d) == ["query", "threshold", "refused", "refusal", "answer", "citations", "verdict", "verdict_reason",
                       "confidence",
                       "notice", "gate", "retrieval", "key_passage", "searched"] + (
                           ["advice"] if d["verdict"] in ("refused", "may_not_answer") else [])
    assert d["retrieval"]["rewritten_query"] is None and 0.0 <= d["retrieval"]["bm25_weight"] <= 1.0
    assert d["answer"] is None and 1 <= len(d["citations"]) <= 2
    # issue 15: the gate's verdict, the calibrated evidence and why; issue 24: the answer's verdict on top
    g = d["gate"]
    assert g["kind"] == "calibrated" and g["verdict"] in ("answered", "mentions")
    assert (d["notice"] is not None) == (g["verdict"] == "mentions")
    assert d["verdict"] in ("partly_supported", "may_not_answer")  # no model ran: the key passage alone
    assert (g["verdict"] == "mentions") <= (d["verdict"] == "may_not_answer")
    assert {"relative_distance", "coverage", "score", "self_distance", "far_distance"} <= set(g["evidence"])
    assert g["language"]["documents"] == ["en"] and g["why"].startswith("nearest distance 0.")
    kp = d["key_passage"]  # issue 14: verbatim sentences of a gated source, with its [n] and locator
    quote = {c["index"]: c["quote"] for c in d["citations"]}[kp["index"]]
    assert kp["sentences"] and all(quote[x["start"]:x["end"]] == x["text"] for x in kp["sentences"])
    assert kp["text"].endswith(f"[{kp['index']}]") and kp["locator_label"].startswith(DOC)
    assert list(d["citations"][0])[:7] == ["index", "document_id", "document_name", "locator_label", "fragment", "quote", "cosine_distance"]


@pytest.mark.slow
def test_streams_answer_then_sources_table(runner, real_store_dir, corpus_dir, fake_generator):
    """The CLI's layout, not the model: a scripted generator answers (the real model is tested in the answer layer);
    the real embedder, for the distance under the threshold."""
    r = runner.invoke(main, ["ask", "--store", str(real_store_dir), _question(corpus_dir)])
    assert r.exit_code == 0, r.output
    assert len(fake_generator.prompts) == 1 and fake_generator.prompts[0].sources
    out = r.output
    header = next(i for i, line in enumerate(out.splitlines()) if line.startswith("n ") and "document" in line)
    lines = out.splitlines()
    assert "".join(lines[:header]).strip()  # the answer came first
    assert lines[0].startswith("Key passage [") and DOC in lines[0]  # ... after the key passage
    row = lines[header + 1]
    assert row.startswith("[1]") and DOC in row and "#char=" in row
    assert float(row.split()[-1]) < 0.675
    answer = "\n".join(lines[:header])
    assert "[1]." in answer and "fake.gguf: first words " in r.output and "(retrieval " in r.output  # the scripted claim, then the timing line


def test_an_echo_of_the_question_is_left_out_and_the_key_passage_stands(runner, store_dir, corpus_dir, fake_generator):
    """Issue 14 in the CLI: the model only restates the question with a citation; the claim check leaves it out,
    says why, and the key passage stands as the answer with a plain note."""
    q = _question(corpus_dir)
    fake_generator.reply = lambda question, sources: f"{question.rstrip('?')} [1]."
    r = runner.invoke(main, ["ask", "--store", str(store_dir), q])
    assert r.exit_code == 0, r.output
    assert "Left out by the claim check (1):" in r.output and "Note: " in r.output
    answer_line = next(line for line in r.output.splitlines() if line.startswith("Answer: "))
    assert answer_line.endswith("]") and q.rstrip("?") not in answer_line


def test_missing_store_and_model_are_clean_errors(runner, tmp_path, store_dir, corpus_dir):
    r = runner.invoke(main, ["ask", "--store", str(tmp_path / "none"), "anything"])
    assert r.exit_code == 1 and "no store at" in r.output
    r = runner.invoke(main, ["ask", "--store", str(store_dir), "--model", "absent.gguf", _question(corpus_dir)])
    assert r.exit_code == 1 and "absent.gguf is missing; run: make models" in r.output
