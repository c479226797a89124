"""Shared fixtures: the shared corpus (skipped cleanly when absent) and real models loaded once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("RAG_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
CASES = SHARED / "cases"


@pytest.fixture(scope="session", autouse=True)
def static_dir(tmp_path_factory) -> Path:
    """Served copies of PDFs (:mod:`rag.served`) that the app's pages publish under AppTest go to a temporary
    static folder (``RAG_STATIC_DIR``), never the repository's ``static/`` (which the app sweeps at start). The
    browser tests' servers publish into the folder Streamlit serves, ``<repo>/static``, as the app does."""
    mp = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("static")
    mp.setenv("RAG_STATIC_DIR", str(folder))
    yield folder
    mp.undo()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def corpus_dir(shared_dir) -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def cases_dir(shared_dir) -> Path:
    if not CASES.is_dir():
        pytest.skip(f"shared cases not found at {CASES}")
    return CASES


from rag.index import embed as _embed  # noqa: E402

#: The real loader, taken before any test patches ``rag.index.embed``: the session's embedder was once first asked
#: for inside a module whose fixture had put the fake in its place, and every later "real" test got the fake
#: (a CLI search found 27 of 48 needles; CI, 2026-12-01).
_REAL_LOAD_EMBEDDER = _embed.load_embedder


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2, loaded once for the whole test session (a test using it is marked ``slow``)."""
    return _REAL_LOAD_EMBEDDER()


@pytest.fixture(scope="session")
def gguf_path():
    """The real default 0.5B GGUF (provisioned by `make test`)."""
    from rag.models import QWEN_05B, require_model
    from rag.settings import get_settings

    return require_model(get_settings().models_dir / QWEN_05B.file_name)


@pytest.fixture(scope="session")
def hash_embedder():
    """A deterministic fake embedder (:class:`fakes.HashEmbedder`) for the store's plumbing: no model loaded."""
    from fakes import HashEmbedder

    return HashEmbedder()


def use_fake_embedder(mp: pytest.MonkeyPatch, emb) -> None:
    """Make every store opened without an embedder (the CLI's, the app's, the benchmarks') embed with ``emb``:
    :func:`rag.index.embed.get_embedder` / ``load_embedder`` replaced where they are used. The store still
    stamps the encoder its settings name, so the CLI reopens it without a mismatch."""
    from rag.evaluation import runner
    from rag.index import embed
    from rag.store import store

    def fake(*args, **kwargs):
        return emb

    for module, name in ((embed, "get_embedder"), (embed, "load_embedder"), (store, "get_embedder"),
                         (runner, "get_embedder")):
        mp.setattr(module, name, fake)


@pytest.fixture
def fake_embedder(monkeypatch, hash_embedder):
    """The :class:`fakes.HashEmbedder` for this test's stores (:func:`use_fake_embedder`): no model loaded."""
    use_fake_embedder(monkeypatch, hash_embedder)
    return hash_embedder


@pytest.fixture(scope="module")
def fake_embedder_module(hash_embedder):
    """:func:`fake_embedder` for a whole module (its module-scoped stores are built with the fake too)."""
    with pytest.MonkeyPatch.context() as mp:
        use_fake_embedder(mp, hash_embedder)
        yield hash_embedder


@pytest.fixture
def fake_generator(monkeypatch):
    """A scripted :class:`fakes.FakeGenerator` in place of the GGUF for every answer of the test (the CLI, the
    app and the library alike): replaces :func:`rag.answer.pipeline.get_default_generator`, the one generator
    seam. Set ``.reply`` (or ``.stream``) to script it."""
    from fakes import FakeGenerator

    from rag.answer import pipeline

    gen = FakeGenerator()
    monkeypatch.setattr(pipeline, "get_default_generator", lambda settings=None: gen)
    return gen


# --------------------------------------------------------------------------- the slow marker, true to its word

_MARK_SLOW = "mark it @pytest.mark.slow or use the fakes (tests/fakes.py, the fake_embedder / fake_generator fixtures)"


def pytest_collection_modifyitems(config, items):
    """A test not marked ``slow`` may not ask for the real embedder (issue 23): ``make test-fast`` loads no model."""
    bad = [i.nodeid for i in items if "embedder" in getattr(i, "fixturenames", ()) and i.get_closest_marker("slow") is None]
    if bad:
        raise pytest.UsageError("tests not marked slow ask for the real embedder; " + _MARK_SLOW + ":\n  "
                                + "\n  ".join(bad))


@pytest.fixture(autouse=True)
def _fast_tests_load_no_model(request, monkeypatch):
    """In a test not marked ``slow``, loading a real model (the embedder, a GGUF, a cross-encoder) fails with what to
    do: the marker says "loads a real model", and this keeps it true (issue 23)."""
    if request.node.get_closest_marker("slow") is not None:
        if "embedder" in request.fixturenames:  # the real embedder asked for is the one every store gets, even in a
            # module whose module-scoped stores patched in the fake (the CLI then embedded questions with the fake
            # over a store embedded with the real one, and refused: CI, 2026-12-01)
            use_fake_embedder(monkeypatch, request.getfixturevalue("embedder"))
        return
    from rag.answer import generate
    from rag.index import embed, rerank

    def refuse(what):
        def load(*args, **kwargs):
            raise AssertionError(f"{request.node.nodeid} loads {what} but is not marked slow: {_MARK_SLOW}")
        return load

    real_require = generate.require_model

    def require_and_refuse(path):
        real_require(path)  # a missing or corrupt file still gets its ModelError, named fix and all
        if Path(path).stat().st_size > 1 << 20:  # a real model (a few bytes of "GGUF" are a test's broken file)
            refuse(f"the GGUF {path}")()

    monkeypatch.setattr(embed, "_embedders", {})  # nothing a slow test loaded earlier is handed out
    monkeypatch.setattr(embed, "load_embedder", refuse("the real embedder"))
    monkeypatch.setattr(generate, "_cache", {})
    monkeypatch.setattr(generate, "require_model", require_and_refuse)
    monkeypatch.setattr(rerank.Reranker, "__init__", refuse("a cross-encoder"))
