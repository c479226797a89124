"""Issue 26, item 4 in the pages (AppTest): the app links a PDF's served copy by a capability URL of its collection
and publication, its Delete button and the sidebar's collection removal take the copy away, and a sweep at app
start removes copies that no store holds."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
DOCS_PAGE = str(ROOT / "app_pages" / "1_Documents.py")
SOURCE_PAGE = str(ROOT / "app_pages" / "2_Source.py")
TIMEOUT = 600  # a bound on waiting on 2 shared cores, never an assertion


def _app(path: str):
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(path, default_timeout=TIMEOUT)


@pytest.fixture
def static(tmp_path, monkeypatch):
    """A static folder of this test's own, and the app's once-per-process sweep made to run again."""
    from ui import services

    folder = tmp_path / "static"
    folder.mkdir()
    monkeypatch.setenv("RAG_STATIC_DIR", str(folder))
    monkeypatch.delenv("RAG_COLLECTION", raising=False)
    services.sweep_served.clear()
    yield folder
    services.sweep_served.clear()


def test_app_start_sweeps_copies_no_store_holds(tmp_path, monkeypatch, static):
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("RAG_STORE", str(data))
    sha = hashlib.sha256(b"gone").hexdigest()
    legacy = static / f"{sha}.pdf"  # the shared layout before issue 26: every collection's PDFs by content hash
    legacy.write_bytes(b"%PDF-1.4 legacy")
    orphan = static / ("a" * 32)  # the folder of a data folder or collection that no longer exists
    orphan.mkdir()
    (orphan / ("b" * 32 + ".pdf")).write_bytes(b"%PDF-1.4 orphan")
    key, token = "c" * 32, "d" * 32  # a copy the default store's record names, of a document it does not hold
    (data / "served.json").write_text(json.dumps({"key": key, "dirs": [str(static.resolve())], "docs": {sha: token}}))
    (static / key).mkdir()
    (static / key / f"{token}.pdf").write_bytes(b"%PDF-1.4 deleted meanwhile")
    own = static / "logo.png"
    own.write_bytes(b"not ours")

    at = _app(APP).run()
    assert not at.exception, at.exception
    assert not legacy.exists() and not orphan.exists() and not (static / key / f"{token}.pdf").exists()
    assert own.is_file()
    assert json.loads((data / "served.json").read_text())["docs"] == {}


def _pdf(words: str) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), words, fontsize=11)
    return doc.tobytes(garbage=3, deflate=True)


@pytest.mark.slow
def test_a_linked_copy_is_a_capability_and_leaves_with_delete(tmp_path, monkeypatch, static, embedder):
    from rag.collections import Collections
    from rag.settings import get_settings
    from rag.store.store import Store

    data = tmp_path / "data"
    monkeypatch.setenv("RAG_STORE", str(data))
    Collections(data).create("Plant B")
    pdf = _pdf("The relief valve is checked every week by the shift engineer.")
    ids = {}
    for name in ("default", "Plant B"):
        path = Collections(data).path(name)
        with Store(path, settings=get_settings(store=path), embedder=embedder) as s:
            ids[name] = s.ingest_bytes(pdf, "valves.pdf").document_id
    assert ids["default"] == ids["Plant B"]

    def source(collection: str | None) -> str:
        src = _app(SOURCE_PAGE)
        params = {"doc": ids["default"], "start": "0", "end": "10", "n": "1", "page": "1"}
        if collection:
            params["collection"] = collection
        src.query_params.update(params)
        src.run()
        assert not src.exception, src.exception
        caption = " ".join(c.value for c in src.caption)
        m = re.search(r"\(/app/static/([0-9a-f]{32}/[0-9a-f]{32}\.pdf)#page=1\)", caption)
        assert m, caption
        return m.group(1)

    here, there = source(None), source("Plant B")
    assert here != there and (static / here).is_file() and (static / there).is_file()  # one URL per collection
    assert ids["default"][:16] not in here

    docs = _app(DOCS_PAGE).run()
    docs.button(key="delete").click().run()
    docs.button(key="confirm-delete").click().run()  # Delete asks first (issue 29)
    assert not docs.exception, docs.exception
    assert any("valves.pdf: deleted" in i.value for i in docs.info)
    assert not (static / here).exists() and (static / there).is_file()  # the app's Delete: gone from default only

    app = _app(APP)
    app.query_params["collection"] = "Plant B"
    app.run()
    app.checkbox(key="confirm_delete_collection").check()
    app.button(key="delete_collection").click().run()
    assert not app.exception, app.exception
    assert not (static / there.split("/")[0]).exists()  # the sidebar's collection removal
