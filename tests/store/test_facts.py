"""The store keeps what extraction learned (issue 23, change 2): page spans, locator parts, OCR pages, language.

Answering, the viewer, the Documents page, BM25 rebuilds and the gate's calibration read them from the store;
nothing downstream opens the original bytes or detects a language again. Old stores: migration 5 fills the
language and the OCR pages; page spans and parts are read once from the kept original.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest
from samples import GARDEN_QUESTION, garden_pdf, pptx_bytes

from rag import language
from rag.answer.cite import evidence_pages
from rag.ingest.extract import extract_bytes
from rag.settings import get_settings
from rag.store.schema import MIGRATIONS, connect, migrate, schema_version
from rag.store.store import Store
from rag.types import LocatorKind, PageSpan

ROOT = Path(__file__).resolve().parents[2]

PAGE1 = ("The harbour office opened in 1931 on the north quay. In 2021 the old customs building was sold to the "
         "town. The stairwells were renovated the same year.")
PAGE2 = ("The access code for the east stairwell door is 7316 and it changes every spring. Visitors sign in at "
         "the front desk.")
QUESTION = "What is the access code for the east stairwell door?"


def _two_page_pdf() -> bytes:
    d = pymupdf.open()
    for text in (PAGE1, PAGE2):
        p = d.new_page(width=420, height=600)
        p.insert_textbox(pymupdf.Rect(40, 40, 380, 560), text, fontsize=11)
    return d.tobytes()


@pytest.fixture()
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=hash_embedder)
    yield s
    s.close()


def _crossing(store, doc_id):
    rows = [r for r in store.document_chunks(doc_id) if r.page != r.page_end]
    assert rows, "the sample must give a chunk over the page break"
    return rows


def test_page_map_is_stored_and_a_citation_never_opens_the_pdf(store):
    data = _two_page_pdf()
    r = store.ingest_bytes(data, "harbour.pdf")
    assert r.status == "ready"
    assert store.page_map(r.document_id) == extract_bytes(data, "harbour.pdf").pages
    rows = _crossing(store, r.document_id)
    store.original_path(r.document_id).unlink()  # answering must not need the original any more
    assert evidence_pages(rows, QUESTION, store) == [2]
    assert evidence_pages(rows, "When was the customs building sold?", store) == [1]
    doc = store.get_document(r.document_id)
    assert (doc.language, doc.ocr_pages) == ("en", ())


def test_parts_are_stored_for_the_viewer(store):
    r = store.ingest_bytes(pptx_bytes(), "deck.pptx")
    parts = store.parts(r.document_id)
    assert parts == extract_bytes(pptx_bytes(), "deck.pptx").parts
    assert parts and {p.kind for p in parts} == {LocatorKind.SLIDE}
    assert store.page_map(r.document_id) == () and store.parts("0" * 64) == ()


def test_bm25_rebuild_and_calibration_read_the_stored_languages(store, monkeypatch):
    from rag.answer.gate.calibrated_gate import store_calibration

    r = store.ingest_bytes(b"# Harbour\n\n" + PAGE1.encode() + b"\n\n" + PAGE2.encode() + b"\n", "harbour.md")
    assert store.get_document(r.document_id).language == "en"

    def no_detection(*a, **k):
        raise AssertionError("a language was detected again")

    monkeypatch.setattr(language, "_detect", no_detection)
    idx = store.index_cache.rebuild()  # the one rebuild path: BM25 stems with the stored language
    assert idx.bm25.analyzer.languages == ("en",)
    assert store_calibration(store).languages == {"en": 1.0}


def _roll_back_to_v4(path: Path) -> None:
    """Make a store as main wrote it before migration 5: the four columns gone, the ledger at 4."""
    conn = sqlite3.connect(path / "store.sqlite3")
    conn.executescript("".join(f"ALTER TABLE documents DROP COLUMN {c}; "
                               for c in ("page_spans", "parts", "ocr_pages", "language"))
                       + "DELETE FROM migrations WHERE version > 4;")
    conn.commit()
    conn.close()


def test_an_old_store_gets_its_facts_back(tmp_path, hash_embedder):
    path = tmp_path / "old"
    data = _two_page_pdf()
    with Store(path, embedder=hash_embedder) as s:
        pdf = s.ingest_bytes(data, "harbour.pdf").document_id
        deck = s.ingest_bytes(pptx_bytes(), "deck.pptx").document_id
        # what the PDF reader wrote before the OCR pages had a column of their own
        s._db.execute("UPDATE documents SET warnings=? WHERE id=?",
                      (json.dumps(["page(s) 2 read by OCR (rapidocr-onnxruntime); check quotes against the page"]), pdf))
    _roll_back_to_v4(path)
    conn = connect(path / "store.sqlite3")
    assert schema_version(conn) == 4
    assert migrate(conn) == list(range(5, len(MIGRATIONS) + 1))
    got = dict(conn.execute("SELECT id, language FROM documents").fetchall())
    assert got == {pdf: "en", deck: "en"}
    assert conn.execute("SELECT ocr_pages, page_spans, parts FROM documents WHERE id=?", (pdf,)).fetchone() == (
        "[2]", None, None)
    conn.close()
    with Store(path, embedder=hash_embedder) as s:
        assert s.get_document(pdf).ocr_pages == (2,)
        assert s.page_map(pdf) == extract_bytes(data, "harbour.pdf").pages  # read once from the kept original
        assert s.parts(deck) == extract_bytes(pptx_bytes(), "deck.pptx").parts
        s.original_path(pdf).unlink()
        assert s.page_map(pdf)[1].page == 2  # ... and kept: the original is not needed again
        assert evidence_pages(_crossing(s, pdf), QUESTION, s) == [2]


def test_an_old_documents_facts_are_read_in_a_child_process_never_in_this_one(tmp_path, hash_embedder, monkeypatch):
    """Review 2026-12-02, defect A: the backfill ran the whole extraction (OCR included) inside the app's server, the
    first time a question cited the document. It runs in a contained child now: a reader that fails in this
    process does not matter, and the page map still comes back."""
    from rag.ingest import extract as extract_mod
    from rag.store import facts

    path = tmp_path / "old"
    data = _two_page_pdf()
    expected = extract_bytes(data, "harbour.pdf").pages
    with Store(path, embedder=hash_embedder) as s:
        pdf = s.ingest_bytes(data, "harbour.pdf").document_id
    _roll_back_to_v4(path)

    def in_this_process(*a, **k):
        raise AssertionError("an old original was extracted in the app's process")

    monkeypatch.setattr(extract_mod, "extract_bytes", in_this_process)
    children = []
    real = facts.ContainedExtractor

    def watched(*a, **k):
        children.append(real(*a, **k))
        return children[-1]

    monkeypatch.setattr(facts, "ContainedExtractor", watched)
    with Store(path, embedder=hash_embedder) as s:
        assert s.page_map(pdf) == expected
        assert len(children) == 1 and children[0].seconds == facts.BACKFILL_SECONDS
        assert children[0]._proc is None  # closed after: no child left behind the question
        assert s.page_map(pdf) == expected and len(children) == 1  # stored: read once


def test_an_old_document_without_its_original_still_cites_its_first_page(tmp_path, hash_embedder):
    path = tmp_path / "old"
    with Store(path, embedder=hash_embedder) as s:
        pdf = s.ingest_bytes(_two_page_pdf(), "harbour.pdf").document_id
        s.original_path(pdf).unlink()
    _roll_back_to_v4(path)
    with Store(path, embedder=hash_embedder) as s:
        assert s.page_map(pdf) == ()
        assert evidence_pages(_crossing(s, pdf), QUESTION, s) == [1]  # the chunk's first page, as before issue 13


def test_page_spans_round_trip():
    span = PageSpan(3, "iii", 10, 42)
    assert PageSpan.from_json(json.loads(json.dumps(span.to_json()))) == span


def test_the_answer_layer_imports_neither_pymupdf_nor_ocr():
    code = ("import importlib, pkgutil, sys\nimport rag.answer\n"
            "for m in pkgutil.walk_packages(rag.answer.__path__, 'rag.answer.'):\n    importlib.import_module(m.name)\n"
            "print(sorted(k for k in ('pymupdf', 'fitz', 'rapidocr_onnxruntime', 'rag.ingest.ocr', 'rag.ingest.pdf.extract') "
            "if k in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_a_citation_over_a_page_break_opens_where_its_quoted_sentences_are(store):
    """Issue 42: "p. 1 (pp. 1-2)" opened page 1 while the key passage quoted from it is on page 2 (the page was
    chosen by the single sentence sharing most words with the question, the earliest on a tie: page 1's)."""
    from rag.answer.key_passage import key_passage
    from rag.answer.pipeline import gated_sources

    doc = store.ingest_bytes(garden_pdf(), "garden.pdf").document_id
    (row,) = _crossing(store, doc)
    assert evidence_pages([row], GARDEN_QUESTION, store) == [1]  # the single-sentence rule alone: page 1
    _, cites, _ = gated_sources(store, GARDEN_QUESTION, store.settings.with_overrides(gate="distance", threshold=1.9))
    (c,) = [c for c in cites if c.chunk_id == row.chunk_id]
    kp = key_passage(GARDEN_QUESTION, cites, store.term_stats())
    assert "The porter must lock it at ten." in kp.body and kp.index == c.index
    assert (c.page, c.fragment, c.locator_label) == (2, "#page=2", "garden.pdf, p. 2 (pp. 1-2)")
    assert kp.sentences[0].locator_label == "garden.pdf, p. 2 (pp. 1-2)"
    page2 = store.page_map(doc)[1]
    assert page2.page == 2 and page2.start <= c.start + kp.sentences[0].start  # the quoted sentences: on page 2
