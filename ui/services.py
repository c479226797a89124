"""Streamlit glue shared by the pages: cached resources, session state under guards, citation publishing.

Resources live in ``st.cache_resource`` (one per process, shared by every
browser tab and every rerun): the store of each collection (thread-safe within a
process, see :class:`rag.store.store.Store`) with its embedder. The GGUF
generator is the answer layer's own process-wide one
(:func:`rag.answer.pipeline.get_default_generator`, the one seam the test fakes
replace). Nothing is re-embedded on a rerun: ingest happens only when a new
upload arrives, and the chat only embeds the new question.

The collection (issue 16, :mod:`rag.collections`) is per browser session
(``st.session_state.collection``), starting at ``RAG_COLLECTION`` or the
default one; a link that carries ``?collection=NAME`` (a citation opened in a
new tab) opens that collection.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import streamlit as st

from rag.answer.gate.gates import GATES
from rag.answer.waits import FIRST_WORDS, saved_records
from rag.collections import DEFAULT, Collections
from rag.errors import ModelError, RagError, StoreError
from rag.models import gguf_info, list_gguf
from rag.served import ServedCopies, sweep
from rag.settings import Settings, get_settings
from rag.store.store import Store
from rag.types import DocStatus, MediaType
from ui.format import md_escape
from ui.view.pdf import static_url

MiB = 1024 * 1024
logger = logging.getLogger(__name__)

#: Session-state keys and their initial values (initialised under a guard by :func:`init_state`).
STATE_DEFAULTS: dict[str, Any] = {
    "turns": [],            # chat history: list of ui.chat.Turn, oldest first
    "ingest_log": [],       # Documents page: (level, message) lines of the last uploads
    "ingested_ids": set(),  # Documents page: uploader file ids already handled in this session
    "chat_id": None,        # the saved chat the turns belong to (rag.store.chats), None before the first question
    "pending_versions": [],  # Documents page: uploads under a name already indexed, waiting for replace / keep both
    "my_jobs": {},          # Documents page: job id -> file name of the files this session queued (issue 25)
}


def init_state() -> None:
    """Create the session-state keys this app uses, once per browser session (the collection from the URL or env)."""
    for key, value in STATE_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value.copy() if hasattr(value, "copy") else value
    sweep_served()  # issue 26: once per process, before any page links a served copy
    if "collection" not in st.session_state:
        st.session_state.collection = get_settings().collection or DEFAULT
    wanted = st.query_params.get("collection")
    if wanted and wanted != st.session_state.collection:
        try:
            st.session_state.collection = collections().get(wanted).name
        except StoreError:
            pass


def collections() -> Collections:
    """The collections under the data folder (``settings().store``)."""
    return Collections(settings().store)


def collection_name() -> str:
    """This session's collection; back to the default one when it was deleted or renamed meanwhile."""
    name = st.session_state.get("collection", DEFAULT)
    try:
        return collections().get(name).name
    except StoreError:
        st.session_state.collection = DEFAULT
        return DEFAULT


def switch_collection(name: str) -> None:
    """Make ``name`` this session's collection: a new conversation, no scope, no pending uploads."""
    if name != st.session_state.get("collection"):
        st.session_state.collection = name
        reset_chat()
        st.session_state.pending_versions = []
        st.session_state.ingest_log = []
        st.session_state.pop("scope_docs", None)


def reset_chat() -> None:
    """Start a new conversation (the saved one stays in the store's chats)."""
    st.session_state.turns = []
    st.session_state.chat_id = None


def forget_stores() -> None:
    """Drop every cached store (after a collection was renamed or deleted: its folder moved or went)."""
    _store.clear()


def settings() -> Settings:
    """Settings for this run (``rag.toml``, ``RAG_*`` environment); cheap, read on each rerun."""
    return get_settings()


@st.cache_resource(show_spinner="Opening the document store…")
def _store(path: str):
    return Store(Path(path), get_settings())  # the store picks the encoder its stamp names (issue 18)


def default_min_score() -> float:
    """The answerability cut to start the slider at: ``min_score`` from settings, else the gate's own
    (the shipped model's cut; 0.0 for the distance gate, which has no score)."""
    cfg = settings()
    if cfg.min_score is not None:
        return float(cfg.min_score)
    return GATES[cfg.gate].default_min_score()


