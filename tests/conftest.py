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


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2, loaded once for the whole test session."""
    from rag.index.embed import get_embedder

    return get_embedder()


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
