"""The shared corpora the benchmarks run on, and a store holding one.

``<shared>/corpus`` holds two development corpora (the shared folder: ``--shared``, else settings ``shared``,
env ``RAG_SHARED``, default ``../shared``): ``course`` (13 Markdown course chapters, ``dev_questions.jsonl``,
``dev_ood.jsonl``) and ``pdf-dev`` (8 real PDFs, ``questions.jsonl``, ``ood.jsonl``). Their questions are read by
:func:`rag.evaluation.data.load_questions` (both wordings, line-numbered errors), as ``rag eval`` reads them.

A third corpus takes part in the answer benchmarks (:data:`ANSWER_CORPORA`, issue 39): ``real``, 8 documents of
five formats (Markdown, DOCX, HTML, PPTX) of ``<shared>/corpus/real`` with 40 questions and 10 near out-of-domain
ones written by us, kept in this package (:data:`QUESTIONS_DIR`: ``real.jsonl``, ``real_ood.jsonl``, answer keys
in the rows); the documents stay in the shared folder and are read from there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rag.errors import ExtractionError
from rag.evaluation.data import EvalInputError, EvalQuery, expand_queries, load_questions
from rag.evaluation.metrics import collapse_whitespace, first_hit_rank
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.settings import get_settings
from rag.store.store import Store
from rag.tokens import count_tokens
from rag.types import DocStatus

#: The shared corpora (``<shared>/corpus``): the 13 Markdown course chapters and the 8 real PDFs of ``pdf-dev``.
CORPORA = ("course", "pdf-dev")
#: The corpora of the answer benchmarks (``bench answers``, issue 39): :data:`CORPORA` and ``real``.
ANSWER_CORPORA = (*CORPORA, "real")
#: The corpora of ``bench retrieval`` (issue 40: every dev set, both wordings): the same three.
RETRIEVAL_CORPORA = ANSWER_CORPORA
#: Our own question sets over shared documents (``real.jsonl`` + ``real_ood.jsonl`` over ``<shared>/corpus/real``).
QUESTIONS_DIR = Path(__file__).resolve().parent.parent / "questions"


@dataclass(frozen=True)
class Corpus:
    """One shared corpus: its documents folder, questions and out-of-domain JSONL files."""

    name: str
    docs: Path
    questions: Path
    ood: Path
    listed: tuple[str, ...] = ()

    def files(self) -> list[Path]:
        """The corpus's documents: those ``listed`` (paths under :attr:`docs`, the ``real`` corpus: the documents its
        questions name), else every ``.md``, ``.txt``, ``.pdf`` of :attr:`docs`, sorted by name."""
        if self.listed:
            return [self.docs / n for n in self.listed]
        return sorted(p for p in self.docs.iterdir() if p.is_file() and p.suffix.lower() in (".md", ".txt", ".pdf"))


def shared_dir(shared: str | Path | None = None) -> Path:
    """The shared folder: ``shared`` if given, else settings ``shared`` (env ``RAG_SHARED``, default ``../shared``)."""
    return Path(shared) if shared else get_settings().shared


def corpus(name: str = "course", shared: str | Path | None = None) -> Corpus:
    """The corpus ``name`` (one of :data:`ANSWER_CORPORA`).

    Raises :class:`rag.evaluation.data.EvalInputError` naming the path when its questions file or (``real``) its
    documents folder is missing, ``ValueError`` for an unknown name.
    """
    root = shared_dir(shared) / "corpus"
    if name == "course":
        c = Corpus(name, root / "docs", root / "dev_questions.jsonl", root / "dev_ood.jsonl")
    elif name == "pdf-dev":
        c = Corpus(name, root / "pdf-dev" / "docs", root / "pdf-dev" / "questions.jsonl", root / "pdf-dev" / "ood.jsonl")
    elif name == "real":
        qpath = QUESTIONS_DIR / "real.jsonl"
        if not (root / "real").is_dir():
            raise EvalInputError(f"shared corpus 'real' not found: no {root / 'real'} (set --shared or RAG_SHARED)")
        listed = tuple(dict.fromkeys(q.doc for q in load_questions(qpath)))
        c = Corpus(name, root / "real", qpath, QUESTIONS_DIR / "real_ood.jsonl", listed)
    else:
        raise ValueError(f"unknown corpus {name!r}; allowed: {', '.join(ANSWER_CORPORA)}")
    if not c.questions.is_file():
        raise EvalInputError(f"shared corpus {name!r} not found: no {c.questions} (set --shared or RAG_SHARED)")
    return c


# --------------------------------------------------------------------------- a corpus chunked as the product does


@dataclass
class ChunkedCorpus:
    """A shared corpus extracted and chunked as the product does (strategy E, the settings' budget and window).

    ``chunks`` :class:`rag.types.Chunk` in document order (chunk ``i`` is id ``i`` in the throwaway indexes);
    ``queries`` both wordings of every question (:func:`rag.evaluation.data.expand_queries`); ``pages`` physical
    PDF pages (0 for Markdown); ``extract_s`` / ``chunk_s`` wall seconds; ``contents`` the quoted texts.
    """

    name: str
    chunks: list
    queries: list[EvalQuery]
    pages: int = 0
    extract_s: float = 0.0
    chunk_s: float = 0.0
    contents: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.contents = [collapse_whitespace(c.content) for c in self.chunks]

    @property
    def texts(self) -> list[str]:
        """The embedded texts (header + content) of :attr:`chunks`."""
        return [c.text for c in self.chunks]

    def first_rank(self, hit_ids, needle: str, k: int = 20) -> int | None:
        """1-based rank of the first of the top ``k`` chunk ids whose content holds the whole needle
        (:func:`rag.evaluation.metrics.first_hit_rank`), ``None`` if none does."""
        return first_hit_rank([self.contents[int(i)] for i in list(hit_ids)[:k]], needle)


def load_chunked(name: str, settings=None, shared: str | Path | None = None) -> ChunkedCorpus:
    """Extract and chunk one shared corpus (:data:`CORPORA`); a file that cannot be read is left out.

    Raises :class:`rag.evaluation.data.EvalInputError` when the corpus is absent.
    """
    s = settings or get_settings()
    c = corpus(name, shared)
    t0 = time.perf_counter()
    docs = []
    for f in c.files():
        try:
            docs.append(extract_bytes(f.read_bytes(), f.name))
        except ExtractionError:
            continue
    t1 = time.perf_counter()
    chunks = [ch for d in docs for ch in chunk_document(d, "E", budget_chars=s.chunk_budget_chars,
                                                       overlap_chars=s.overlap_chars,
                                                       window_tokens=s.encoder_window_tokens,
                                                       count_tokens=count_tokens)]
    t2 = time.perf_counter()
    return ChunkedCorpus(name, chunks, expand_queries(load_questions(c.questions)),
                         pages=sum(d.page_count or 0 for d in docs), extract_s=t1 - t0, chunk_s=t2 - t1)


# --------------------------------------------------------------------------- a store holding a corpus


def ingest_missing(store: Store, files: Iterable[Path], log: Callable[[str], None] | None = None) -> list:
    """Ingest every file of ``files`` whose name is not already a ready document of ``store``.

    Returns the ingest results (``status``, ``chunk_count``, ...) of the files
    ingested now; ``log`` gets one line per file.
    """
    have = {d.name for d in store.documents() if d.status == DocStatus.READY}
    results = []
    for p in files:
        if p.name not in have:
            r = store.ingest_path(p)
            results.append(r)
            if log:
                log(f"  ingest {p.name}: {r.status}")
    return results


def ensure_corpus_store(store_dir: Path, files: Iterable[Path], settings, log: Callable[[str], None] | None = None) -> Store:
    """The store at ``store_dir`` (created if missing) holding every file of ``files`` (:func:`ingest_missing`).

    A second run reuses the store. The caller closes it.
    """
    store = Store(store_dir, settings=settings)
    ingest_missing(store, files, log)
    return store