def store():
    """The process-wide :class:`rag.store.store.Store` of this session's collection (cached per resolved path)."""
    return _store(str(collections().path(collection_name()).resolve()))


def store_or_stop() -> Store:
    """:func:`store`, or the page shows why it cannot open (a :class:`rag.errors.RagError`'s message, naming the
    store) and stops there: every page's first step."""
    try:
        return store()
    except RagError as e:
        st.error(md_escape(str(e)))
        st.stop()
        raise  # st.stop() raises; this line is never reached


def store_at(path: Path):
    """The process-wide store at ``path`` (another collection's, e.g. to resume its jobs)."""
    return _store(str(Path(path).resolve()))


def embedder():
    """The encoder of this session's collection's store (the one its stamp names,
    :func:`rag.index.embed.encoder_for_store`). Each encoder is loaded once per process by the store
    (:func:`rag.index.embed.get_embedder`); not cached here, so after switching collections the Evaluation page
    embeds with the new store's encoder (review 2026-12-01, defect 3: a ``cache_resource`` without the collection
    kept the first store's)."""
    return store().embedder


def upload_limit_mb() -> int:
    """Largest accepted upload, MiB: the smaller of ``server.maxUploadSize`` and ``settings().max_upload_mb``."""
    return int(min(st.get_option("server.maxUploadSize"), settings().max_upload_mb))


def models() -> list[Path]:
    """The ``*.gguf`` files in ``settings().models_dir``, sorted by name."""
    return list_gguf(settings().models_dir)


def seed_first_words() -> int:
    """Once per process and store: this session's store's saved answers seed the measured first-word times
    (:data:`rag.answer.waits.FIRST_WORDS`), so the first view after a restart already tells this machine's wait."""
    return _seed_first_words(str(store().path.resolve()))


@st.cache_resource(show_spinner=False)
def _seed_first_words(path: str) -> int:
    try:
        return FIRST_WORDS.seed(saved_records(store()))
    except RagError:  # a store whose chats cannot be read: the waits start from the next answer
        return 0


@st.cache_data(show_spinner=False)
def gguf_summary(path: str, mtime: float) -> dict[str, Any]:
    """GGUF metadata of one model file (``rag.models.gguf_info``), cached by path and mtime."""
    try:
        info = gguf_info(Path(path))
    except ModelError as e:
        return {"error": str(e)}
    return {
        "name": info.name,
        "architecture": info.architecture,
        "context_length": info.context_length,
        "chat_template": info.has_chat_template,
        "size_mb": round(info.size_bytes / MiB, 1),
        "known": info.known,
    }


def publish_pdf(doc_id: str) -> str | None:
    """The URL of the indexed PDF ``doc_id``'s served copy in this session's collection (``/app/static/<key>/<token>.pdf``,
    a capability of that collection and publication, :mod:`rag.served`), published now if it was not;
    ``None`` for a document that is not an indexed PDF or has no stored original (the link is not offered)."""
    s = store()
    doc = s.get_document(doc_id)
    if doc is None or doc.status != DocStatus.READY or doc.media_type != MediaType.PDF:
        return None
    try:
        return static_url(ServedCopies(s.path).publish(doc_id, s.original_path(doc_id), settings().static_dir))
    except (OSError, ValueError, StoreError):  # deleted meanwhile, or the static folder cannot be written
        return None


@st.cache_resource(show_spinner=False)
def sweep_served() -> int:
    """Once per server process (app start): remove every served copy no store of this data folder holds
    (:func:`rag.served.sweep`: documents deleted while the app was not running, removed collections, the shared
    ``static/<sha256>.pdf`` copies of the layout before issue 26). Returns the files and folders removed."""

    def indexed(path: Path) -> set[str] | None:
        if not (path / "store.sqlite3").is_file():
            return set()
        try:
            return {d.id for d in _store(str(path.resolve())).documents() if d.status == DocStatus.READY}
        except RagError:  # a store this code cannot open (another encoder, a newer schema): left alone
            return None

    try:
        return sweep(settings().static_dir, [c.path for c in collections().list()], indexed)
    except OSError as e:  # a static folder that cannot be changed must not keep the app from starting
        logger.warning("served copies not swept from %s: %s", settings().static_dir, e)
        return 0
