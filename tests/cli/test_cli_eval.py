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
