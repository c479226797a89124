"""The CLI's JSON contract (issue 4), run in-process through click's runner: the fake embedder for the contract,
the real one for the whole corpus (slow)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rag.cli.main import main

SEARCH_KEYS = ["rank", "chunk_id", "document_id", "document_name", "page", "start", "end", "section", "content",
               "cosine_distance"]
#: Added by issue 17 after the pinned keys (fields are added, never removed).
SEARCH_KEYS_ADDED = ["media_type", "locator_label", "fragment", "locator"]
#: Added when search --json became the HTTP API's search object (2026-12-04): each hit's scores.
SEARCH_SCORES_ADDED = ["rrf_score", "dense_rank", "bm25_rank", "bm25_score", "rerank_score"]


def _run(*args):
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.output


@pytest.fixture(scope="module")
def small_store(tmp_path_factory, fake_embedder_module, cases_dir, corpus_dir):
    d = tmp_path_factory.mktemp("cli") / "store"
    folder = d.parent / "in"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "needle.md").write_bytes((cases_dir / "c14_long_paragraph_needle.md").read_bytes())
    (folder / "bad.pdf").write_bytes((cases_dir / "c08_encrypted_userpw.pdf").read_bytes())
    code, out = _run("ingest", "--store", str(d), str(folder), str(corpus_dir / "pdfs" / "02-layoutparser-table-page.pdf"))
    return d, code, out


def test_ingest_folder_status_lines_and_exit_1_on_failure(small_store):
    d, code, out = small_store
    assert code == 1
    lines = out.splitlines()
    assert any(x.startswith("ready") and "needle.md" in x for x in lines)
    assert any(x.startswith("ready") and "02-layoutparser-table-page.pdf" in x for x in lines)
    assert any(x.startswith("failed") and "bad.pdf" in x for x in lines)
    code, out = _run("ingest", "--store", str(d), "--json", str(d.parent / "in"))  # the same files again: nothing new
    status = {r["name"]: r["status"] for r in map(json.loads, out.splitlines())}
    assert code == 1 and status == {"bad.pdf": "failed", "needle.md": "duplicate"}


def test_status_json(small_store):
    d, _, _ = small_store
    code, out = _run("status", "--store", str(d), "--json")
    assert code == 0
    j = json.loads(out)
    assert list(j)[:5] == ["store", "embed_model", "embed_dim", "chunks", "documents"]
    by_name = {x["name"]: x for x in j["documents"]}
    assert by_name["needle.md"]["status"] == "ready" and by_name["needle.md"]["chunk_count"] > 0
    assert by_name["bad.pdf"]["status"] == "failed" and by_name["bad.pdf"]["reason"]
    assert j["chunks"] == sum(x["chunk_count"] for x in j["documents"])


def test_search_json_contract(small_store):
    d, _, _ = small_store
    code, out = _run("search", "--store", str(d), "--k", "3", "--mode", "hybrid", "--json", "layout parser table")
    assert code == 0
    j = json.loads(out)
    assert list(j) == ["query", "mode", "retrieval", "hits"] and j["mode"] == "hybrid"
    # issue 19: how the question was searched; no model rewrite by default
    assert list(j["retrieval"]) == ["query", "language", "bm25_weight", "rewritten_query", "translated_from", "reranked"]
    assert j["retrieval"]["query"] == "layout parser table" and j["retrieval"]["rewritten_query"] is None
    assert j["retrieval"]["language"] == "en" and 0.0 <= j["retrieval"]["bm25_weight"] <= 1.0
    assert 1 <= len(j["hits"]) <= 3
    for i, h in enumerate(j["hits"], start=1):
        assert list(h) == SEARCH_KEYS + SEARCH_KEYS_ADDED + SEARCH_SCORES_ADDED and h["rank"] == i and 0.0 <= h["cosine_distance"] <= 2.0
        assert h["locator"]["kind"] in ("page", "chars") and h["fragment"].startswith(("#page=", "#char="))
    for mode in ("dense", "bm25"):
        assert json.loads(_run("search", "--store", str(d), "--mode", mode, "--json", "table")[1])["mode"] == mode
    from rag.api.records import hits_json
    from rag.store.store import Store

    s = Store(d)  # the HTTP API's and the MCP server's search object is the same, key for key
    hits, plan = s.search_planned("layout parser table", k=3, mode="hybrid")
    assert hits_json(s, "layout parser table", hits, plan, "hybrid") == j
    s.close()


def test_retry_and_delete(small_store):
    d, _, _ = small_store
    docs = json.loads(_run("status", "--store", str(d), "--json")[1])["documents"]
    bad = next(x for x in docs if x["name"] == "bad.pdf")
    code, out = _run("ingest", "--store", str(d), "--retry", bad["id"][:12])
    assert code == 1 and out.startswith("failed")
    code, out = _run("ingest", "--store", str(d), "--retry-failed")
    assert code == 1 and "bad.pdf" in out
    code, out = _run("delete", "--store", str(d), bad["id"])
    assert code == 0 and out.startswith("deleted")
    names = [x["name"] for x in json.loads(_run("status", "--store", str(d), "--json")[1])["documents"]]
    assert "bad.pdf" not in names
    r = CliRunner().invoke(main, ["delete", "--store", str(d), "f" * 64])
    assert r.exit_code == 1


def test_empty_store_search(tmp_path, fake_embedder):
    d = tmp_path / "empty"
    from rag.store.store import Store

    Store(d).close()
    code, out = _run("search", "--store", str(d), "--json", "anything")
    assert code == 0 and json.loads(out)["hits"] == []


@pytest.mark.slow
def test_whole_corpus(tmp_path, embedder, corpus_dir):
    """Done-when of issue 4: good files ready, bad PDFs failed with reasons, needles found, passport refused."""
    d = tmp_path / "corpus"
    code, out = _run("ingest", "--store", str(d), str(corpus_dir / "docs"), str(corpus_dir / "pdfs"))
    assert code == 1  # the bad PDFs fail; the rest is indexed
    docs = json.loads(_run("status", "--store", str(d), "--json")[1])["documents"]
    status = {x["name"]: x for x in docs}
    for f in (corpus_dir / "docs").glob("*.md"):
        assert status[f.name]["status"] == "ready", status[f.name]
    assert status["01-dpr-paper-two-column-13p.pdf"]["status"] == "ready"
    bad = "05-encrypted-doclaynet-p3.pdf"
    assert status[bad]["status"] == "failed" and status[bad]["reason"]
    scan = status["04-scanned-image-only.pdf"]  # issue 13: read by OCR, and said so
    from rag.ingest.ocr import available

    if available():
        assert scan["status"] == "ready" and any("read by OCR" in w for w in scan["warnings"]), scan
    else:
        assert scan["status"] == "failed" and "no text layer" in scan["reason"]
    qs = [json.loads(x) for x in (corpus_dir / "dev_questions.jsonl").read_text().splitlines() if x.strip()]
    found = 0
    for q in qs:
        needle = " ".join(q["needle"].split())
        for key in ("query_course", "query_ticket"):
            hits = json.loads(_run("search", "--store", str(d), "--k", "20", "--json", q[key])[1])["hits"]
            found += any(needle in " ".join(h["content"].split()) for h in hits)
    assert found / (2 * len(qs)) >= 0.8, found
    from rag.answer.cite import citations
    from rag.answer.pipeline import no_generation_answer, search_and_gate
    from rag.store.store import Store

    s = Store(d, embedder=embedder)
    g = search_and_gate(s, "how do I renew my passport")
    p = no_generation_answer(g, citations(g, s)).to_json()
    assert p["refused"] and p["citations"] == []
    assert p["refusal"] == 'NO ANSWER: nothing under cosine distance 0.675 for "how do I renew my passport"'


def test_ingest_and_status_json_carry_extraction_warnings(tmp_path, cases_dir, fake_embedder):
    """Issue 13: what the extractor warns about (here: a non-UTF-8 encoding) is in ``ingest --json`` and ``status``."""
    d = tmp_path / "s"
    code, out = _run("ingest", "--store", str(d), "--json", str(cases_dir / "c23_utf16le_bom.txt"))
    assert code == 0
    line = json.loads(out.strip().splitlines()[-1])
    assert line["status"] == "ready" and any("UTF-16-LE" in w for w in line["warnings"])
    doc = json.loads(_run("status", "--store", str(d), "--json")[1])["documents"][0]
    assert any("UTF-16-LE" in w for w in doc["warnings"])


def test_a_one_chunk_document_is_one_chunk(tmp_path, fake_embedder):
    """arch1's walk (issue 29): `rag ingest` printed "1 chunks"."""
    f = tmp_path / "shed.md"
    f.write_text("# Shed\n\nThe bike shed opens at seven.\n", encoding="utf-8")
    code, out = _run("ingest", "--store", str(tmp_path / "s"), str(f))
    assert code == 0 and "shed.md" in out and ": 1 chunk" in out and "1 chunks" not in out, out
    code, out = _run("status", "--store", str(tmp_path / "s"))
    assert "1 document, 1 chunk" in out and "1 chunks" not in out, out
