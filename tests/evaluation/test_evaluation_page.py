"""The Evaluation page (app_pages/3_Evaluation.py) on the user's own store: upload, run, see the answers and plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny"


@pytest.mark.slow
def test_evaluation_page_runs_on_the_users_store(tmp_path, monkeypatch, embedder):
    from streamlit.testing.v1 import AppTest

    from rag.settings import get_settings
    from rag.store.store import Store

    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("RAG_EMBED_CACHE", str(tmp_path / "cache.sqlite"))
    with Store(tmp_path / "store", get_settings(), embedder=embedder) as s:
        for name in ("locks.md", "volcanoes.md"):
            assert s.ingest_bytes((TINY / "docs" / name).read_bytes(), name).status == "ready"
    page = Path(__file__).resolve().parents[2] / "app_pages" / "3_Evaluation.py"
    at = AppTest.from_file(str(page), default_timeout=180).run()
    assert not at.exception
    q = json.dumps({"id": "q1", "doc": "locks.md", "needle": "refuse to open before a set hour",
                    "query_course": "When do bank vault time locks open?", "query_ticket": "vault wont open at night"})
    o = json.dumps({"id": "o1", "query": "How long should I boil an egg?", "kind": "far"})
    at.file_uploader(key="eval_questions").set_value([("q.jsonl", q.encode(), "application/json")]).run()
    at.file_uploader(key="eval_ood").set_value([("o.jsonl", o.encode(), "application/json")]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception and not at.error
    assert any("Does E beat A at R@20" in m.value for m in at.markdown)
    assert len(at.get("image")) == 3  # recall, sweep, distances
