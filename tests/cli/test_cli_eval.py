"""``python -m rag eval`` on the tiny corpus of tests/evaluation/fixtures: JSON output, skipped modes, bad options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TINY = Path(__file__).resolve().parents[1] / "evaluation" / "fixtures" / "tiny"


@pytest.mark.slow
def test_cli_eval_json(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rag.cli.main import main

    monkeypatch.setenv("RAG_EMBED_CACHE", str(tmp_path / "c.sqlite"))
    r = CliRunner().invoke(main, ["eval", "--questions", str(TINY / "questions.jsonl"), "--ood", str(TINY / "ood.jsonl"),
                                  "--docs", str(TINY / "docs"), "--strategies", "E", "--modes", "hybrid,rerank",
                                  "--out", str(tmp_path / "o"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["strategies"] == ["E"] and out["modes"] == ["hybrid"] and "rerank" in out["skipped_modes"]
    assert (tmp_path / "o" / "report.md").exists()


@pytest.mark.slow
def test_cli_eval_bad_strategy(tmp_path):
    from click.testing import CliRunner

    from rag.cli.main import main

    r = CliRunner().invoke(main, ["eval", "--questions", str(TINY / "questions.jsonl"), "--ood", str(TINY / "ood.jsonl"),
                                  "--docs", str(TINY / "docs"), "--strategies", "Z", "--out", str(tmp_path / "o")])
    assert r.exit_code != 0 and "unknown strategy 'Z'" in r.output


@pytest.mark.slow
def test_cli_eval_reads_the_doc_user_schema_and_splits_by_wording(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rag.cli.main import main

    monkeypatch.setenv("RAG_EMBED_CACHE", str(tmp_path / "c.sqlite"))
    r = CliRunner().invoke(main, ["eval", "--questions", str(TINY / "questions_doc_user.jsonl"),
                                  "--ood", str(TINY / "ood_why.jsonl"), "--docs", str(TINY / "docs"),
                                  "--strategies", "C,E", "--modes", "bm25,hybrid", "--out", str(tmp_path / "o"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["n_queries"] == 6 and out["machine"]
    m = next(x for x in out["metrics"] if (x["strategy"], x["mode"]) == ("E", "hybrid"))
    assert set(m["ranks"]) == {f"d{i}/{w}" for i in (1, 2, 3) for w in ("doc", "user")}
    assert {w: v["n_queries"] for w, v in m["by_wording"].items()} == {"doc": 3, "user": 3}
    assert m["by_wording"]["doc"]["recall"]["20"]["hits"] == 3  # the documents' wording finds every needle
    assert set(out["mode_tests"][0]["by_wording"]) == {"doc", "user"}
    text = (tmp_path / "o" / "report.md").read_text()
    assert "| E | user | 3 |" in text and "## Comparisons by wording" in text
