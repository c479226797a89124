"""ui.services: what the pages share (review 2026-12-01, defect 3: the embedder follows the session's collection)."""

from __future__ import annotations

from dataclasses import dataclass

from fakes import HashEmbedder

from rag.collections import Collections
from rag.settings import get_settings
from rag.store import store as store_module
from rag.store.store import Store


@dataclass
class _Encoder(HashEmbedder):
    key: str = ""


def _script():
    import streamlit as st

    from ui import services

    services.init_state()
    first = services.embedder()
    services.switch_collection("floaty")
    st.write(f"{first.key}|{services.embedder().key}")


def test_the_embedder_follows_the_collection(tmp_path, monkeypatch):
    """Two collections whose stores use different encoders: after switching, the Evaluation page's embedder is the
    new store's (it was a cache_resource without the collection: the first store's encoder stayed)."""
    from streamlit.testing.v1 import AppTest

    encoders = {"minilm": _Encoder(key="minilm"), "minilm-int8": _Encoder(key="minilm-int8")}
    monkeypatch.setattr(store_module, "get_embedder", lambda batch_size=None, encoder=None: encoders[encoder])
    data = tmp_path / "data"
    monkeypatch.setenv("RAG_STORE", str(data))
    monkeypatch.delenv("RAG_COLLECTION", raising=False)
    Store(data, settings=get_settings(store=data, encoder="minilm-int8")).close()
    other = Collections(data).create("floaty").path
    Store(other, settings=get_settings(store=other, encoder="minilm")).close()
    at = AppTest.from_function(_script, default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.markdown[0].value == "minilm-int8|minilm"


def test_every_page_says_why_the_store_cannot_open_and_stops(tmp_path, monkeypatch):
    """services.store_or_stop, each page's first step: the store's error (naming it) in an error box, nothing
    raised, nothing else of the page drawn."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from rag.errors import StoreError
    from ui import services
    from ui.format import md_escape

    monkeypatch.setenv("RAG_STORE", str(tmp_path / "data"))
    monkeypatch.delenv("RAG_COLLECTION", raising=False)
    bad = f"cannot open the store at {tmp_path / 'data'}: file is not a database"

    def broken(path: str) -> Store:
        raise StoreError(bad)

    monkeypatch.setattr(services, "_store", broken)
    for page in ("app_pages/0_Chat.py", "app_pages/1_Documents.py", "app_pages/2_Source.py",
                 "app_pages/3_Evaluation.py"):
        at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / page), default_timeout=60).run()
        assert not at.exception, (page, at.exception)
        assert [e.value for e in at.error] == [md_escape(bad)], page  # shown as written, not as Markdown
