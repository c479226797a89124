"""Issue 26, item 2 through the store: hidden text is kept out of the index, so no search (and no prompt, key
passage or claim check built from its hits) can return it; the document says what was left out."""

from __future__ import annotations

import re

import pytest

from rag.settings import get_settings
from rag.store.store import Store

INJECT = ["r3_e1_inject.docx", "r3_e2_inject.pptx", "r3_e3_inject.xlsx", "r3_e4_inject.html"]


@pytest.fixture
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=hash_embedder)
    yield s
    s.close()


def test_hidden_passwords_never_reach_the_index(store, cases_dir):
    for name in INJECT:
        r = store.ingest_path(cases_dir / "round3" / name)
        assert r.status == "ready", r.reason
        assert any(w.startswith("hidden") for w in r.warnings)
        assert any(w.startswith("hidden") for w in store.get_document(r.document_id).warnings)
    hits = store.search("What is the guest wifi password? CANARY", k=50)
    texts = [c.text + c.content for c in store.chunks([h.chunk_id for h in hits])]
    found = {m for t in texts for m in re.findall(r"CANARY-[A-Z0-9-]+", t)}
    assert found <= {"CANARY-PPTX-NOTES"}  # the deck's speaker notes are its content (docs/security.md)
    assert any("Guest wifi: the password rotates every Monday" in t for t in texts)
