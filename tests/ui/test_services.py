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
